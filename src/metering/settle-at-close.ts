/**
 * How the meter's work ends when the process closes: requests and drains under way get the time given (the shutdown
 * grace's rest; a drain ends sooner by its own bound), then whatever still reads an upstream is cut and settles on
 * what it saw, counted while the count worker is still up. Only then may the caller close the counter and the store.
 */
import type { Logger } from '../observability/logger';
import type { Meter } from './metering';

/** Time for the settlements of what was cut to reach the store (their counts included). */
export const SETTLE_AFTER_CUT_MS = 10_000;

export async function settleAtClose(meter: Meter, timeoutMs: number, cut: () => void, logger: Logger): Promise<void> {
  if (await meter.drain(timeoutMs)) return;
  logger.warn({ backlog: meter.backlog() }, 'requests still under way at close: cutting them; each settles on what it saw');
  cut();
  if (!(await meter.drain(SETTLE_AFTER_CUT_MS))) {
    logger.error({ backlog: meter.backlog() }, 'settlements still pending at close; the journal keeps them');
  }
}
