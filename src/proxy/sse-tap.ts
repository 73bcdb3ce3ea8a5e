/**
 * Taps an upstream Server-Sent-Event stream on its way to the client, on bytes: finds line ends, `data: [DONE]`, the
 * usage chunk and each chunk's top-level `model` value in the Buffer, splices the client's model id over the
 * upstream's, drops the usage-only chunk the client did not ask for, and passes every other byte through as the same
 * Buffer (or a slice). Only the usage chunk is ever decoded and parsed; the text is kept raw in case usage never comes.
 * Each line is read once, up to the end of its top-level object, with no search for a longer needle than one byte.
 */
import type { CountTexts } from '../metering/output-count';
import { addChargeFields, type ShownCharge } from './charge-shown';
import { lineCapFor } from './line-cap';
import { bytesEqual } from './model-rewriter';
import type { AnswerIds, LineScan, StreamDialect } from './pipeline/endpoint';
import { StreamedText } from './streamed-text';
import type { Usage } from './usage';
export type { Usage } from './usage';

export interface SseTapOptions {
  /** The client's model id as JSON string bytes (`Model.idJson`), put in place of whatever the upstream names. */
  model: Buffer;
  /** Drop the usage-only chunk (`choices: []`): the client did not ask for usage, we did. */
  dropUsageChunk: boolean;
  /**
   * Hold back the line with the answer's whole usage (and all after it) once it arrives (`parked`), until `unpark`
   * gets the charge for its usage to show. Only for a client that gets that line.
   */
  parkUsage?: boolean;
  /** The endpoint's stream: where its usage, output text and model name are. */
  dialect: StreamDialect;
  /** Counts the streamed text when asked (StreamedText's `count`). Default: in place. */
  count?: CountTexts;
  /** Characters at the stream's start that echo the prompt: not output. */
  skipChars?: number;
}

const NL = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const COLON = 0x3a;
const DATA_LENGTH = 'data:'.length;
const DONE = Buffer.from('[DONE]');
const EMPTY = Buffer.alloc(0);
const NEWLINE = Buffer.from('\n');
/** What a line's inspection decided: pass it as it is, or drop it with its newline; otherwise where to splice. */
const KEEP = -1;
const DROP = -2;

export class SseTap {
  /** The upstream's reported usage, once its usage chunk has passed. */
  usage: Usage | undefined;
  /** Whether the answer's whole usage has passed (the line that shows it: not a running count in every chunk). */
  wholeUsage = false;
  /**
   * The usage to charge a stream that ends here: the upstream's so far, unless its dialect's usage before the whole
   * says nothing of the output (then our count of the stream is charged instead).
   */
  get chargeableUsage(): Usage | undefined {
    return this.options.dialect.partialUsage && !this.wholeUsage ? undefined : this.usage;
  }
  /** Whether `data: [DONE]` has passed. */
  done = false;
  overlong = false; // an unfinished line grew past lineCap: dropped, nothing more passes (the relay breaks off)
  /** The id the usage line names (a stored response's), once it has passed. */
  answerId: AnswerIds | undefined;
  /** Whether the usage line is held back, waiting for its charge (`unpark`). */
  get parked(): boolean {
    return this.parkedLine !== undefined;
  }
  /** Bytes of an unfinished last line, held until its newline arrives. */
  private held: Buffer | undefined;
  /**
   * Chunks of that line that came after `held`, none with a newline: joined once, when the newline comes. (Joining
   * each chunk as it came copied a megabyte line over and over: 120 MB for a 3.9 MB echoed prompt.)
   */
  private heldMore: Buffer[] = [];
  private heldBytes = 0; // of held and heldMore
  /** The parked usage line (model id in place, without its newline) and every byte that came after it. */
  private parkedLine: Buffer | undefined;
  private afterParked: Buffer[] = [];
  /** Set by `inspect` when the line it read is the one to park; at most once per stream. */
  private parking = false;
  private parkedOnce = false;
  private skipBlank = false;
  private readonly text: StreamedText;
  private readonly scan: LineScan;
  /** Where the model value that `inspect` asked to splice ends. */
  private modelEnd = 0;

