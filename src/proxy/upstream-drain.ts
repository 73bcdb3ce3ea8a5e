/**
 * Reading on after the client left a stream: the upstream's usage is what the answer cost, hidden reasoning included,
 * so a client that hangs up just before the usage line must not pay for the text it saw alone. Nothing is forwarded;
 * the stream is read until its usage arrives or it ends, within the model's bound (`drain_seconds`), then let go.
 */

/** Why reading stopped: the whole usage came, the stream ended without it, broke off, or outlasted the bound. */
export type DrainOutcome = 'usage' | 'ended' | 'broken' | 'bound';

export const DRAIN_OUTCOMES: readonly DrainOutcome[] = ['usage', 'ended', 'broken', 'bound'];

/** One stream's drain: ends once, by its first outcome or its bound. */
export class UpstreamDrain {
  private readonly timer: NodeJS.Timeout;
  private over = false;

  constructor(
    boundMs: number,
    private readonly done: (outcome: DrainOutcome) => void,
  ) {
    this.timer = setTimeout(() => this.finish('bound'), boundMs);
  }

  /** Whether it ended already (what the stream still sends is then dropped). */
  get finished(): boolean {
    return this.over;
  }

  finish(outcome: DrainOutcome): void {
    if (this.over) return;
    this.over = true;
    clearTimeout(this.timer);
    this.done(outcome);
  }
}

/**
 * The completion tokens charged for a stream whose usage never came: the larger of what was streamed (our count,
 * reasoning included) and what the reservation held for output, since hidden work may have used all of it.
 */
export function drainedEstimate(streamed: number | Promise<number>, reservedOutput: number): number | Promise<number> {
  return typeof streamed === 'number' ? Math.max(streamed, reservedOutput) : streamed.then((n) => Math.max(n, reservedOutput));
}
