/**
 * The prompt of a batch (completions' prompts, embeddings' inputs): strings bound by their UTF-8 bytes until an answer
 * depends on the tokenizer's count, token arrays exact from the start. Each item is its own context window.
 */
import { countText } from './estimate';

export type BatchItem = string | readonly number[];

export class BatchPromptSize {
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
    this.measure((text) => Buffer.byteLength(text));
    this.exact = items.every((item) => typeof item !== 'string') && extra.length === 0;
  }

  /** The tokenizer's count (computed once). */
  count(): number {
    if (!this.exact) {
      this.measure(countText);
      this.exact = true;
    }
    return this.tokens;
  }

  private measure(size: (text: string) => number): void {
    const extra = this.extra.length > 0 ? size(this.extra) : 0;
    let total = this.carried;
    let longest = 0;
    for (const item of this.items) {
      const n = (typeof item === 'string' ? size(item) : item.length) + extra;
      total += n;
      if (n > longest) longest = n;
    }
    this.tokens = total;
    this.longest = longest + this.carried;
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
