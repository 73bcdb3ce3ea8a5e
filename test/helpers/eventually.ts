/**
 * Polls until a check passes, for effects that land asynchronously in another process. Bounded: past `timeoutMs` it
 * throws, naming `what` it waited for, the bound, and the check's last failure (an expect's diff says what it saw).
 */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = 5_000, what = 'a condition'): Promise<T> {
  const started = Date.now();
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() - started > timeoutMs) {
        const last = err instanceof Error ? err : new Error(String(err));
        throw new Error(`waited ${timeoutMs} ms for ${what}; the last check said: ${last.message}`, { cause: last });
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}
