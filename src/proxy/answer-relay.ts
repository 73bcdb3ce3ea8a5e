/**
 * Relays a non-streamed answer to the client, two ways: parsed (buffered within the response limit, its model name
 * rewritten on bytes only when it differs), or scanned (relayed as it arrives, its model name and usage found on bytes
 * by a JsonTap, the client's backpressure pausing the upstream: an embeddings answer can be megabytes of floats).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { Model } from '../catalog/models';
import { apiError, type ApiError } from '../http/errors';
import { downstreamResponseHeaders } from '../http/http-headers';
import { JsonTap } from './json-tap';
import { rewriteModel } from './model-rewriter';
import type { AnswerDialect } from './pipeline/endpoint';
import type { Usage } from './usage';
import { collect } from './upstream-body';

/** What a relay asks of its exchange. */
export interface RelayHost {
  /** False once the exchange finished or the client left. */
  live(): boolean;
  /** Answers with an error, charging nothing. */
  refuse(err: ApiError): void;
  /** The answer is complete: charge its usage (`estimate`: our count of its output, asked only without usage). */
  settle(usage: Usage | undefined, estimate: () => number): void;
  /** The answer carries an id the upstream stores (called before the client gets it). */
  answered(answerId: string, usage: Usage | undefined): void;
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
        return host.refuse(apiError('upstream_error', 'The upstream returned a response that is not valid JSON.'));
      }
      if (typeof parsed !== 'object' || parsed === null) return host.refuse(NOT_AN_OBJECT);
      // The parse already says whether the upstream named the model otherwise; only then are the bytes searched.
      const out = typeof parsed.model === 'string' && parsed.model !== model.id ? rewriteModel(buf, model.idJson) : buf;
      const headers = downstreamResponseHeaders(proxyRes.headers);
      headers['content-length'] = out.length;
      const usage = answer.usage(parsed);
      const answerId = answer.answerId?.(parsed);
      if (answerId !== undefined) host.answered(answerId, usage);
      res.writeHead(status, headers);
      res.end(out);
      host.settle(usage, () => answer.outputTokens(parsed));
    },
    (err) => host.fail(err),
  );
}

/** Relays a JSON answer as it arrives; returns the tap, whose `usage` says what passed when the relay is cut short. */
export function relayScanned(
  res: ServerResponse,
  status: number,
  proxyRes: IncomingMessage,
  body: Readable,
  model: Model,
  answer: AnswerDialect,
  host: RelayHost,
): JsonTap {
  const tap = new JsonTap(model.idJson);
  let started = false;
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
      res.writeHead(status, downstreamResponseHeaders(proxyRes.headers));
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
    res.end();
    host.settle(answer.usage({ usage: tap.usage }), () => 0);
  });
  body.once('error', (err: NodeJS.ErrnoException) => host.fail(err));
  proxyRes.once('close', () => {
    if (!proxyRes.complete) host.fail(Object.assign(new Error('upstream closed the answer'), { code: 'ECONNRESET' }));
  });
  return tap;
}