  /** The longest unfinished line held: the cap, plus room for this stream's echo of the prompt. */
  readonly lineCap: number;
  constructor(private readonly options: SseTapOptions) {
    this.lineCap = lineCapFor(options.skipChars);
    this.text = new StreamedText(options.dialect.textFields, { count: options.count, skipChars: options.skipChars });
    this.scan = options.dialect.scanner();
  }

  /**
   * Feeds one upstream chunk; returns what to send the client now: always whole lines, an unfinished last line held
   * until its newline arrives (so a broken stream never leaves the client half an event). When nothing needs
   * changing, that is the chunk itself (or a slice of it), not a copy.
   */
  push(chunk: Buffer): Buffer {
    if (this.overlong) return EMPTY;
    if (this.parkedLine !== undefined) {
      this.afterParked.push(chunk);
      return EMPTY;
    }
    const last = chunk.lastIndexOf(NL);
    if (last === -1) {
      if (this.held === undefined) this.held = chunk;
      else this.heldMore.push(chunk);
      this.heldBytes += chunk.length;
      if (this.heldBytes > this.lineCap) {
        this.overlong = true;
        this.takeHeld(false);
      }
      return EMPTY;
    }
    const data = this.held === undefined ? chunk : Buffer.concat([this.takeHeld() as Buffer, chunk]);
    const end = data.length - chunk.length + last + 1;
    this.held = end === data.length ? undefined : data.subarray(end);
    this.heldBytes = data.length - end;
    return this.lines(data, end);
  }

  /** The unfinished line held so far, in one Buffer (`join` false: dropped); nothing is held after. */
  private takeHeld(join = true): Buffer | undefined {
    const held = this.held;
    this.held = undefined;
    this.heldBytes = 0;
    if (!join) this.heldMore = [];
    if (held === undefined || this.heldMore.length === 0) return held;
    const whole = Buffer.concat([held, ...this.heldMore]);
    this.heldMore = [];
    return whole;
  }

  /** Flushes an unterminated last line when the upstream ends normally (without a newline, as the upstream sent it). */
  end(): Buffer {
    const rest = this.takeHeld();
    if (rest === undefined) return EMPTY;
    const at = this.inspect(rest, 0, rest.length);
    if (this.parking) return this.park(rest, 0, rest.length, at, undefined, 0);
    if (at === KEEP) return rest;
    if (at === DROP) return EMPTY;
    return Buffer.concat([rest.subarray(0, at), this.options.model, rest.subarray(this.modelEnd)]);
  }

  /** Drops an unterminated last line when the upstream broke: half an event is worse than none. */
  abandon(): void {
    this.takeHeld();
    this.parkedLine = undefined;
    this.afterParked = [];
  }

  /** The parked usage line showing the charge, then what came after it, as `push` would have passed it. */
  unpark(charge: ShownCharge): Buffer {
    const line = this.parkedLine;
    if (line === undefined) return EMPTY;
    this.parkedLine = undefined;
    const after = this.afterParked;
    this.afterParked = [];
    const rest = after.length === 0 ? EMPTY : this.push(after.length === 1 ? after[0] : Buffer.concat(after));
    return Buffer.concat([this.showCharge(line, charge), NEWLINE, rest]);
  }

  /** The event that ends this stream's client when the upstream broke off. */
  errorEvent(timedOut: boolean): string {
    return this.options.dialect.errorEvent(timedOut);
  }

  /**
   * Completion tokens streamed so far, counted with our tokenizer (for when the upstream reports no usage); a promise
   * while a long text is counted off the event loop.
   */
  streamedCompletionTokens(): number | Promise<number> {
    return this.text.tokens();
  }

