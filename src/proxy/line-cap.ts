/**
 * The longest line of an upstream's event stream that the proxy holds while waiting for its end (the SSE tap, the
 * chat-to-Messages translation): 1 MiB. A real event is far shorter (a chunk carries a token or a tool call's piece);
 * an upstream that sends one endless line would otherwise be buffered whole. Past it the stream is broken off, as a
 * stream the upstream reset is: the client's stream ends with an error event, the line is never forwarded, and the
 * request is charged as a broken stream (docs/streams-and-draining.md).
 */
export const MAX_STREAM_LINE_BYTES = 1024 * 1024;

/** The error a stream is broken off with when a line passes the cap. */
export function lineTooLong(): NodeJS.ErrnoException {
  return Object.assign(new Error(`the upstream sent an event line longer than ${MAX_STREAM_LINE_BYTES} bytes`), { code: 'ELINETOOLONG' });
}
