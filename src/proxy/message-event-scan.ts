/**
 * Where a Messages stream event names the model and carries usage: `message_start` inside its top-level `message`
 * object (model and usage both), `message_delta` at its own top level (usage, cumulative). Found on bytes in one pass,
 * as chat chunks' are: the event's top level is read for a `usage` object, and a `message` object by a TopLevelScan.
 */
import { isUsage, skipSpace, stringEnd, TopLevelScan } from './model-rewriter';
import type { LineScan } from './pipeline/endpoint';

const [QUOTE, COLON, OPEN_BRACE, OPEN_BRACKET, CLOSE_BRACE, CLOSE_BRACKET] = Buffer.from('":{[}]');

/** Whether buf[at, at + 7) spells `message`. */
const MESSAGE = Buffer.from('message');
function isMessage(buf: Buffer, at: number): boolean {
  for (let i = 0; i < 7; i++) if (buf[at + i] !== MESSAGE[i]) return false;
  return true;
}

/** The LineScan of a Messages stream. */
export class MessageEventScan implements LineScan {
  modelOpen = -1;
  modelClose = -1;
  usage = false;
  private readonly inner = new TopLevelScan();

  scan(buf: Buffer, from: number, to: number, whole: boolean): void {
    this.modelOpen = this.modelClose = -1;
    this.usage = false;
    let depth = 0;
    for (let i = from; i < to; i++) {
      const c = buf[i];
      if (c === QUOTE) {
        const end = stringEnd(buf, i, to);
        if (end === -1) return;
        let next = end;
        const length = end - i - 2;
        if (depth === 1 && ((length === 7 && isMessage(buf, i + 1)) || (whole && length === 5 && isUsage(buf, i + 1)))) {
          const colon = skipSpace(buf, end, to);
          if (colon >= to || buf[colon] !== COLON) return;
          const value = skipSpace(buf, colon + 1, to);
          if (value < to && buf[value] === OPEN_BRACE) {
            if (length === 5) this.usage = true;
            else {
              // message_start: the message holds the model and the usage; nothing after it at the top level matters.
              const inner = this.inner;
              inner.scan(buf, value, to, whole);
              this.modelOpen = inner.modelOpen;
              this.modelClose = inner.modelClose;
              this.usage ||= inner.usage;
              return;
            }
          }
          next = value;
        }
        i = next - 1;
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
      else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        if (--depth <= 0) return;
      }
    }
  }
}
