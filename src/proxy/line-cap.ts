/**
 * The longest line of an upstream's event stream that the proxy holds while waiting for its end (the SSE tap, the
 * chat-to-Messages translation): 1 MiB. A real event is far shorter (a chunk carries a token or a tool call's piece);
 * an upstream that sends one endless line would otherwise be buffered whole. Past it the stream is broken off, as a
 * stream the upstream reset is: the client's stream ends with an error event, the line is never forwarded, and the
 * request is charged as a broken stream (docs/streams-and-draining.md).
 */
export const MAX_STREAM_LINE_BYTES = 1024 * 1024;

/**
 * Bytes a line may hold per echoed prompt character beyond the cap: `echo: true` puts the whole prompt in the stream's
 * first event, one line as long as the request (JSON escapes make a UTF-16 unit at most 6 bytes; prompt logprobs
 * beside it add more). So a stream's cap grows with its own echo, which BODY_LIMIT bounds: memory stays proportional
 * to what the client sent.
 */
export const ECHO_LINE_BYTES_PER_CHAR = 16;

/** The line cap of a stream whose first event echoes `echoedChars` characters of the prompt. */
export function lineCapFor(echoedChars = 0): number {
  return MAX_STREAM_LINE_BYTES + ECHO_LINE_BYTES_PER_CHAR * echoedChars;
}

/** The error a stream is broken off with when a line passes the cap. */
export function lineTooLong(cap = MAX_STREAM_LINE_BYTES): NodeJS.ErrnoException {
  return Object.assign(new Error(`the upstream sent an event line longer than ${cap} bytes`), { code: 'ELINETOOLONG' });
}
