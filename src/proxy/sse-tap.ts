/**
 * Taps an upstream Server-Sent-Event stream on its way to the client: finds the usage chunk, keeps what was streamed
 * countable in case usage never comes, rewrites `model` to the client's id and drops the usage-only chunk the client
 * did not ask for. Only the usage chunk is ever JSON-parsed; every other line costs a few substring searches.
 */
import { StringDecoder } from 'node:string_decoder';
import { countText } from '../metering/estimate';

export interface Usage {
  promptTokens: number;
  completionTokens: number;
}

export interface SseTapOptions {
  /** Rewrites the upstream's model name to the client's id in a chunk; omit when the names are equal. */
  rewriteModel?: (json: string) => string;
  /** Drop the usage-only chunk (`choices: []`): the client did not ask for usage, we did. */
  dropUsageChunk: boolean;
}

/** The string values of the fields whose streamed text is completion output, found in one pass over a line. */
const TEXT_FIELDS = /"(?:content|arguments|reasoning_content|refusal)" *: *"((?:[^"\\]|\\.)*)"/g;
/**
 * Streamed text waits, uncounted, until the stream ends without usage; past this many characters it is counted in a
 * batch, so memory per stream stays bounded. Most streams end with usage and below it, and never load the tokenizer.
 */
const COUNT_BATCH = 32_768;
const EMPTY = Buffer.alloc(0);

export class SseTap {
  /** The upstream's reported usage, once its usage chunk has passed. */
  usage: Usage | undefined;
  /** Whether `data: [DONE]` has passed. */
  done = false;
  private readonly decoder = new StringDecoder('utf8');
  private readonly passthrough: boolean;
  private readonly rewrite: ((json: string) => string) | undefined;
  private partial = '';
  /** Passthrough mode: bytes of an unfinished last line not yet sent. */
  private held: Buffer | undefined;
  private skipBlank = false;
  private pendingText = '';
  private countedTokens = 0;

  constructor(private readonly options: SseTapOptions) {
    this.passthrough = !options.rewriteModel && !options.dropUsageChunk;
    this.rewrite = options.rewriteModel;
  }

  /**
   * Feeds one upstream chunk; returns what to send the client now: always whole lines, an unfinished last line held
   * until its newline arrives (so a broken stream never leaves the client half an event). When nothing needs
   * changing, that is the chunk itself (or a slice of it), not a copy.
   */
  push(chunk: Buffer): Buffer | string {
    const text = this.partial + this.decoder.write(chunk);
    let out = '';
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      const line = text.slice(start, nl);
      start = nl + 1;
      if (this.passthrough) this.inspect(line);
      else out += this.transform(line);
    }
    this.partial = text.slice(start);
    return this.passthrough ? this.wholeLines(chunk) : out;
  }

  /** Flushes an unterminated last line when the upstream ends normally. */
  end(): Buffer | string {
    const rest = this.partial + this.decoder.end();
    this.partial = '';
    if (this.passthrough) {
      if (rest.length > 0) this.inspect(rest);
      const held = this.held ?? EMPTY;
      this.held = undefined;
      return held;
    }
    if (rest.length === 0) return '';
    // The upstream sent no final newline: neither do we.
    const out = this.transform(rest);
    return out === '' ? '' : out.slice(0, -1);
  }

  /** Drops an unterminated last line when the upstream broke: half an event is worse than none. */
  abandon(): void {
    this.partial = '';
    this.held = undefined;
    this.decoder.end();
  }

  private wholeLines(chunk: Buffer): Buffer {
    const data = this.held === undefined ? chunk : Buffer.concat([this.held, chunk]);
    const last = data.lastIndexOf(10);
    if (last === data.length - 1) {
      this.held = undefined;
      return data;
    }
    this.held = data.subarray(last + 1);
    return last === -1 ? EMPTY : data.subarray(0, last + 1);
  }

  /** Completion tokens streamed so far, counted with our tokenizer (for when the upstream reports no usage). */
  streamedCompletionTokens(): number {
    this.flushCount();
    return this.countedTokens;
  }

  private transform(line: string): string {
    if (this.skipBlank && (line === '' || line === '\r')) {
      this.skipBlank = false;
      return '';
    }
    this.skipBlank = false;
    const kind = this.inspect(line);
    if (kind === 'usage-only' && this.options.dropUsageChunk) {
      this.skipBlank = true;
      return '';
    }
    if (this.rewrite !== undefined && kind !== 'other') return `${this.rewrite(line)}\n`;
    return `${line}\n`;
  }

  /** Reads one line for what metering needs. */
  private inspect(line: string): 'data' | 'usage-only' | 'other' {
    if (!line.startsWith('data:')) return 'other';
    if (line.length < 16 && /^data: ?\[DONE\]\r?$/.test(line)) {
      this.done = true;
      return 'other';
    }
    const u = line.indexOf('"usage"');
    if (u !== -1 && usageIsObject(line, u + 7)) {
      const usageOnly = this.readUsage(line);
      if (usageOnly) return 'usage-only';
    }
    this.collectText(line);
    return 'data';
  }

  /** Parses the (rare) chunk that carries a usage object; true when it has no choices. */
  private readUsage(line: string): boolean {
    let chunk: { usage?: { prompt_tokens?: unknown; completion_tokens?: unknown }; choices?: unknown };
    try {
      chunk = JSON.parse(line.slice(line.indexOf('{')));
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

  private collectText(line: string): void {
    TEXT_FIELDS.lastIndex = 0;
    for (let m = TEXT_FIELDS.exec(line); m !== null; m = TEXT_FIELDS.exec(line)) {
      if (m[1].length > 0) this.pendingText += m[1];
    }
    if (this.pendingText.length >= COUNT_BATCH) this.flushCount();
  }

  private flushCount(): void {
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

/** True when the value after `"usage"` (at `from`) is an object, not null. */
function usageIsObject(line: string, from: number): boolean {
  let i = from;
  while (line.charCodeAt(i) === 32) i++;
  if (line.charCodeAt(i) !== 58 /* : */) return false;
  i++;
  while (line.charCodeAt(i) === 32) i++;
  return line.charCodeAt(i) === 123; /* { */
}
