/** The prompt's floor: never above what the tokenizer counts, and its constant read from o200k's vocabulary. */
import fc from 'fast-check';
import o200k from 'gpt-tokenizer/bpeRanks/o200k_base';
import { countText } from '../../src/metering/estimate';
import { LONGEST_TOKEN_BYTES, tokenFloor } from '../../src/metering/prompt-measure';

describe('token floor', () => {
  it('takes o200k’s longest token from its vocabulary', () => {
    let longest = 0;
    for (const token of o200k as readonly (string | readonly number[] | undefined)[]) {
      if (token === undefined) continue;
      longest = Math.max(longest, typeof token === 'string' ? Buffer.byteLength(token) : token.length);
    }
    expect(longest).toBe(LONGEST_TOKEN_BYTES);
  });

  it('is never above the tokenizer’s count, for any text', () => {
    const words = fc
      .array(fc.tuple(fc.constantFrom('a', 'Hi', '42', "it's", '.\n/', '/', '—', 'x1', '語'), fc.constantFrom(' ', '\n', '\t', '', '  ')))
      .map((parts) => parts.map(([w, s]) => w + s).join(''));
    const text = fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 400 }),
      fc.string({ unit: 'binary' }),
      fc.lorem({ maxCount: 80 }),
      words,
    );
    fc.assert(
      fc.property(text, (t) => {
        expect(tokenFloor(t)).toBeLessThanOrEqual(countText(t));
      }),
      { numRuns: 500 },
    );
    expect(tokenFloor('one two three 4 5')).toBe(5);
    expect(tokenFloor(' '.repeat(1280))).toBe(10);
  });
});
