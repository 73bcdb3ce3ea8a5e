/**
 * The JSON tap's property: however the network cuts an answer into reads (inside a key, a string, an escape, a UTF-8
 * character), the client gets the answer with only its top-level model replaced, and the meter the same usage.
 */
import fc from 'fast-check';
import { JsonTap } from '../../src/proxy/json-tap';
import { modelValue } from '../../src/catalog/models';

const CLIENT = 'client/m';

function feed(bytes: Buffer, cuts: number[]) {
  const tap = new JsonTap(modelValue(CLIENT));
  const out: Buffer[] = [];
  let from = 0;
  for (const cut of [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b)) {
    out.push(tap.push(bytes.subarray(from, cut)));
    from = cut;
  }
  out.push(tap.push(bytes.subarray(from)));
  return { client: Buffer.concat(out).toString('utf8'), usage: tap.usage, wellFormed: tap.wellFormed };
}

const text = fc.string({ unit: fc.constantFrom('a', 'é', '😀', '"', '\\', '{', '}', '[', ']', ',', ':', 'model', 'usage'), maxLength: 10 });
const answer = fc.record({
  vllmOrder: fc.boolean(),
  upstreamModel: text,
  vectors: fc.array(
    fc.oneof(
      fc.array(
        fc.integer().map((i) => i / 1024),
        { maxLength: 5 },
      ),
      text,
    ),
    { maxLength: 4 },
  ),
  nested: fc.dictionary(text, fc.oneof(text, fc.integer()), { maxKeys: 3 }),
  usage: fc.option(fc.record({ prompt_tokens: fc.nat(), total_tokens: fc.nat() }), { nil: undefined }),
  pretty: fc.boolean(),
});

describe('JsonTap', () => {
  it('gives the client the same answer, model replaced, and the meter the same usage, however the answer is cut', () => {
    fc.assert(
      fc.property(answer, fc.array(fc.nat(), { maxLength: 12 }), (a, cuts) => {
        const data = a.vectors.map((embedding, index) => ({
          index,
          object: 'embedding',
          embedding,
          meta: { model: 'inner', ...a.nested },
        }));
        const body = a.vllmOrder
          ? { id: 'e', object: 'list', model: a.upstreamModel, data, usage: a.usage }
          : { object: 'list', data, model: a.upstreamModel, usage: a.usage };
        const raw = Buffer.from(JSON.stringify(body, null, a.pretty ? 2 : undefined));
        const got = feed(raw, cuts);
        expect(JSON.parse(got.client)).toEqual({ ...body, model: CLIENT });
        expect(got.usage).toEqual(a.usage);
        expect(got.wellFormed).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('passes an answer that already names the client id through unchanged, its usage read', () => {
    const raw = Buffer.from(JSON.stringify({ model: CLIENT, data: [[1, 2]], usage: { prompt_tokens: 3 } }));
    const tap = new JsonTap(modelValue(CLIENT));
    expect(Buffer.concat([tap.push(raw)]).toString()).toBe(raw.toString());
    expect(tap.usage).toEqual({ prompt_tokens: 3 });
  });

  it('says an answer that does not open as an object is not well formed', () => {
    expect(feed(Buffer.from('[1,2]'), []).wellFormed).toBe(false);
    expect(feed(Buffer.from('  <html>'), []).wellFormed).toBe(false);
  });
});
