/**
 * A JSON answer relayed on bytes: its model name and usage found by a JsonTap, never parsed whole (an embeddings
 * answer can be megabytes of floats). Held within the response limit until it is charged, so that its head shows the
 * charge (charge-shown.ts); past the limit relayed as it arrives, the client's backpressure pausing the upstream, and
 * its head cannot show the charge.
 */
import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { Answer } from '../upstreams/attempt';
import type { AnswerRelayContext } from './exchange-context';
import { JsonTap } from './json-tap';
import { NOT_AN_OBJECT } from './parsed-answer';
import { CLIENT_CLOSED, closedEarly, type AnswerHead, type RelayOutcome, type UpstreamFailure } from './relay-outcome';

/** Relays the scanned answer; resolves once it ended, broke off, or the client left (its response closed first). */
export function relayScanned(
  res: ServerResponse,
  upstream: Answer,
  head: AnswerHead,
  body: Readable,
  ctx: AnswerRelayContext,
  limit: number,
): Promise<RelayOutcome> {
  const { model, answer } = ctx;
  const { status, headers } = head;
  const tap = new JsonTap(model.idJson);
  let started = false;
  /** The answer's bytes so far, while it is held; undefined once it is relayed as it arrives. */
  let held: Buffer[] | undefined = [];
  let size = 0;
  let waiting = false;
  let over = false;
  const resume = () => {
    waiting = false;
    body.resume();
  };
  return new Promise<RelayOutcome>((resolve) => {
    const finish = (o: RelayOutcome) => {
      if (over) return;
      over = true;
      res.off('close', gone);
      resolve(o);
    };
    // What passed is charged when the answer is cut short: the upstream did the work.
    const cut = (status: number, failure?: UpstreamFailure) =>
      finish({ kind: 'served', status, usage: answer.usage({ usage: tap.usage }), estimate: () => 0, reply: { kind: 'over' }, failure });
    const gone = () => {
      upstream.res.destroy();
      upstream.req.destroy();
      cut(CLIENT_CLOSED);
    };
    res.once('close', gone);
    const broken = (err: NodeJS.ErrnoException) => {
      if (over) return;
      upstream.res.destroy();
      res.destroy();
      cut(res.statusCode, { kind: upstream.timedOut() ? 'timeout' : 'mid_stream', err });
    };
    body.on('data', (chunk: Buffer) => {
      if (over) return;
      const out = tap.push(chunk);
      if (!started) {
        // Only a body that opens as a JSON object is relayed (and so charged); anything else is the upstream's error.
        if (!tap.wellFormed) {
          upstream.res.destroy();
          return finish({ kind: 'refused', error: NOT_AN_OBJECT });
        }
        if (out.length === 0) return;
        started = true;
      }
      if (held) {
        size += out.length;
        if (size <= limit) {
          held.push(out);
          return;
        }
        res.writeHead(status, headers);
        for (const piece of held) res.write(piece);
        held = undefined;
      }
      if (out.length > 0 && !res.write(out) && !waiting) {
        waiting = true;
        body.pause();
        res.once('drain', resume);
      }
    });
    body.once('end', () => {
      if (over) return;
      if (!started) return finish({ kind: 'refused', error: NOT_AN_OBJECT });
      const pieces = held;
      const whole = pieces && (pieces.length === 1 ? pieces[0] : Buffer.concat(pieces, size));
      const usage = answer.usage({ usage: tap.usage });
      const reply = whole ? { kind: 'held' as const, answer: { status, headers, body: whole } } : { kind: 'end' as const };
      finish({ kind: 'served', status, usage, estimate: () => 0, reply });
    });
    body.once('error', broken);
    upstream.res.once('close', () => {
      if (!upstream.res.complete) broken(closedEarly('answer'));
    });
  });
}
