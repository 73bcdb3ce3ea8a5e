/**
 * Taps an upstream Server-Sent-Event stream on its way to the client, on bytes: finds line ends, `data: [DONE]`, the
 * usage chunk and each chunk's top-level `model` value in the Buffer, splices the client's model id over the
 * upstream's, drops the usage-only chunk the client did not ask for, and passes every other byte through as the same
 * Buffer (or a slice). Only the usage chunk is ever decoded and parsed; the text is kept raw in case usage never comes.
 */
import { findModelValue, stringEnd } from './model-rewriter';
import { StreamedText } from './streamed-text';

export interface Usage {
  promptTokens: number;
  completionTokens: number;
}

export interface SseTapOptions {
  /** The client's model id as JSON string bytes (`modelValue(id)`), put in place of whatever the upstream names. */
  model: Buffer;
  /** Drop the usage-only chunk (`choices: []`): the client did not ask for usage, we did. */
  dropUsageChunk: boolean;
}

const NL = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const DATA = Buffer.from('data:');
const DONE = Buffer.from('[DONE]');
const MODEL_KEY = Buffer.from('"model"');
const USAGE_KEY = Buffer.from('"usage"');
const EMPTY = Buffer.alloc(0);
/** What a line's inspection decided: pass it as it is, or drop it with its newline; otherwise where to splice. */
const KEEP = -1;
const DROP = -2;

export class SseTap {
  /** The upstream's reported usage, once its usage chunk has passed. */
  usage: Usage | undefined;
  /** Whether `data: [DONE]` has passed. */
  done = false;
  /** Bytes of an unfinished last line, held until its newline arrives. */
  private held: Buffer | undefined;
  private skipBlank = false;
  private readonly text = new StreamedText();
  /** Per chunk: where the next `"model"` / `"usage"` is (-1: none), so each is searched for once, not per line. */
  private modelAt = -1;
  private usageAt = -1;
  /** Where the model value that `inspect` asked to splice ends. */
  private modelEnd = 0;

  constructor(private readonly options: SseTapOptions) {}

  /**
   * Feeds one upstream chunk; returns what to send the client now: always whole lines, an unfinished last line held
   * until its newline arrives (so a broken stream never leaves the client half an event). When nothing needs
   * changing, that is the chunk itself (or a slice of it), not a copy.
   */
  push(chunk: Buffer): Buffer {
    const data = this.held === undefined ? chunk : Buffer.concat([this.held, chunk]);
    const last = data.lastIndexOf(NL);
    if (last === -1) {
      this.held = data;
      return EMPTY;
    }
    this.held = last === data.length - 1 ? undefined : data.subarray(last + 1);
    return this.lines(data, last + 1);
  }

  /** Flushes an unterminated last line when the upstream ends normally (without a newline, as the upstream sent it). */
  end(): Buffer {
    const rest = this.held;
    this.held = undefined;
    if (rest === undefined) return EMPTY;
    this.modelAt = rest.indexOf(MODEL_KEY);
    this.usageAt = rest.indexOf(USAGE_KEY);
    const at = this.inspect(rest, 0, rest.length);
    if (at === KEEP) return rest;
    if (at === DROP) return EMPTY;
    return Buffer.concat([rest.subarray(0, at), this.options.model, rest.subarray(this.modelEnd)]);
  }

  /** Drops an unterminated last line when the upstream broke: half an event is worse than none. */
  abandon(): void {
    this.held = undefined;
  }

  /** Completion tokens streamed so far, counted with our tokenizer (for when the upstream reports no usage). */
  streamedCompletionTokens(): number {
    return this.text.tokens();
  }

  /** The whole lines `data[0, end)` as the client gets them: the same bytes unless a line changes. */
  private lines(data: Buffer, end: number): Buffer {
    this.modelAt = data.indexOf(MODEL_KEY);
    this.usageAt = data.indexOf(USAGE_KEY);
    let pieces: Buffer[] | undefined;
    // data[kept, start) is unchanged output not yet in pieces.
    let kept = 0;
    for (let start = 0; start < end;) {
      const nl = data.indexOf(NL, start);
      const at = this.inspect(data, start, nl);
      if (at !== KEEP) {
        pieces ??= [];
        if (at === DROP) {
          if (kept < start) pieces.push(data.subarray(kept, start));
          kept = nl + 1;
        } else {
          pieces.push(data.subarray(kept, at), this.options.model);
          kept = this.modelEnd;
        }
      }
      start = nl + 1;
    }
    if (pieces === undefined) return end === data.length ? data : data.subarray(0, end);
    if (kept < end) pieces.push(data.subarray(kept, end));
    return Buffer.concat(pieces);
  }

  /** Reads the line `data[start, end)` (without its newline) for what metering needs, and says what to do with it. */
  private inspect(data: Buffer, start: number, end: number): number {
    if (this.skipBlank) {
      this.skipBlank = false;
      if (end === start || (end === start + 1 && data[start] === CR)) return DROP;
    }
    if (end - start < DATA.length || data.compare(DATA, 0, DATA.length, start, start + DATA.length) !== 0) return KEEP;
    let from = start + DATA.length;
    if (data[from] === SPACE) from++;
    const payloadEnd = data[end - 1] === CR ? end - 1 : end;
    if (payloadEnd - from === DONE.length && data.compare(DONE, 0, DONE.length, from, payloadEnd) === 0) {
      this.done = true;
      return KEEP;
    }
    if (this.usageAt !== -1 && this.usageAt < from) this.usageAt = data.indexOf(USAGE_KEY, from);
    if (this.usageAt !== -1 && this.usageAt < end && usageIsObject(data, this.usageAt + USAGE_KEY.length, end)) {
      if (!this.readUsage(data, from, end)) this.text.add(data, from, end);
      else if (this.options.dropUsageChunk) {
        this.skipBlank = true;
        return DROP;
      }
    } else this.text.add(data, from, end);
    if (this.modelAt !== -1 && this.modelAt < from) this.modelAt = data.indexOf(MODEL_KEY, from);
    if (this.modelAt === -1 || this.modelAt >= end) return KEEP;
    const open = findModelValue(data, from, end);
    if (open === -1) return KEEP;
    const close = stringEnd(data, open, end);
    const model = this.options.model;
    if (close === -1 || (close - open === model.length && data.compare(model, 0, model.length, open, close) === 0)) return KEEP;
    this.modelEnd = close;
    return open;
  }

  /** Parses the (rare) chunk that carries a usage object; true when it has no choices. */
  private readUsage(data: Buffer, from: number, end: number): boolean {
    let chunk: { usage?: { prompt_tokens?: unknown; completion_tokens?: unknown }; choices?: unknown };
    try {
      chunk = JSON.parse(data.toString('utf8', from, end));
    } catch {
      return false;
    }
    const p = chunk.usage?.prompt_tokens;
    const c = chunk.usage?.completion_tokens;
    if (Number.isSafeInteger(p) && Number.isSafeInteger(c) && (p as number) >= 0 && (c as number) >= 0) {
      this.usage = { promptTokens: p as number, completionTokens: c as number };
    }
    return Array.isArray(chunk.choices) && chunk.choices.length === 0;
  }
}

/** True when the value after `"usage"` (ending at `from`) is an object, not null. */
function usageIsObject(data: Buffer, from: number, end: number): boolean {
  let i = from;
  while (i < end && data[i] === SPACE) i++;
  if (data[i] !== 0x3a /* : */) return false;
  i++;
  while (i < end && data[i] === SPACE) i++;
  return data[i] === 0x7b; /* { */
}
