/** The settlement journal: what is recorded and not done survives a reopen; done entries and torn lines do not. */
import { appendFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Journal } from '../../src/metering/journal';
import type { Settlement } from '../../src/store/records/metering';

const settlement = (requestId: string): Settlement => ({
  accountId: 'acc_a',
  keyId: 'key_a',
  requestId,
  model: 'a/b',
  promptTokens: 3,
  completionTokens: 4,
  chargedTokens: 7,
  estimated: false,
  stream: true,
  status: 200,
});

describe('Journal', () => {
  const file = () => join(mkdtempSync(join(tmpdir(), 'tm-journal-')), 'nested', 'journal');

  it('returns what an earlier run recorded and did not confirm', () => {
    const f = file();
    const first = new Journal(f);
    first.record(settlement('r1'));
    first.record(settlement('r2'));
    first.record(settlement('r2'));
    first.done('r1');
    first.close();
    const again = new Journal(f);
    expect(again.unsettled()).toEqual([settlement('r2')]);
    expect(again.has('r2')).toBe(true);
  });

  it('empties the file once nothing is open', () => {
    const f = file();
    const j = new Journal(f);
    j.record(settlement('r1'));
    expect(readFileSync(f, 'utf8')).toContain('"requestId":"r1"');
    j.done('r1');
    expect(readFileSync(f, 'utf8')).toBe('');
    j.close();
    expect(new Journal(f).unsettled()).toEqual([]);
  });

  it('skips a line torn by a crash mid-write and keeps the rest', () => {
    const f = file();
    const j = new Journal(f);
    j.record(settlement('r1'));
    j.close();
    appendFileSync(f, '{"t":"settle","s":{"keyId":"key_a","requestId":"r2"');
    expect(new Journal(f).unsettled()).toEqual([settlement('r1')]);
  });

  it('reads a settlement journalled before accounts as charged to the account that took its key’s id', () => {
    const f = file();
    new Journal(f).close();
    const { accountId: _, ...old } = settlement('r1');
    appendFileSync(f, `${JSON.stringify({ t: 'settle', s: old })}\n`);
    expect(new Journal(f).unsettled()).toEqual([{ ...old, accountId: 'key_a' }]);
  });
});
