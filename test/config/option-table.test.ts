/**
 * The option table is the one place an option is written: each has one name (its variable is that name in
 * UPPER_SNAKE_CASE, its resolved value sits under it), and the manual's tables (docs/configuration.md, and the
 * options table of docs/library.md) list exactly the table's options, with the table's defaults.
 */
import { envName, loadConfig } from '../../src/config/config';
import { OPTIONS, type OptionName } from '../../src/config/option-table';
import type { TokenmeterOptions } from '../../src/config/option-types';
import { LIBRARY_PARTS, meterConfig, meterOptionsSchema, parseOptions } from '../../src/config/options';
import { readDoc, tableRows } from '../helpers/markdown';

const names = Object.keys(OPTIONS) as OptionName[];
const meterNames = names.filter((name) => OPTIONS[name].scope === 'meter');
const serverNames = names.filter((name) => OPTIONS[name].scope === 'server');
const SERVER_MARK = '**server only:**';

/** The rows of the table headed `header` on the manual's page `path`. */
const docTable = (path: string, header: string): string[][] => tableRows(readDoc(path), header, path);

const codeNames = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]);

describe('the option table', () => {
  it.each(names)('names %s once: its variable is its name in UPPER_SNAKE_CASE', (name) => {
    expect(OPTIONS[name].env).toBe(envName(name));
  });

  it('resolves each option under its one name: nothing is renamed on the way to the code', () => {
    expect(Object.keys(loadConfig({})).sort()).toEqual([...names].sort());
    expect(Object.keys(meterConfig({}).config).sort()).toEqual([...meterNames].sort());
  });

  it('gives createTokenmeter the meter options and its own parts, and refuses the process’s own', () => {
    expect(Object.keys(meterOptionsSchema.shape).sort()).toEqual([...meterNames, ...LIBRARY_PARTS].sort());
    for (const name of serverNames) {
      expect(() => parseOptions(meterOptionsSchema, { [name]: OPTIONS[name].default })).toThrow(
        `invalid tokenmeter option ${name}: is not a tokenmeter option`,
      );
    }
  });

  it('types createTokenmeter’s options from the table', () => {
    const options: TokenmeterOptions = { bodyLimit: '4mb', logLevel: 'warn', accountRegistration: 'open', upstreamTimeoutMs: 1 };
    // @ts-expect-error the process's own options are not the library's
    const server: TokenmeterOptions = { port: 8080 };
    // @ts-expect-error a size is a number or a string
    const size: TokenmeterOptions = { bodyLimit: true };
    expect(meterConfig(options).config.bodyLimit).toBe(4 * 1024 * 1024);
    expect([server, size]).toHaveLength(2);
  });
});

describe('the manual’s configuration tables', () => {
  const rows = docTable('docs/configuration.md', 'variable');
  const byVariable = new Map(rows.map((row) => [codeNames(row[0])[0], row]));

  it('has one row per variable in docs/configuration.md, and no row that names none', () => {
    const variables = rows.map((row) => codeNames(row[0]));
    expect(variables.every((v) => v.length === 1)).toBe(true);
    expect(variables.flat().sort()).toEqual(names.map((name) => OPTIONS[name].env).sort());
  });

  it.each(names)('shows the default of %s in its row, and whether it is the server’s alone', (name) => {
    const option = OPTIONS[name];
    const [, fallback, meaning] = byVariable.get(option.env) ?? [];
    expect(fallback).toBe(option.default === undefined ? 'unset' : `\`${String(option.default)}\``);
    expect(meaning?.startsWith(SERVER_MARK)).toBe(option.scope === 'server');
  });

  it('lists every option of createTokenmeter in docs/library.md’s options table, and no other name', () => {
    const listed = docTable('docs/library.md', 'option').map((row) => codeNames(row[0]));
    expect(listed.every((row) => row.length > 0)).toBe(true);
    expect(listed.flat().sort()).toEqual([...meterNames, ...LIBRARY_PARTS].sort());
  });
});
