/** The one error handler: body-reading failures become OpenAI-shaped 4xx; anything else a 500 without a stack. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction } from 'express';
import { apiError, sendError } from './errors';
import type { Logger } from '../observability/logger';

/** What a route's error reaches: an Express error middleware, typed on node's objects (direct-routes.ts calls it too). */
export type RouteErrorHandler = (err: unknown, req: IncomingMessage, res: ServerResponse, next: NextFunction) => void;

/** What the handler reads of an error: body-parser's `type` and `status`, else only its message and stack. */
interface ThrownError {
  type?: string;
  status?: number;
  message?: string;
  stack?: string;
}

export function errorHandler(logger: Logger): RouteErrorHandler {
  // Four parameters: Express tells an error handler from a middleware by its arity.
  return (thrown, _req, res, _next) => {
    const err = (thrown ?? {}) as ThrownError;
    switch (err.type) {
      case 'entity.too.large':
        return sendError(res, apiError('request_too_large', 'The request body is too large.'));
      case 'entity.parse.failed':
        return sendError(res, apiError('invalid_json', 'The request body is not valid JSON.'));
      case 'encoding.invalid_utf8':
        return sendError(res, apiError('invalid_json', 'The request body is not valid UTF-8.'));
      case 'encoding.unsupported':
      case 'charset.unsupported':
        return sendError(res, apiError('unsupported_media_type', 'Send the body as uncompressed UTF-8 JSON.'));
      case 'entity.decode.failed':
        return sendError(res, apiError('invalid_request_error', 'The request body could not be decoded as its Content-Encoding says.'));
      case 'request.aborted':
      case 'request.size.invalid':
        return sendError(res, apiError('invalid_request_error', 'The request body ended early.'));
    }
    // body-parser's other 4xx (a body that does not decode as its Content-Encoding, say) carry a status, no type.
    if (err.status !== undefined && err.status >= 400 && err.status < 500) {
      return sendError(res, apiError('invalid_request_error', 'The request body could not be read (check its Content-Encoding).'));
    }
    logger.error({ err: err.message, stack: err.stack }, 'unhandled error');
    return sendError(res, apiError('internal_error', 'Internal error.'));
  };
}
