/**
 * What a stream's completion text costs in tokens, for the rare stream that ends without usage: its data lines are
 * kept as raw bytes (bounded) and only decoded and counted when the count is asked for.
 */
import { countText } from '../metering/estimate';

/**
 * Raw bytes kept per stream before they are boiled down to their text fields: bounds memory per open stream (4 KiB:
 * most streams end with usage and never decode them; at 16 KiB they were a quarter of an open stream's RSS).
 */
const RAW_LIMIT = 4 * 1024;
/** Extracted text waits, uncounted, until this many characters; then it is counted in a batch. */
const COUNT_BATCH = 32_768;

export class StreamedText {
  /** `fields`: matches the JSON string values that are output text (group 1: the raw value); a global RegExp. */
  constructor(private readonly fields: RegExp) {}

  private raw: Buffer | undefined;
  private rawLength = 0;
  private pendingText = '';
  private countedTokens = 0;

  /** Keeps `buf[from, to)`, one data line's payload (whole lines only, so no UTF-8 character is ever split). */
  add(buf: Buffer, from: number, to: number): void {
    // One byte more for a newline between lines, so no pattern matches across two of them.
    const length = to - from + 1;
    if (this.rawLength + length > RAW_LIMIT) this.extract();
    if (length > RAW_LIMIT) return this.extractFrom(buf.toString('utf8', from, to));
    if (this.raw === undefined || this.rawLength + length > this.raw.length) this.grow(this.rawLength + length);
    const raw = this.raw as Buffer;
    buf.copy(raw, this.rawLength, from, to);
    this.rawLength += length;
    raw[this.rawLength - 1] = 0x0a;
  }

  /** Room for `needed` bytes: a short stream holds a small buffer, a long one at most RAW_LIMIT. */
  private grow(needed: number): void {
    const bigger = Buffer.allocUnsafe(Math.min(RAW_LIMIT, Math.max(needed, 2 * (this.raw?.length ?? 512))));
    this.raw?.copy(bigger, 0, 0, this.rawLength);
    this.raw = bigger;
  }

  /** Completion tokens in what was added, counted with our tokenizer. */
  tokens(): number {
    this.extract();
    this.count();
    return this.countedTokens;
  }

  private extract(): void {
    if (this.raw === undefined || this.rawLength === 0) return;
    const text = this.raw.toString('utf8', 0, this.rawLength);
    this.rawLength = 0;
    this.extractFrom(text);
  }

  private extractFrom(text: string): void {
    const fields = this.fields;
    fields.lastIndex = 0;
    for (let m = fields.exec(text); m !== null; m = fields.exec(text)) {
      if (m[1].length > 0) this.pendingText += m[1];
    }
    if (this.pendingText.length >= COUNT_BATCH) this.count();
  }

  private count(): void {
    if (this.pendingText.length === 0) return;
    let text: string;
    try {
      text = JSON.parse(`"${this.pendingText}"`) as string;
    } catch {
      text = this.pendingText;
    }
    this.countedTokens += countText(text);
    this.pendingText = '';
  }
}
