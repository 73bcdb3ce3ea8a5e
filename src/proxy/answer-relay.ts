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

/** What a relay asks of its exchange. */
export interface RelayHost {
  /** False once the exchange finished or the client left. */
  live(): boolean;
  /** Answers with an error, charging nothing. */
  refuse(err: ApiError): void;
  /**
   * The answer is complete: charge its usage (`estimate`: our count of its output, asked only without usage); resolves
   * with the charge to show once the store took it (undefined when the exchange had already finished).
   */
  settle(usage: Usage | undefined, estimate: () => number | Promise<number>): Promise<ShownCharge> | undefined;
  /** Our count of a parsed answer's output (off the event loop when it is long). */
  outputTokens(answer: Record<string, unknown>): number | Promise<number>;
  /** The answer carries an id the upstream stores (called before the client gets it). */
  answered(answer: AnswerIds, usage: Usage | undefined): void;
  fail(err: NodeJS.ErrnoException): void;
}

const NOT_AN_OBJECT = apiError('upstream_error', 'The upstream returned a response that is not a JSON object.');

/** Buffers, parses and relays a JSON answer. */
export function relayParsed(
  res: ServerResponse,
  status: number,
  proxyRes: IncomingMessage,
  body: Readable,
  limit: number,
  model: Model,
  answer: AnswerDialect,
  host: RelayHost,
): void {
  collect(
    body,
    limit,
    (buf) => {
      if (!host.live()) return;
      if (buf === undefined) {
        proxyRes.destroy();
        return host.refuse(apiError('upstream_error', 'The upstream response exceeded the size limit.'));
      }
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(buf.toString('utf8'));
      } catch {
        // Its content type says the usual cause: a stream (text/event-stream) where JSON was asked for.
        const type = proxyRes.headers['content-type'] ?? 'no content type';
        return host.refuse(apiError('upstream_error', `The upstream returned a response that is not valid JSON (${type}).`));
      }
      if (typeof parsed !== 'object' || parsed === null) return host.refuse(NOT_AN_OBJECT);
      // The parse already says whether the upstream named the model otherwise; only then are the bytes searched.
      const out = typeof parsed.model === 'string' && parsed.model !== model.id ? rewriteModel(buf, model.idJson) : buf;
      const usage = answer.usage(parsed);
      const answerId = answer.answerId?.(parsed);
      if (answerId !== undefined) host.answered(answerId, usage);
      const charged = host.settle(usage, () => host.outputTokens(parsed));
      charged?.then((c) => answerCharged(res, status, downstreamResponseHeaders(proxyRes.headers), out, c));
    },
    (err) => host.fail(err),
  );
}

/** Writes a whole answer with the charge in its head (unless the client already left). */
function answerCharged(res: ServerResponse, status: number, headers: OutgoingHttpHeaders, out: Buffer, c: ShownCharge): void {
  if (res.destroyed) return;
  headers['content-length'] = out.length;
  addChargeHeaders(headers, c);
  res.writeHead(status, headers);
  res.end(out);
}

/**
 * Relays a JSON answer scanned on bytes: held within `limit` until it is charged, past it relayed as it arrives.
 * Returns the tap, whose `usage` says what passed when the relay is cut short.
 */
export function relayScanned(
  res: ServerResponse,
  status: number,
  proxyRes: IncomingMessage,
  body: Readable,
  limit: number,
  model: Model,
  answer: AnswerDialect,
  host: RelayHost,
): JsonTap {
  const tap = new JsonTap(model.idJson);
  let started = false;
  /** The answer's bytes so far, while it is held; undefined once it is relayed as it arrives. */
  let held: Buffer[] | undefined = [];
  let size = 0;
  let waiting = false;
  const resume = () => {
    waiting = false;
    body.resume();
  };
  body.on('data', (chunk: Buffer) => {
    if (!host.live()) return;
    const out = tap.push(chunk);
    if (!started) {
      // Only a body that opens as a JSON object is relayed (and so charged); anything else is the upstream's error.
      if (!tap.wellFormed) {
        proxyRes.destroy();
        return host.refuse(NOT_AN_OBJECT);
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
    if (!host.live()) return;
    if (!started) return host.refuse(NOT_AN_OBJECT);
    const pieces = held;
    if (!pieces) res.end();
    const charged = host.settle(answer.usage({ usage: tap.usage }), () => 0);
    if (!pieces) return;
    const out = pieces.length === 1 ? pieces[0] : Buffer.concat(pieces, size);
    charged?.then((c) => answerCharged(res, status, downstreamResponseHeaders(proxyRes.headers), out, c));
  });
  body.once('error', (err: NodeJS.ErrnoException) => host.fail(err));
  proxyRes.once('close', () => {
    if (!proxyRes.complete) host.fail(Object.assign(new Error('upstream closed the answer'), { code: 'ECONNRESET' }));
  });
  return tap;
}
