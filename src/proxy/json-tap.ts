/**
 * Taps a JSON answer on its way to the client, on bytes and chunk by chunk, without parsing it whole: an embeddings
 * answer can be megabytes of floats. It follows the top-level object's keys, puts the client's model id in place of
 * the top-level `model` value, and keeps the top-level `usage` object (the one part ever parsed). Below the top level
 * it only tracks depth and strings, jumping from one structural byte to the next with native searches.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;
/** The bytes that change depth or open a string: all a scan below the top level looks for. */
const STRUCTURAL = [QUOTE, OPEN_BRACE, CLOSE_BRACE, OPEN_BRACKET, CLOSE_BRACKET];
/** A usage object larger than this is not a usage object: it is not kept. */
const USAGE_LIMIT = 64 * 1024;
const EMPTY = Buffer.alloc(0);

/** What the top level expects next. */
type Expect = 'key' | 'colon' | 'value' | 'comma';

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

export class JsonTap {
  /** The top-level `usage` object, once it has passed whole. */
  usage: Record<string, unknown> | undefined;
  /** False once the bytes show the answer does not open as a JSON object. */
  wellFormed = true;
  private depth = 0;
  private closed = false;
  private inString = false;
  /** Backslashes just before the scan's position inside a string (carried across chunks). */
  private slashes = 0;
  private expect: Expect = 'key';
  /** Reading a top-level key: its bytes so far (short keys only matter). */
  private keyOpen = false;
  private key = '';
  /** The top-level key whose value is being read. */
  private current = '';
  /** Inside the upstream's model value, which the client never sees. */
  private skipping = false;
  private capture: Buffer[] | undefined;
  private captured = 0;
  /** Per chunk: the output so far, where the bytes not yet in it start, and where a usage capture starts. */
  private pieces: Buffer[] = [];
  private emit = 0;
  private captureFrom = 0;
  /** Per chunk: where each structural byte next occurs (searched for once per chunk and position, not per byte). */
  private readonly next = [-1, -1, -1, -1, -1];

  /** `model`: the client's model id as JSON string bytes. */
  constructor(private readonly model: Buffer) {}

  /** Feeds one chunk; returns the bytes to send now (the chunk itself when nothing changes). */
  push(buf: Buffer): Buffer {
    const n = buf.length;
    this.pieces = [];
    this.emit = 0;
    this.captureFrom = 0;
    this.next.fill(-1);
    let i = 0;
    while (i < n) {
      if (this.inString) i = this.inStringAt(buf, i);
      else if (this.depth >= 2) i = this.belowTop(buf, i);
      else this.topLevel(buf, i++);
    }
    if (this.capture) this.keep(buf, this.captureFrom, n);
    const pieces = this.pieces;
    const emit = this.emit;
    if (!this.skipping) {
      if (pieces.length === 0) return emit === 0 ? buf : buf.subarray(emit);
      if (emit < n) pieces.push(buf.subarray(emit));
    }
    return pieces.length === 1 ? pieces[0] : pieces.length === 0 ? EMPTY : Buffer.concat(pieces);
  }

  /** Inside a string at `i`: on to its closing quote (or the chunk's end); returns where the scan goes on. */
  private inStringAt(buf: Buffer, i: number): number {
    const q = buf.indexOf(QUOTE, i);
    const to = q === -1 ? buf.length : q;
    let run = 0;
    while (to - 1 - run >= i && buf[to - 1 - run] === BACKSLASH) run++;
    if (to - run === i) run += this.slashes;
    if (this.keyOpen && this.key.length <= 8) this.key += buf.toString('latin1', i, Math.min(to, i + 9));
    if (q === -1) {
      this.slashes = run;
      return buf.length;
    }
    this.slashes = 0;
    if (run % 2 === 1) return q + 1;
    this.inString = false;
    if (this.depth !== 1) return q + 1;
    if (this.keyOpen) {
      this.keyOpen = false;
      this.current = this.key;
      this.expect = 'colon';
    } else {
      this.expect = 'comma';
      if (this.skipping) {
        this.skipping = false;
        this.pieces.push(this.model);
        this.emit = q + 1;
      }
    }
    return q + 1;
  }

  /** Below the top level: from one structural byte to the next; returns where the scan goes on. */
  private belowTop(buf: Buffer, i: number): number {
    const j = this.nextStructural(buf, i);
    if (j === buf.length) return j;
    const c = buf[j];
    if (c === QUOTE) this.inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) this.depth++;
    else if (--this.depth === 1) {
      this.expect = 'comma';
      if (this.capture) {
        this.keep(buf, this.captureFrom, j + 1);
        this.finishCapture();
      }
    }
    return j + 1;
  }

  /** The byte at `at`, at the top level (depth 0 or 1): the object's keys, colons, commas and the values' starts. */
  private topLevel(buf: Buffer, at: number): void {
    const c = buf[at];
    if (isSpace(c) || this.closed) return;
    if (this.depth === 0) {
      if (c === OPEN_BRACE) {
        this.depth = 1;
        this.expect = 'key';
      } else {
        this.wellFormed = false;
        this.closed = true;
      }
      return;
    }
    switch (this.expect) {
      case 'key':
        if (c === QUOTE) {
          this.inString = true;
          this.keyOpen = true;
          this.key = '';
        } else if (c === CLOSE_BRACE) this.close();
        break;
      case 'colon':
        if (c === COLON) this.expect = 'value';
        break;
      case 'value':
        this.valueStart(buf, at, c);
        break;
      case 'comma':
        if (c === COMMA) this.expect = 'key';
        else if (c === CLOSE_BRACE) this.close();
        break;
    }
  }

  /** A top-level value begins at `at`: the model's string is withheld, the usage object captured. */
  private valueStart(buf: Buffer, at: number, c: number): void {
    if (c === QUOTE) {
      this.inString = true;
      if (this.current === 'model') {
        this.skipping = true;
        this.pieces.push(buf.subarray(this.emit, at));
      }
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      this.depth = 2;
      if (c === OPEN_BRACE && this.current === 'usage') {
        this.capture = [];
        this.captured = 0;
        this.captureFrom = at;
      }
    } else this.expect = 'comma';
  }

  private close(): void {
    this.depth = 0;
    this.closed = true;
  }

  /** The next structural byte at or after `i`, or the chunk's length. */
  private nextStructural(buf: Buffer, i: number): number {
    let best = buf.length;
    for (let k = 0; k < STRUCTURAL.length; k++) {
      let at = this.next[k];
      if (at < i) {
        at = buf.indexOf(STRUCTURAL[k], i);
        if (at === -1) at = buf.length;
        this.next[k] = at;
      }
      if (at < best) best = at;
    }
    return best;
  }

  private keep(buf: Buffer, from: number, to: number): void {
    const capture = this.capture as Buffer[];
    this.captured += to - from;
    if (this.captured > USAGE_LIMIT) {
      this.capture = undefined;
      return;
    }
    if (to > from) capture.push(buf.subarray(from, to));
  }

  private finishCapture(): void {
    const bytes = Buffer.concat(this.capture as Buffer[]);
    this.capture = undefined;
    try {
      const usage: unknown = JSON.parse(bytes.toString('utf8'));
      if (typeof usage === 'object' && usage !== null) this.usage = usage as Record<string, unknown>;
    } catch {
      // Not a usage object after all: the answer is charged by our count.
    }
  }
}
