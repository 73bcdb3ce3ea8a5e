/**
 * A prompt's size as the pipeline sees it on every endpoint: a bound that costs next to nothing, a floor for next to
 * nothing more, and the tokenizer's counts put in place where an answer depends on them (made by the TokenCounter).
 */

/**
 * `tokens`: the bound until `counted`, then the count. `longest`: the tokens the largest single prompt puts in the
 * context window (a batch of prompts or inputs is many windows); absent when the whole prompt is one window.
 */
export interface PromptMeasure {
  tokens: number;
  readonly exact: boolean;
  readonly longest?: number;
  /**
   * At most what the tokenizer's count of the window (`longest ?? tokens`) can be, from a cheap pass over the text,
   * exact enough to tell whether the count would exceed `limit` (a pass that already says so stops early).
   */
  floor(limit: number): number;
  /** The texts the tokenizer has to count, in the order `counted` takes their counts. */
  texts(): string[];
  /** Puts the tokenizer's counts of `texts()` in place of the bound. */
  counted(counts: readonly number[]): void;
}

/** A size per text: its UTF-8 bytes (the bound), its tokens, its floor. */
export type Size = (text: string) => number;

/** The texts a walk of the prompt sizes, in order. */
export function textsOf(walk: (size: Size) => unknown): string[] {
  const texts: string[] = [];
  walk((text) => {
    texts.push(text);
    return 0;
  });
  return texts;
}

/** A size that answers with `counts`, one after the other: the same walk again, with the tokenizer's counts. */
export function replay(counts: readonly number[]): Size {
  let i = 0;
  return () => counts[i++];
}

/** o200k's longest token, in bytes (test/metering/prompt-measure.test.ts reads it from the vocabulary). */
export const LONGEST_TOKEN_BYTES = 128;

/** No token covers more than LONGEST_TOKEN_BYTES bytes, nor so many UTF-16 units: a floor for nothing. */
export function lengthFloor(text: string): number {
  return Math.ceil(text.length / LONGEST_TOKEN_BYTES);
}

/** Words are counted in at most this many characters of a text (a few milliseconds): fewer words, still a floor. */
const WORD_SCAN_CHARS = 1 << 20;

/**
 * At most what o200k makes of `text`, in one pass: the length floor, or the words that start with a letter or digit
 * after whitespace (each starts a pre-token of its own). Counting words stops once they exceed `limit`.
 */
export function tokenFloor(text: string, limit = Infinity): number {
  let words = 0;
  let afterSpace = true;
  const end = Math.min(text.length, WORD_SCAN_CHARS);
  for (let i = 0; i < end && words <= limit; i++) {
    const c = text.charCodeAt(i);
    if (c === 32 || (c >= 9 && c <= 13)) afterSpace = true;
    else {
      if (afterSpace && ((c >= 48 && c <= 57) || ((c | 32) >= 97 && (c | 32) <= 122))) words++;
      afterSpace = false;
    }
  }
  return Math.max(words, lengthFloor(text));
}

/** A prompt's floor by `walk`: the length floor, and only when that does not exceed `limit`, the word floor. */
export function floorOf(walk: (size: Size) => number, limit: number): number {
  const floor = walk(lengthFloor);
  return floor > limit ? floor : walk((text) => tokenFloor(text, limit));
}

/**
 * A prompt measured by one walk over its texts: the byte bound at first, the tokenizer's counts put in place when an
 * answer depends on them. `walk` sizes each text with the size it is given and returns the total.
 */
export class WalkedPrompt implements PromptMeasure {
  tokens: number;
  exact = false;

  /** Throws RangeError for a body nested too deeply to serialize. */
  constructor(private readonly walk: (size: Size) => number) {
    this.tokens = walk((text) => Buffer.byteLength(text));
  }

  floor(limit: number): number {
    return floorOf(this.walk, limit);
  }

  texts(): string[] {
    return textsOf(this.walk);
  }

  counted(counts: readonly number[]): void {
    this.tokens = this.walk(replay(counts));
    this.exact = true;
  }
}
