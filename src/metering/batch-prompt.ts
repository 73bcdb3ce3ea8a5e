/**
 * The prompt of a batch (completions' prompts, embeddings' inputs): strings bound by their UTF-8 bytes until an answer
 * depends on the tokenizer's count, token arrays exact from the start. Each item is its own context window.
 */
import { floorOf, replay, textsOf, type PromptMeasure, type Size } from './prompt-measure';

export type BatchItem = string | readonly number[];

export class BatchPromptSize implements PromptMeasure {
  /** Tokens of the whole batch (what is charged). */
  tokens = 0;
  /** Tokens of its largest item (what must fit the context window). */
  longest = 0;
  exact = false;

  /** `extra`: text every item carries too (a completion's suffix); `carried`: tokens the batch brings from elsewhere. */
  constructor(
    private readonly items: readonly BatchItem[],
    private readonly extra = '',
    private readonly carried = 0,
  ) {
    this.longest = this.measure((text) => Buffer.byteLength(text));
    this.exact = items.every((item) => typeof item !== 'string') && extra.length === 0;
  }

  floor(limit: number): number {
    const tokens = this.tokens;
    const floor = floorOf((size) => this.measure(size), limit);
    this.tokens = tokens;
    return floor;
  }

  /** The suffix first (once), then the string items in order. */
  texts(): string[] {
    return textsOf((size) => this.measure(size));
  }

  counted(counts: readonly number[]): void {
    this.longest = this.measure(replay(counts));
    this.exact = true;
  }

  /** Sets `tokens` by `size`; returns the largest item's window. */
  private measure(size: Size): number {
    const extra = this.extra.length > 0 ? size(this.extra) : 0;
    let total = this.carried;
    let longest = 0;
    for (const item of this.items) {
      const n = (typeof item === 'string' ? size(item) : item.length) + extra;
      total += n;
      if (n > longest) longest = n;
    }
    this.tokens = total;
    return longest + this.carried;
  }
}

/**
 * A batch field (`prompt`, `input`) as its items: one string, strings, one token array, or token arrays (validated not
 * to mix: an array whose first element is a number is one token array).
 */
export function batchItems(value: string | readonly (string | number | readonly number[])[]): BatchItem[] {
  if (typeof value === 'string') return [value];
  if (value.length > 0 && typeof value[0] === 'number') return [value as readonly number[]];
  return value as BatchItem[];
}
