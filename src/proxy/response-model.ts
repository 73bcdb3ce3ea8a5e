/**
 * Where a Responses stream event names the model and its usage: inside its top-level `response` object
 * (response.created, response.completed, …), never at the event's own top level. Found on bytes in one pass, as the
 * chat chunks' are: the event's top level is read until its `response` key, and that object by a TopLevelScan.
 */
import { stringEnd, TopLevelScan } from './model-rewriter';
import type { LineScan } from './pipeline/endpoint';

const QUOTE = 0x22;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const COLON = 0x3a;
/** `"response"` with its quotes. */
const KEY_LENGTH = 10;

function skipSpace(buf: Buffer, i: number, to: number): number {
  while (i < to && (buf[i] === 0x20 || buf[i] === 0x0a || buf[i] === 0x0d || buf[i] === 0x09)) i++;
  return i;
}

/** Whether buf[at, at + 8) spells `response`. */
function isResponse(buf: Buffer, at: number): boolean {
  return (
    buf[at] === 0x72 &&
    buf[at + 1] === 0x65 &&
    buf[at + 2] === 0x73 &&
    buf[at + 3] === 0x70 &&
    buf[at + 4] === 0x6f &&
    buf[at + 5] === 0x6e &&
    buf[at + 6] === 0x73 &&
    buf[at + 7] === 0x65
  );
}

/** Where the value of the event's top-level `response` key opens (its brace), or -1 when it has no such object. */
function responseObject(buf: Buffer, from: number, to: number): number {
  let depth = 0;
  for (let i = from; i < to; i++) {
    const c = buf[i];
    if (c === QUOTE) {
      const end = stringEnd(buf, i, to);
      if (end === -1) return -1;
      if (depth === 1 && end - i === KEY_LENGTH && isResponse(buf, i + 1)) {
        const colon = skipSpace(buf, end, to);
        if (buf[colon] !== COLON) return -1;
        const value = skipSpace(buf, colon + 1, to);
        return buf[value] === OPEN_BRACE ? value : -1;
      }
      i = end - 1;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (--depth <= 0) return -1;
    }
  }
  return -1;
}

/** The LineScan of a Responses stream: the model and usage of the event's `response`. */
export class ResponseEventScan implements LineScan {
  modelOpen = -1;
  modelClose = -1;
  usage = false;
  private readonly inner = new TopLevelScan();

  scan(buf: Buffer, from: number, to: number, whole: boolean): void {
    const open = responseObject(buf, from, to);
    if (open === -1) {
      this.modelOpen = this.modelClose = -1;
      this.usage = false;
      return;
    }
    const inner = this.inner;
    inner.scan(buf, open, to, whole);
    this.modelOpen = inner.modelOpen;
    this.modelClose = inner.modelClose;
    this.usage = inner.usage;
  }
}
