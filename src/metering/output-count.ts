/**
 * Our count of an answer's output, for an answer whose upstream reported no usage: short texts counted in place, long
 * ones by the TokenCounter's worker (prompt-counter.ts), so that no answer, however long, holds the event loop.
 */
import { countText } from './estimate';
import type { CountFailure } from './prompt-counter';
import { countInSlices } from './sliced-count';

/** What counts texts: TokenCounter.count, or (tests, tools) the tokenizer in place. */
export type CountTexts = (texts: readonly string[]) => number[] | Promise<number[] | CountFailure>;

/** Counts in place, whatever the length: only where no event loop serves requests. */
export const countInPlace: CountTexts = (texts) => texts.map((text) => countText(text));

/**
 * The tokens of `texts` together. A count the worker could not make (busy, over its budget, closed at shutdown) is
 * made on the main thread in slices (sliced-count.ts): the answer is charged its tokens, never its bytes.
 */
export function countOutput(count: CountTexts, texts: readonly string[]): number | Promise<number> {
  const kept = texts.filter((text) => text.length > 0);
  if (kept.length === 0) return 0;
  const counts = count(kept);
  if (Array.isArray(counts)) return sum(counts);
  return counts.then((result) => (typeof result === 'string' ? countInSlices(kept).then(sum) : sum(result)));
}

/** The sum of token counts, some of them still being made. */
export function addCounts(counts: readonly (number | Promise<number>)[]): number | Promise<number> {
  if (counts.every((n) => typeof n === 'number')) return sum(counts as number[]);
  return Promise.all(counts).then(sum);
}

function sum(counts: readonly number[]): number {
  let n = 0;
  for (const c of counts) n += c;
  return n;
}