  /** The whole lines `data[0, end)` as the client gets them: the same bytes unless a line changes. */
  private lines(data: Buffer, end: number): Buffer {
    let pieces: Buffer[] | undefined;
    // data[kept, start) is unchanged output not yet in pieces.
    let kept = 0;
    for (let start = 0; start < end;) {
      const nl = data.indexOf(NL, start);
      const at = this.inspect(data, start, nl);
      if (this.parking) return this.park(data, start, nl, at, pieces, kept, end);
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

  /**
   * Parks the line `data[start, nl)` (its model id spliced at `at`, unless KEEP) and the bytes after it up to `end`
   * and the held rest; returns the output before it (`pieces` and data[kept, start)).
   */
  private park(data: Buffer, start: number, nl: number, at: number, pieces: Buffer[] | undefined, kept: number, end = nl): Buffer {
    this.parking = false;
    this.parkedOnce = true;
    this.parkedLine =
      at === KEEP
        ? data.subarray(start, nl)
        : Buffer.concat([data.subarray(start, at), this.options.model, data.subarray(this.modelEnd, nl)]);
    if (nl + 1 < end) this.afterParked.push(data.subarray(nl + 1, end));
    const held = this.takeHeld();
    if (held !== undefined) this.afterParked.push(held);
    if (pieces === undefined) return data.subarray(0, start);
    if (kept < start) pieces.push(data.subarray(kept, start));
    return Buffer.concat(pieces);
  }

  /** The parked line with the charge's fields in its usage (parsed again: once per stream, the model id in place). */
  private showCharge(line: Buffer, charge: ShownCharge): Buffer {
    let from = DATA_LENGTH;
    if (line[from] === SPACE) from++;
    const cr = line[line.length - 1] === CR;
    let event: Record<string, unknown>;
    try {
      event = JSON.parse(line.toString('utf8', from, cr ? line.length - 1 : line.length)) as Record<string, unknown>;
    } catch {
      return line; // parsed once already, the model id spliced in is a JSON string: not reached
    }
    const usage = this.options.dialect.shownUsage(event);
    if (usage === undefined) return line;
    addChargeFields(usage, charge);
    return Buffer.from(`data: ${JSON.stringify(event)}${cr ? '\r' : ''}`);
  }

  /** Reads the line `data[start, end)` (without its newline) for what metering needs, and says what to do with it. */
  private inspect(data: Buffer, start: number, end: number): number {
    if (this.skipBlank) {
      this.skipBlank = false;
      if (end === start || (end === start + 1 && data[start] === CR)) return DROP;
    }
    if (end - start < DATA_LENGTH || !isDataField(data, start)) return KEEP;
    let from = start + DATA_LENGTH;
    if (data[from] === SPACE) from++;
    const payloadEnd = data[end - 1] === CR ? end - 1 : end;
    if (bytesEqual(data, from, payloadEnd, DONE)) {
      this.done = true;
      return KEEP;
    }
    const scan = this.scan;
    scan.scan(data, from, end, true);
    if (scan.usage) {
      if (!this.readUsage(data, from, end)) this.text.add(data, from, end);
      else if (this.options.dropUsageChunk) {
        this.skipBlank = true;
        return DROP;
      }
    } else this.text.add(data, from, end);
    const open = scan.modelOpen;
    if (open === -1 || bytesEqual(data, open, scan.modelClose, this.options.model)) return KEEP;
    this.modelEnd = scan.modelClose;
    return open;
  }

  /** Parses the (rare) chunk that carries a usage object; true when it carries nothing else (no choices). */
  private readUsage(data: Buffer, from: number, end: number): boolean {
    let chunk: unknown;
    try {
      chunk = JSON.parse(data.toString('utf8', from, end));
    } catch {
      return false;
    }
    if (typeof chunk !== 'object' || chunk === null) return false;
    const dialect = this.options.dialect;
    const event = chunk as Record<string, unknown>;
    const usage = dialect.usage(event, this.usage);
    if (usage) {
      this.usage = usage;
      const o = this.options;
      const whole = dialect.shownUsage(event) !== undefined;
      if (whole) this.wholeUsage = true;
      if (o.parkUsage && !o.dropUsageChunk && !this.parkedOnce && whole) this.parking = true;
    }
    this.answerId ??= dialect.answerId?.(event);
    return dialect.usageOnly(event);
  }
}

/** Whether the line at `start` begins with `data:` (read byte by byte: cheaper than a native compare). */
function isDataField(data: Buffer, start: number): boolean {
  return (
    data[start] === 0x64 && data[start + 1] === 0x61 && data[start + 2] === 0x74 && data[start + 3] === 0x61 && data[start + 4] === COLON
  );
}
