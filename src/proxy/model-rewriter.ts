/**
 * The model-name rewrite on bytes: finds the value of a JSON object's top-level `"model"` key and splices the
 * client's id in its place, whatever name the upstream gave (a snapshot, a tag, a gateway's routing name).
 *
 * Short comparisons are made here byte by byte: Node's `compare` with offsets and `indexOf` with a needle of 7 bytes
 * or more (a Boyer-Moore-Horspool search that builds its tables on every call) each cost more than reading a whole
 * stream chunk (see bench/FINDINGS.md).
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const NL = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const TAB = 0x09;
/** A top-level key's length with its quotes: `"model"` and `"usage"` both have 7. */
const KEY_LENGTH = 7;

/** Whether buf[at, at + 5) spells `model` (m o d e l). */
function isModel(buf: Buffer, at: number): boolean {
  return buf[at] === 0x6d && buf[at + 1] === 0x6f && buf[at + 2] === 0x64 && buf[at + 3] === 0x65 && buf[at + 4] === 0x6c;
}

/** Whether buf[at, at + 5) spells `usage` (u s a g e). */
export function isUsage(buf: Buffer, at: number): boolean {
  return buf[at] === 0x75 && buf[at + 1] === 0x73 && buf[at + 2] === 0x61 && buf[at + 3] === 0x67 && buf[at + 4] === 0x65;
}

/** Whether buf[from, to) holds exactly the bytes of `value`. */
export function bytesEqual(buf: Buffer, from: number, to: number, value: Buffer): boolean {
  if (to - from !== value.length) return false;
  for (let i = 0; i < value.length; i++) if (buf[from + i] !== value[i]) return false;
  return true;
}

/**
 * What one pass over a JSON object's top level found: where its `model` string value is, and whether its `usage`
 * holds an object. One instance is reused for every line of a stream.
 */
export class TopLevelScan {
  /** The opening quote of the first top-level `model` key's value, or -1 (no such key, or its value is no string). */
  modelOpen = -1;
  /** Just past that value's closing quote. */
  modelClose = -1;
  /** Whether a top-level `usage` key holds an object (only looked for by `scan(…, true)`). */
  usage = false;

  /**
   * Reads the JSON object in buf[from, to): tracks depth byte by byte, jumps over strings, and stops at the first
   * top-level `model` key, or with `whole` at the object's end (so a `usage` after the model is seen too). A key in a
   * nested object (a message, tool arguments) or a "model" inside a string is never the one.
   */
  scan(buf: Buffer, from: number, to: number, whole: boolean): void {
    this.modelOpen = -1;
    this.modelClose = -1;
    this.usage = false;
    let modelSeen = false;
    let depth = 0;
    for (let i = from; i < to; i++) {
      const c = buf[i];
      if (c === QUOTE) {
        const end = stringEnd(buf, i, to);
        if (end === -1) return;
        let next = end;
        if (depth === 1 && end - i === KEY_LENGTH) {
          const model = !modelSeen && isModel(buf, i + 1);
          if (model || (whole && !this.usage && isUsage(buf, i + 1))) {
            const colon = skipSpace(buf, end, to);
            if (colon < to && buf[colon] === COLON) {
              const value = skipSpace(buf, colon + 1, to);
              next = value;
              if (!model) this.usage = value < to && buf[value] === OPEN_BRACE;
              else {
                modelSeen = true;
                const close = value < to && buf[value] === QUOTE ? stringEnd(buf, value, to) : -1;
                if (close !== -1) {
                  this.modelOpen = value;
                  this.modelClose = next = close;
                }
                if (!whole) return;
              }
            }
          }
        }
        i = next - 1;
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
      else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        if (--depth <= 0) return;
      }
    }
  }
}

/** The first offset from `i` that is not JSON whitespace. */
export function skipSpace(buf: Buffer, i: number, to: number): number {
  while (i < to) {
    const c = buf[i];
    if (c !== SPACE && c !== NL && c !== CR && c !== TAB) break;
    i++;
  }
  return i;
}

/**
 * The offset just past the closing quote of the JSON string that opens at `open`, or -1 when it does not close
 * before `to`. Escaped quotes are skipped by counting the backslashes before each quote. (A one-byte `indexOf` is a
 * memchr: cheap, unlike a search for a longer needle.)
 */
export function stringEnd(buf: Buffer, open: number, to: number): number {
  for (let q = buf.indexOf(QUOTE, open + 1); q !== -1 && q < to; q = buf.indexOf(QUOTE, q + 1)) {
    let slashes = 0;
    while (buf[q - 1 - slashes] === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return q + 1;
  }
  return -1;
}

/**
 * Where the string value of the top-level `"model"` key of the JSON object in `buf[from, to)` opens (its quote), or
 * -1 when it has none. A `"model"` key in a nested object (a message, tool arguments) is never the one.
 */
export function findModelValue(buf: Buffer, from: number, to: number): number {
  const scan = new TopLevelScan();
  scan.scan(buf, from, to, false);
  return scan.modelOpen;
}

/** A whole JSON answer with the client's model id: the same Buffer when nothing changes. */
export function rewriteModel(json: Buffer, value: Buffer): Buffer {
  const scan = new TopLevelScan();
  scan.scan(json, 0, json.length, false);
  const open = scan.modelOpen;
  const close = scan.modelClose;
  if (open === -1 || bytesEqual(json, open, close, value)) return json;
  // Only the bytes up to the model value were read; the answer is copied once, around the new value.
  const out = Buffer.allocUnsafe(json.length - (close - open) + value.length);
  json.copy(out, 0, 0, open);
  value.copy(out, open);
  json.copy(out, open + value.length, close);
  return out;
}
