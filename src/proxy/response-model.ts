/**
 * Where a Responses stream event names the model: inside its top-level `response` object (response.created,
 * response.completed, …), never at the event's own top level. Found on bytes, as the chat chunks' model is.
 */
import { findModelValue, stringEnd } from './model-rewriter';

const QUOTE = 0x22;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const RESPONSE_KEY = Buffer.from('"response"');

function skipSpace(buf: Buffer, i: number, to: number): number {
  while (i < to && (buf[i] === 0x20 || buf[i] === 0x0a || buf[i] === 0x0d || buf[i] === 0x09)) i++;
  return i;
}

/** Where the model value inside the event's top-level `response` object opens (its quote), or -1. */
export function findResponseModelValue(buf: Buffer, from: number, to: number): number {
  const candidate = buf.indexOf(RESPONSE_KEY, from);
  if (candidate === -1 || candidate >= to) return -1;
  let depth = 0;
  for (let i = from; i < to; i++) {
    const c = buf[i];
    if (c === QUOTE) {
      const end = stringEnd(buf, i, to);
      if (end === -1) return -1;
      if (depth === 1 && end - i === RESPONSE_KEY.length && buf.compare(RESPONSE_KEY, 0, RESPONSE_KEY.length, i, end) === 0) {
        const colon = skipSpace(buf, end, to);
        if (buf[colon] !== 0x3a) return -1;
        const value = skipSpace(buf, colon + 1, to);
        return buf[value] === OPEN_BRACE ? findModelValue(buf, value, to) : -1;
      }
      i = end - 1;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
    else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (--depth <= 0) return -1;
    }
  }
  return -1;
}
