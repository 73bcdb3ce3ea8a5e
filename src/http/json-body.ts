/**
 * Reads the completions route's body as JSON: within BODY_LIMIT, decoded from gzip/deflate/br, valid UTF-8. On the
 * hot path, so it is the few calls this needs rather than body-parser's general machinery; its failures carry
 * body-parser's error types, which the router's error handler maps to OpenAI-shaped 4xx. In a host app whose own
 * body parser ran first, the stream is already read: its result is taken instead (the body sent upstream is always
 * re-serialized, so it arrives byte-correct whatever parsed it).
 */
import { isUtf8 } from 'node:buffer';
import type { Readable, Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { NextFunction } from 'express';
import type { RoutedRequest, RoutedResponse } from './handler-chain';

/** An error in body-parser's shape: `type` names what went wrong, `status` the HTTP status. */
class BodyError extends Error {
  constructor(
    readonly type: string,
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function decoderFor(encoding: string): Transform | undefined {
  switch (encoding) {
    case 'gzip':
    case 'x-gzip':
      return createGunzip();
    case 'deflate':
      return createInflate();
    case 'br':
      return createBrotliDecompress();
    default:
      return undefined;
  }
}

export function jsonBody(limit: number) {
  return function readJsonBody(req: RoutedRequest, _res: RoutedResponse, next: NextFunction): void {
    if (req.readableEnded) return takeParsed(req, limit, next);
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > limit) {
      req.resume();
      return next(new BodyError('entity.too.large', 413, 'request entity too large'));
    }
    const charset = /;\s*charset=("?)([^";]+)\1/i.exec(req.headers['content-type'] ?? '')?.[2].toLowerCase();
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      req.resume();
      return next(new BodyError('charset.unsupported', 415, `unsupported charset "${charset}"`));
    }
    const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase();
    let source: Readable = req;
    if (encoding !== 'identity') {
      const decoder = decoderFor(encoding);
      if (!decoder) {
        req.resume();
        return next(new BodyError('encoding.unsupported', 415, `unsupported content encoding "${encoding}"`));
      }
      source = req.pipe(decoder);
    }

    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const fail = (err: BodyError) => {
      if (done) return;
      done = true;
      if (source !== req) source.destroy();
      req.unpipe();
      req.resume();
      next(err);
    };
    source.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) return fail(new BodyError('entity.too.large', 413, 'request entity too large'));
      chunks.push(chunk);
    });
    // A decoder's error (a body that is not what its Content-Encoding says) is the client's: a 400.
    source.once('error', (err: Error) => fail(new BodyError('entity.decode.failed', 400, err.message)));
    req.once('aborted', () => fail(new BodyError('request.aborted', 400, 'request aborted')));
    source.once('end', () => {
      if (done) return;
      done = true;
      parseInto(req, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size), next);
    });
  };
}

/** From this size on, the event loop turns between parsing a body and handling it. */
const YIELD_BYTES = 1 << 20;

function parseInto(req: RoutedRequest, buf: Buffer, next: NextFunction): void {
  if (!isUtf8(buf)) return next(new BodyError('encoding.invalid_utf8', 400, 'The request body is not valid UTF-8.'));
  try {
    req.body = JSON.parse(buf.toString('utf8'));
  } catch {
    return next(new BodyError('entity.parse.failed', 400, 'invalid JSON'));
  }
  // A megabyte body's parse and its request's validation and planning are each tens of milliseconds: not in one turn.
  if (buf.length >= YIELD_BYTES) setImmediate(next);
  else next();
}

/**
 * The body a host's parser already read: express.json()'s object as it is (within the host's own limit),
 * express.raw()'s Buffer or express.text()'s string parsed here. Nothing at all means another middleware consumed the
 * stream and kept nothing: the host's mistake, a 500 that says so.
 */
function takeParsed(req: RoutedRequest, limit: number, next: NextFunction): void {
  const body: unknown = req.body;
  if (Buffer.isBuffer(body) || typeof body === 'string') {
    const buf = typeof body === 'string' ? Buffer.from(body) : body;
    if (buf.length > limit) return next(new BodyError('entity.too.large', 413, 'request entity too large'));
    return parseInto(req, buf, next);
  }
  if (body === undefined) return next(new Error('the request body was read before tokenmeter and not kept in req.body'));
  next();
}
