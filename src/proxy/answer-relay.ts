/**
 * Relays a non-streamed answer to the client, two ways: parsed (buffered within the response limit, its model name
 * rewritten on bytes only when it differs), or scanned (its model name and usage found on bytes by a JsonTap, never
 * parsed whole: an embeddings answer can be megabytes of floats). Either is charged before its head is written, so the
 * head shows the charge (charge-shown.ts); a scanned answer past the response limit is relayed as it arrives instead,
 * the client's backpressure pausing the upstream, and its head cannot show the charge.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { Model } from '../catalog/models';
import { apiError, type ApiError } from '../http/errors';
import { downstreamResponseHeaders } from '../http/http-headers';
import { addChargeHeaders, type ShownCharge } from './charge-shown';
import { JsonTap } from './json-tap';
import { rewriteModel } from './model-rewriter';
import type { AnswerDialect, AnswerIds } from './pipeline/endpoint';
import type { Usage } from './usage';
import { collect } from './upstream-body';

/** How a non-streamed answer went, as far as its relay saw; the exchange settles it. */
export type AnswerOutcome =
  /**
   * The answer is complete: `usage` as it reported it, `estimate` our count of its output (asked only without usage),
   * `answerId` the id the upstream stores it under; `held` the answer to write once charged (answerCharged), unless it
   * was relayed as it arrived: then the exchange ends the response once it settled (ended first, the response would
   * look answered by someone else).
   */
  | { kind: 'ended'; usage: Usage | undefined; estimate: () => number | Promise<number>; answerId?: AnswerIds; held?: HeldAnswer }
  /** Not an answer we can relay (too large, not a JSON object): refused, nothing charged. */
  | { kind: 'refused'; error: ApiError }
  /** The upstream's answer broke off while it was read. */
  | { kind: 'broken'; err: NodeJS.ErrnoException };

/** A whole answer waiting for its charge, to show it in its head. */
export interface HeldAnswer {
  status: number;
  headers: OutgoingHttpHeaders;
  body: Buffer;
}

const NOT_AN_OBJECT = apiError('upstream_error', 'The upstream returned a response that is not a JSON object.');

/** Buffers and parses a JSON answer; resolves with it, its model name rewritten, held for its charge. */
export function relayParsed(
  status: number,
  proxyRes: IncomingMessage,
  body: Readable,
  limit: number,
  model: Model,
  answer: AnswerDialect,
  outputTokens: (answer: Record<string, unknown>) => number | Promise<number>,
): Promise<AnswerOutcome> {
  return new Promise((resolve) => {
    collect(
      body,
      limit,
      (buf) => {
        if (buf === undefined) {
          proxyRes.destroy();
          return resolve({ kind: 'refused', error: apiError('upstream_error', 'The upstream response exceeded the size limit.') });
        }
        let parsed: Record<string, unknown>;
        try {
          parsed = JSON.parse(buf.toString('utf8'));
        } catch {
          // Its content type says the usual cause: a stream (text/event-stream) where JSON was asked for.
          const type = proxyRes.headers['content-type'] ?? 'no content type';
          return resolve({
            kind: 'refused',
            error: apiError('upstream_error', `The upstream returned a response that is not valid JSON (${type}).`),
          });
        }
        if (typeof parsed !== 'object' || parsed === null) return resolve({ kind: 'refused', error: NOT_AN_OBJECT });
        // The parse already says whether the upstream named the model otherwise; only then are the bytes searched.
        const out = typeof parsed.model === 'string' && parsed.model !== model.id ? rewriteModel(buf, model.idJson) : buf;
        resolve({
          kind: 'ended',
          usage: answer.usage(parsed),
          estimate: () => outputTokens(parsed),
          answerId: answer.answerId?.(parsed),
          held: { status, headers: downstreamResponseHeaders(proxyRes.headers), body: out },
        });
      },
      (err) => resolve({ kind: 'broken', err }),
    );
  });
}

/** Writes a whole answer with the charge in its head (unless the client already left). */
export function answerCharged(res: ServerResponse, held: HeldAnswer, c: ShownCharge): void {
  if (res.destroyed) return;
  const { status, headers, body } = held;
  headers['content-length'] = body.length;
  addChargeHeaders(headers, c);
  res.writeHead(status, headers);
  res.end(body);
}

/**
 * Relays a JSON answer scanned on bytes: held within `limit` until it is charged, past it relayed as it arrives.
 * Returns the tap, whose `usage` says what passed when the relay is cut short, and the answer's outcome.
 */
export function relayScanned(
  res: ServerResponse,
  status: number,
  proxyRes: IncomingMessage,
  body: Readable,
  limit: number,
  model: Model,
  answer: AnswerDialect,
  signal: AbortSignal,
): { tap: JsonTap; outcome: Promise<AnswerOutcome> } {
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
  // Nothing more is relayed once the outcome is out, the client left, or the exchange cut the response.
  const live = () => !over && !signal.aborted && !res.destroyed;
  const outcome = new Promise<AnswerOutcome>((resolve) => {
    const finish = (o: AnswerOutcome) => {
      if (over) return;
      over = true;
      resolve(o);
    };
    body.on('data', (chunk: Buffer) => {
      if (!live()) return;
      const out = tap.push(chunk);
      if (!started) {
        // Only a body that opens as a JSON object is relayed (and so charged); anything else is the upstream's error.
        if (!tap.wellFormed) {
          proxyRes.destroy();
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
        res.writeHead(status, downstreamResponseHeaders(proxyRes.headers));
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
      if (!live()) return;
      if (!started) return finish({ kind: 'refused', error: NOT_AN_OBJECT });
      const pieces = held;
      const whole = pieces && (pieces.length === 1 ? pieces[0] : Buffer.concat(pieces, size));
      finish({
        kind: 'ended',
        usage: answer.usage({ usage: tap.usage }),
        estimate: () => 0,
        held: whole && { status, headers: downstreamResponseHeaders(proxyRes.headers), body: whole },
      });
    });
    body.once('error', (err: NodeJS.ErrnoException) => finish({ kind: 'broken', err }));
    proxyRes.once('close', () => {
      if (!proxyRes.complete)
        finish({ kind: 'broken', err: Object.assign(new Error('upstream closed the answer'), { code: 'ECONNRESET' }) });
    });
  });
  return { tap, outcome };
}
