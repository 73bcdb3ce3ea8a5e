/**
 * What a stream's completion text costs in tokens, for the rare stream that ends without usage: its data lines are
 * kept as raw bytes (bounded), boiled down to their text fields, and counted only when the count is asked for (a long
 * text by the count worker, off the event loop). Echoed prompt text (completions' `echo`) is not output: it is skipped.
 */
import { addCounts, countInPlace, countOutput, type CountTexts } from '../metering/output-count';
import type { TextFields } from './pipeline/endpoint';

/**
 * Raw bytes kept per stream before they are boiled down to their text fields: bounds memory per open stream (4 KiB:
 * most streams end with usage and never decode them; at 16 KiB they were a quarter of an open stream's RSS).
 */
const RAW_LIMIT = 4 * 1024;
/**
 * Extracted text waits, uncounted, until this many characters; then it goes to the counter as one batch (past the
 * in-place limit, to the worker), so that a long stream's memory stays bounded and most streams are never counted.
 */
const COUNT_BATCH = 256 * 1024;

export interface StreamedTextOptions {
  /** Counts a batch of text: TokenCounter.count (long texts off the event loop). Default: in place. */
  count?: CountTexts;
  /** Characters of decoded text at the start of the stream that echo the prompt: not output, skipped. */
  skipChars?: number;
}

export class StreamedText {
  private readonly count: CountTexts;
  private skip: number;
  private raw: Buffer | undefined;
  private rawLength = 0;
  /** Raw JSON string content not yet counted (escapes kept). */
  private pendingText = '';
  /** Counts of the batches sent already. */
  private readonly batches: (number | Promise<number>)[] = [];

  constructor(
    private readonly fields: TextFields,
    options: StreamedTextOptions = {},
  ) {
    this.count = options.count ?? countInPlace;
    this.skip = options.skipChars ?? 0;
  }

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

  /** Completion tokens in what was added, counted with our tokenizer (a promise while the worker counts). */
  tokens(): number | Promise<number> {
    this.extract();
    this.flush();
    return addCounts(this.batches);
  }

  private extract(): void {
    if (this.raw === undefined || this.rawLength === 0) return;
    const text = this.raw.toString('utf8', 0, this.rawLength);
    this.rawLength = 0;
    this.extractFrom(text);
  }

  /** Adds the text fields' values in `text` (lines apart by newlines), an alias left out where its field is there. */
  private extractFrom(text: string): void {
    const { pattern, alias } = this.fields;
    pattern.lastIndex = 0;
    /** Where the current line ends, and the alias's value on it (kept until the line shows whether its field is there). */
    let lineEnd = -1;
    let aliasValue: string | undefined;
    let fieldSeen = false;
    for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
      if (m.index > lineEnd) {
        if (aliasValue !== undefined && !fieldSeen) this.put(aliasValue);
        aliasValue = undefined;
        fieldSeen = false;
        lineEnd = text.indexOf('\n', m.index);
        if (lineEnd === -1) lineEnd = text.length;
      }
      const [, name, value] = m;
      if (alias && name === alias.name) aliasValue = value;
      else {
        if (alias && name === alias.of) fieldSeen = true;
        this.put(value);
      }
    }
    if (aliasValue !== undefined && !fieldSeen) this.put(aliasValue);
    if (this.pendingText.length >= COUNT_BATCH) this.flush();
  }

  /** One raw value of output text, less what echoes the prompt. */
  private put(value: string): void {
    if (value.length === 0) return;
    if (this.skip > 0) {
      // Without an escape, the raw value is the text itself: a megabyte echo is skipped without decoding it.
      if (value.length <= this.skip && value.indexOf('\\') === -1) {
        this.skip -= value.length;
        return;
      }
      const decoded = decode(value);
      if (decoded.length <= this.skip) {
        this.skip -= decoded.length;
        return;
      }
      value = JSON.stringify(decoded.slice(this.skip)).slice(1, -1);
      this.skip = 0;
    }
    this.pendingText += value;
  }

  /** Sends the pending text to be counted. */
  private flush(): void {
    if (this.pendingText.length === 0) return;
    const text = decode(this.pendingText);
    this.pendingText = '';
    this.batches.push(countOutput(this.count, [text]));
  }
}

/** A JSON string's raw content as the text it spells (as it is, should it not parse). */
function decode(raw: string): string {
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return raw;
  }
}
