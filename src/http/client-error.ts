/**
 * Requests refused below Express, by Node's HTTP parser or its request timeout, answered in the OpenAI error shape
 * rather than Node's bare status line: the server's `clientError` handler.
 */
import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from '../observability/logger';
import { apiError, errorBody, statusOf, type ApiError } from './errors';

/** What the client did wrong, by the error code Node's parser (llhttp) or server gives. */
function refusalFor(code: string | undefined): ApiError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return apiError('request_headers_too_large', 'The request headers are larger than the server accepts.');
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return apiError('request_too_large', 'The chunk extensions of the request body are larger than the server accepts.');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return apiError('request_timeout', 'The request was not received in time.');
    default:
      return apiError('malformed_http', 'The request is not valid HTTP/1.1 (its request line, a header or the body framing).');
  }
}

/** The whole HTTP/1.1 answer as bytes: written straight to the socket, as no ServerResponse exists here. */
function rawAnswer(err: ApiError): string {
  const status = statusOf(err);
  const body = JSON.stringify(errorBody(err));
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'Connection: close\r\n\r\n' +
    body
  );
}

/** The `clientError` listener: answers once when the socket can still take an answer, then closes it. */
export function clientErrorHandler(logger: Logger): (err: NodeJS.ErrnoException, socket: Duplex) => void {
  return function onClientError(err, socket) {
    // A reset or closed peer has nobody to answer; and bytes written into a response already under way would
    // corrupt it (a pipelined request failing while the one before it is being answered).
    const inFlight = (socket as { _httpMessage?: ServerResponse | null })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const refusal = refusalFor(err.code);
    logger.debug({ err: err.code ?? err.message, status: statusOf(refusal) }, 'request refused by the HTTP parser');
    socket.end(rawAnswer(refusal), () => socket.destroy());
  };
}
