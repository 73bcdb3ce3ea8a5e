/**
 * A caller's leaving, as the pool hears of it: a flag, and one listener at a time (the pool either waits for a free
 * slot or has one try under way, never both). It does what an AbortController did here at a fraction of its price: an
 * AbortSignal handed to http.request cost some 30 µs a request in the Responses profile (the controller, its
 * EventTarget and listener records, and Node's abort hooks on the request and its end-of-stream), on every request,
 * for a client that almost never leaves before the answer.
 */
export class Cancellation {
  private done = false;
  private listener: (() => void) | undefined;

  get cancelled(): boolean {
    return this.done;
  }

  /** The caller left: the listener (if any) is called, once. */
  cancel(): void {
    if (this.done) return;
    this.done = true;
    const listener = this.listener;
    this.listener = undefined;
    listener?.();
  }

  /** Calls `fn` when cancelled (not if already: check `cancelled` first), in place of any listener before; returns what takes it off. */
  onCancel(fn: () => void): () => void {
    this.listener = fn;
    return () => {
      if (this.listener === fn) this.listener = undefined;
    };
  }
}

/** A cancellation that a response's close cancels: its client left (before the answer, or while it is relayed). */
export function cancelledOnClose(res: { once(event: 'close', listener: () => void): unknown }): Cancellation {
  const cancellation = new Cancellation();
  res.once('close', () => cancellation.cancel());
  return cancellation;
}

/** The error a try cut short by its caller's leaving ends with (as Node names an aborted request's). */
export function cancelledError(): NodeJS.ErrnoException {
  return Object.assign(new Error('The operation was aborted'), { name: 'AbortError', code: 'ABORT_ERR' });
}
