/**
 * One metered request after its reservation, at one model. Until the pool hands on one server's answer it aborts the
 * pool's tries when the client leaves; from the answer on, the relay (answer-relay.ts) answers the client and says how
 * it went, and the settlement (settlement.ts) charges or releases the reservation exactly once. Which server, and
 * trying another, is the pool's (src/upstreams/pool.ts), before this sees an answer.
 */
import type { ServerResponse } from 'node:http';
import type { ApiError } from '../http/errors';
import type { Answer } from '../upstreams/attempt';
import { Cancellation } from '../upstreams/cancellation';
import { relayAnswer } from './answer-relay';
import type { ExchangeContext, ExchangeDeps, RelayPorts } from './exchange-context';
import { ExchangeSettlement } from './settlement';
import { upstreamErrorFrom, upstreamFailure } from './upstream-errors';
export type { ExchangeContext, ExchangeDeps } from './exchange-context';

export class Exchange {
  private clientGone = false;
  /** Cancels the pool's tries when the client leaves before an answer. */
  readonly cancellation = new Cancellation();
  private readonly settlement: ExchangeSettlement;
  private readonly started = performance.now();

  constructor(
    private readonly deps: ExchangeDeps,
    private readonly ctx: ExchangeContext,
    private readonly res: ServerResponse,
  ) {
    this.settlement = new ExchangeSettlement(deps, ctx, res);
    res.once('close', this.onClose);
  }

  /** The client left before an answer: the pool's tries stop, and nothing was served. */
  private readonly onClose = () => {
    if (this.settlement.done) return;
    this.clientGone = true;
    this.cancellation.cancel();
    this.settlement.release();
  };

  /** Whether the client left (or another exchange took over). */
  get gone(): boolean {
    return this.clientGone || this.settlement.done;
  }

  /** The pool's one answer: relayed to the client, and what came of it settled. */
  async answered(answer: Answer): Promise<void> {
    this.res.off('close', this.onClose);
    const { metrics } = this.deps;
    const { model } = this.ctx;
    metrics.upstreamDuration.observe({ model: model.id }, (performance.now() - this.started) / 1000);
    if (this.gone) return void answer.res.destroy();
    const outcome = await relayAnswer(answer, this.res, this.ctx, this.relayPorts());
    this.settlement.settleOutcome(outcome);
    // What the operator sees of it: the upstream's failures, a drain's end (a stream's first bytes: firstEvent).
    if (outcome.kind === 'left') return;
    const failure = outcome.failure;
    if (failure) {
      metrics.upstreamErrors.inc({ model: model.id, kind: failure.kind });
      if (failure.err)
        this.deps.logger.warn({ requestId: this.ctx.requestId, err: failure.err.code ?? failure.err.message }, 'upstream answer failed');
    }
    if (outcome.kind === 'served' && outcome.drained) metrics.streamDrains.inc({ outcome: outcome.drained });
  }

  private relayPorts(): RelayPorts {
    const { deps, ctx, settlement } = this;
    return {
      limit: deps.upstreamResponseLimit,
      count: deps.count,
      charge: (usage, status) => settlement.charge({ usage, status, estimate: () => 0 }),
      drainMs: () => (deps.shuttingDown() ? 0 : ctx.model.drainMs),
      activeStreams: deps.metrics.activeStreams,
      firstEvent: () => deps.metrics.timeToFirstToken.observe({ model: ctx.model.id }, (performance.now() - this.started) / 1000),
    };
  }

  /**
   * A fallback model takes over: its own reservation replaces this one (same request id), so nothing is released;
   * this exchange just lets go of the client and its lease.
   */
  handOver(): void {
    this.res.off('close', this.onClose);
    this.clientGone = true;
    this.ctx.lease.stop();
  }

  /** The pool could not answer: every try failed before an answer (`status`: the last one's, drained). */
  unanswered(err: NodeJS.ErrnoException | undefined, timedOut: boolean, status: number | undefined): void {
    if (this.gone) return;
    this.deps.metrics.upstreamErrors.inc({ model: this.ctx.model.id, kind: status ? 'status' : timedOut ? 'timeout' : 'connect' });
    this.deps.logger.warn({ requestId: this.ctx.requestId, err: err?.code ?? err?.message, status }, 'upstream request failed');
    if (status !== undefined || !err) return this.refuse(upstreamErrorFrom(status ?? 502, undefined));
    this.refuse(upstreamFailure(err, timedOut));
  }

  /** Answers with an error and returns the reservation: nothing was served, nothing is charged. */
  refuse(err: ApiError): void {
    if (this.clientGone) return;
    this.settlement.refuse(err);
  }
}
