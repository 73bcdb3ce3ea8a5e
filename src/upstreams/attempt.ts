/**
 * One attempt at one server: the request written, and its outcome up to the response head (an answer, or the error
 * that came first). What happens to the answer's body is the exchange's; a retry is the pool's.
 */
import { request as httpRequest, type ClientRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { cancelledError, type Cancellation } from './cancellation';
import type { UpstreamServer } from './server';

/** A request as it goes to any server of the pool. */
export interface Outgoing {
  method: string;
  /** Under the server's base URL: `/chat/completions`. */
  path: string;
  headers: OutgoingHttpHeaders;
  /** Written as the string it is: the socket encodes it once. */
  body: string | undefined;
}

export interface AttemptTimeouts {
  connectMs: number;
  /** The longest silence from the server, before and after its answer began. */
  idleMs: number;
}

/** The server answered: its response head is here, its body not yet read. */
export interface Answer {
  kind: 'answer';
  req: ClientRequest;
  res: IncomingMessage;
  /** The server went silent past the idle timeout (read when the body breaks off). */
  timedOut: () => boolean;
}

export interface AttemptError {
  kind: 'error';
  err: NodeJS.ErrnoException;
  timedOut: boolean;
  /** Sent on a kept-alive connection: a reset before any answer may be the server having closed it as we sent. */
  reusedSocket: boolean;
}

const timeoutError = () => Object.assign(new Error('upstream timed out'), { code: 'ETIMEDOUT' });

export function attempt(
  server: UpstreamServer,
  out: Outgoing,
  timeouts: AttemptTimeouts,
  cancellation: Cancellation,
): Promise<Answer | AttemptError> {
  if (cancellation.cancelled) return Promise.resolve({ kind: 'error', err: cancelledError(), timedOut: false, reusedSocket: false });
  const send = server.https ? httpsRequest : httpRequest;
  let req: ClientRequest;
  try {
    req = send({
      hostname: server.hostname,
      port: server.port,
      path: server.pathFor(out.path),
      method: out.method,
      headers: out.headers,
      agent: server.agent,
    });
  } catch (err) {
    // Node refuses a request it cannot write (a header it will not send): a failed try like any other.
    return Promise.resolve({ kind: 'error', err: err as NodeJS.ErrnoException, timedOut: false, reusedSocket: false });
  }
  let timedOut = false;
  const timeout = () => {
    timedOut = true;
    req.destroy(timeoutError());
  };
  req.setTimeout(timeouts.idleMs, timeout);
  // The caller leaving cuts the request, before its answer or while relaying it, until it closes.
  req.once(
    'close',
    cancellation.onCancel(() => req.destroy(cancelledError())),
  );
  req.once('socket', (socket) => {
    if (!socket.connecting) return;
    const timer = setTimeout(timeout, timeouts.connectMs);
    // Both listeners go once either fires: the socket outlives this request in the keep-alive pool, and a listener
    // left on it would keep the request (and whoever holds it) alive as long as the socket.
    const connected = () => {
      clearTimeout(timer);
      socket.off('connect', connected);
      socket.off('close', connected);
    };
    socket.once('connect', connected);
    socket.once('close', connected);
  });
  return new Promise((resolve) => {
    req.once('response', (res) => resolve({ kind: 'answer', req, res, timedOut: () => timedOut }));
    // Kept for the request's life (errors after the answer are the exchange's, which listens too): an 'error' with
    // no listener would end the process.
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ kind: 'error', err, timedOut, reusedSocket: req.reusedSocket }));
    req.end(out.body);
  });
}
