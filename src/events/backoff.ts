/**
 * The retry schedule: after the nth failed attempt the next comes 10 s × 2^(n−1) later, at most an hour apart, until
 * a day after the event was queued; then the delivery is failed (visible, and redeliverable by hand).
 */
export const FIRST_RETRY_MS = 10_000;
export const MAX_RETRY_MS = 3_600_000;
export const GIVE_UP_AFTER_MS = 24 * 3_600_000;

/** When to try again after `attempts` failed attempts, or undefined to give up. `queuedMs`: when it was queued. */
export function nextAttemptAt(attempts: number, queuedMs: number, nowMs: number, firstRetryMs = FIRST_RETRY_MS): number | undefined {
  const at = nowMs + Math.min(firstRetryMs * 2 ** Math.max(0, attempts - 1), MAX_RETRY_MS);
  return at - queuedMs > GIVE_UP_AFTER_MS ? undefined : at;
}
