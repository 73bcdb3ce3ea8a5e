/** The models file: YAML, validated at start; a bad entry is named with its field. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildCatalog, loadCatalog, ModelsFileError } from '../src/models';

const defaults = { upstreamUrl: 'http://up:8000/v1' };

function fileWith(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'tm-models-'));
  const f = join(dir, 'models.yaml');
  writeFileSync(f, text);
  return f;
}

describe('models file', () => {
  it('loads the shipped config/models.yaml', () => {
    const catalog = loadCatalog('config/models.yaml', defaults);
    expect(catalog.list().length).toBeGreaterThan(0);
    for (const m of catalog.list()) expect(m.id).toMatch(/^[^/]+\/.+$/);
  });

  it('defaults upstream_model to the id, upstream_url to UPSTREAM_URL, weights to 1', () => {
    const c = loadCatalog(fileWith('models:\n  - id: a/b\n    context_length: 100\n    max_output_tokens: 10\n'), defaults);
    expect(c.get('a/b')).toEqual({
      id: 'a/b',
      upstreamModel: 'a/b',
      upstreamUrl: 'http://up:8000/v1',
      contextLength: 100,
      maxOutputTokens: 10,
      inputWeight: 1,
      outputWeight: 1,
      streamIncludeUsage: true,
    });
    expect(c.get('a/c')).toBeUndefined();
  });

  it.each([
    ['models[0].context_length (x/y)', { models: [{ id: 'x/y', max_output_tokens: 5 }] }],
    ['models[0].id', { models: [{ id: 'no-vendor', context_length: 10, max_output_tokens: 5 }] }],
    [
      'models[1].upstream_url (x/z)',
      {
        models: [
          { id: 'x/y', context_length: 10, max_output_tokens: 5 },
          { id: 'x/z', upstream_url: 'nope', context_length: 10, max_output_tokens: 5 },
        ],
      },
    ],
    ['models', { models: [] }],
    [
      'listed twice',
      {
        models: [
          { id: 'x/y', context_length: 10, max_output_tokens: 5 },
          { id: 'x/y', context_length: 10, max_output_tokens: 5 },
        ],
      },
    ],
    ['exceeds context_length', { models: [{ id: 'x/y', context_length: 10, max_output_tokens: 50 }] }],
  ])('refuses a bad file, naming %s', (where, content) => {
    expect(() => buildCatalog(content, defaults)).toThrow(ModelsFileError);
    expect(() => buildCatalog(content, defaults)).toThrow(where);
  });

  it('refuses unreadable and non-YAML files in one line', () => {
    expect(() => loadCatalog('/nonexistent/models.yaml', defaults)).toThrow(/cannot read: ENOENT/);
    expect(() => loadCatalog(fileWith('models: [a, b\n'), defaults)).toThrow(/not valid YAML/);
  });
});
