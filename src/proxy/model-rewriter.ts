/**
 * The model-name rewrite on bytes: finds the value of a JSON object's top-level `"model"` key and splices the
 * client's id in its place, whatever name the upstream gave (a snapshot, a tag, a gateway's routing name).
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const MODEL_KEY = Buffer.from('"model"');
const MODEL_LENGTH = MODEL_KEY.length;

/** The client's id as the bytes of a JSON string, built once per model and spliced into every answer. */
export function modelValue(id: string): Buffer {
  return Buffer.from(JSON.stringify(id));
}

/**
 * The offset just past the closing quote of the JSON string that opens at `open`, or -1 when it does not close
 * before `to`. Escaped quotes are skipped by counting the backslashes before each quote.
 */
export function stringEnd(buf: Buffer, open: number, to: number): number {
  for (let q = buf.indexOf(QUOTE, open + 1); q !== -1 && q < to; q = buf.indexOf(QUOTE, q + 1)) {
    let slashes = 0;
    while (buf[q - 1 - slashes] === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return q + 1;
  }
  return -1;
}

function skipSpace(buf: Buffer, i: number, to: number): number {
  while (i < to) {
    const c = buf[i];
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
    i++;
  }
  return i;
}

/**
 * Where the string value of the top-level `"model"` key of the JSON object in `buf[from, to)` opens (its quote), or
 * -1 when it has none. A `"model"` key in a nested object (a message, tool arguments) is never the one: the scan
 * tracks depth and jumps over strings, and stops at the first top-level match.
 */
export function findModelValue(buf: Buffer, from: number, to: number): number {
  // Most JSON has no "model" at all past this point: one native search settles it.
  const candidate = buf.indexOf(MODEL_KEY, from);
  if (candidate === -1 || candidate >= to) return -1;
  let depth = 0;
  for (let i = from; i < to; i++) {
    const c = buf[i];
    if (c === QUOTE) {
      const end = stringEnd(buf, i, to);
      if (end === -1) return -1;
      if (depth === 1 && end - i === MODEL_LENGTH && buf.compare(MODEL_KEY, 0, MODEL_LENGTH, i, end) === 0) {
        const colon = skipSpace(buf, end, to);
        if (buf[colon] === COLON) {
          const value = skipSpace(buf, colon + 1, to);
          return buf[value] === QUOTE ? value : -1;
        }
      }
      i = end - 1;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (--depth <= 0) return -1;
    }
  }
  return -1;
}

/**
 * `buf[from, to)` with its top-level model value replaced by `value`, as the pieces to send: the same bytes (one
 * slice, no copy) when there is no model or it already reads `value`.
 */
export function spliceModel(buf: Buffer, from: number, to: number, value: Buffer): Buffer[] {
  const open = findModelValue(buf, from, to);
  if (open === -1) return [buf.subarray(from, to)];
  const close = stringEnd(buf, open, to);
  if (close === -1 || (close - open === value.length && buf.compare(value, 0, value.length, open, close) === 0)) {
    return [buf.subarray(from, to)];
  }
  return [buf.subarray(from, open), value, buf.subarray(close, to)];
}

/** A whole JSON answer with the client's model id: the same Buffer when nothing changes. */
export function rewriteModel(json: Buffer, value: Buffer): Buffer {
  const pieces = spliceModel(json, 0, json.length, value);
  return pieces.length === 1 ? json : Buffer.concat(pieces);
}
