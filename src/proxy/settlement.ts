/**
 * One exchange's reservation, settled exactly once: charged at the answer's usage (or our counts, when the upstream
 * reported none) and recorded by the meter, or released when nothing was served; then the client's response is
 * finished as the relay's outcome says (relay-outcome.ts), a whole answer showing its charge in its head.
 */
import type { ServerResponse } from 'node:http';
import { sendError, type ApiError } from '../http/errors';
import { charged } from '../http/request-context';
import { charge } from '../metering/metering';
import { answerCharged, type ShownCharge } from './charge-shown';
import type { ExchangeContext, ExchangeDeps } from './exchange-context';
import { reservedToolTokens, type HostedToolPlan } from './hosted-tool-plan';
import type { RelayOutcome } from './relay-outcome';
import type { Usage } from './usage';

/** What a charge is made of: the upstream's usage, if it reported one, else our counts (`estimate`: the output's). */
export interface Chargeable {
  usage: Usage | undefined;
  status: number;
  estimate: () => number | Promise<number>;
}

/** A reservation released shows no charge: nothing was. */
const NOTHING: ShownCharge = { chargedTokens: 0, balance: undefined };

export class ExchangeSettlement {
  private settled = false;
  /** The charge once made: asked again, the same charge. */
  private shown: Promise<ShownCharge> | undefined;

  constructor(
    private readonly deps: Pick<ExchangeDeps, 'meter' | 'metrics' | 'logger'>,
    private readonly ctx: ExchangeContext,
    private readonly res: ServerResponse,
  ) {}

  /** Whether the reservation was charged or released already. */
  get done(): boolean {
    return this.settled;
  }

  /** Settles what the relay saw, then finishes the response as it says. */
  settleOutcome(outcome: RelayOutcome): void {
    switch (outcome.kind) {
      case 'refused':
        return this.refuse(outcome.error);
      case 'left':
        return this.release();
      case 'charged':
        return;
      case 'served': {
        const shown = this.charge(outcome);
        const reply = outcome.reply;
        if (reply.kind === 'end') return void (this.res.writableEnded || this.res.end(reply.last));
        if (reply.kind === 'held') void shown.then((c) => answerCharged(this.res, reply.answer, c));
      }
    }
  }

  /** Answers with an error and returns the reservation: nothing was served, nothing is charged. */
  refuse(err: ApiError): void {
    if (this.settled) return;
    sendError(this.res, err);
    this.release();
  }

  release(): void {
    if (this.settled) return;
    this.settled = true;
    const { meter } = this.deps;
    meter.release(this.ctx.accountId, this.ctx.requestId);
    meter.endModel(this.ctx.model, this.ctx.requestId, { kind: 'release' });
    this.ctx.lease.stop();
  }

  /**
   * Charges once: the upstream's usage when it reported one, else our counts (`estimate` runs only then). Resolves
   * with the charge to show once the store took it (its balance undefined when the store did not say at once).
   */
  charge(served: Chargeable): Promise<ShownCharge> {
    if (this.settled) return this.shown ?? Promise.resolve(NOTHING);
    this.settled = true;
    const { usage, status } = served;
    if (usage) return (this.shown = this.record({ usage, status, estimated: false }));
    // Long texts are counted off the event loop; the lease is held (and the meter's drain waits) until they are charged.
    const counts = [this.ctx.promptTokens(), served.estimate()];
    const counted = ([promptTokens, completionTokens]: number[]) =>
      this.record({ usage: { promptTokens, completionTokens }, status, estimated: true });
    if (counts.every((n) => typeof n === 'number')) return (this.shown = counted(counts as number[]));
    return (this.shown = Promise.all(counts).then(counted));
  }

  private record(line: { usage: Usage; status: number; estimated: boolean }): Promise<ShownCharge> {
    const { ctx, deps } = this;
    const { usage, status, estimated } = line;
    const { promptTokens, completionTokens } = usage;
    const cachedTokens = usage.cachedTokens ?? 0;
    const reasoningTokens = usage.reasoningTokens ?? 0;
    const tools = toolCharge(ctx.hostedTools, usage);
    const chargedTokens = charge(ctx.model, promptTokens, completionTokens, cachedTokens, usage.cacheWriteTokens) + tools.tokens;
    if (completionTokens > ctx.reservedOutput) this.overrun(completionTokens);
    const balance = deps.meter.settle({
      accountId: ctx.accountId,
      keyId: ctx.keyId,
      requestId: ctx.requestId,
      model: ctx.model.id,
      endpoint: ctx.endpoint,
      promptTokens,
      completionTokens,
      cachedTokens,
      reasoningTokens,
      ...(tools.calls > 0 ? { toolCalls: tools.calls, toolTokens: tools.tokens } : {}),
      chargedTokens,
      estimated,
      stream: ctx.stream,
      status,
    });
    deps.meter.endModel(ctx.model, ctx.requestId, { kind: 'settle', tokens: chargedTokens });
    // Only now: the meter's drain must see this settlement queued before it sees the request let go of its lease.
    ctx.lease.stop();
    charged(this.res, { promptTokens, completionTokens, cachedTokens, reasoningTokens, chargedTokens, estimated });
    return balance.then((b) => ({ chargedTokens, balance: b, toolTokens: tools.tokens }));
  }

  /** The upstream produced more than was reserved (it ignored the cap we sent): charged all the same, and told. */
  private overrun(completionTokens: number): void {
    const { model, endpoint, requestId, reservedOutput } = this.ctx;
    this.deps.metrics.outputOverrun.inc({ model: model.id, endpoint }, completionTokens - reservedOutput);
    this.deps.logger.warn({ requestId, model: model.id, reservedOutput, completionTokens }, 'upstream produced more than was reserved');
  }
}

/**
 * The tool line of a charge: each call the answer reports at its tool's price (an item of no tool the request named
 * at the dearest); the reserved calls when the answer reports none to read (no usage came, or chat's fixed search).
 */
function toolCharge(plan: HostedToolPlan | undefined, usage: { hostedCalls?: string[] } | undefined): { calls: number; tokens: number } {
  if (!plan) return { calls: 0, tokens: 0 };
  const reported = usage?.hostedCalls;
  if (plan.fixed || reported === undefined) return { calls: plan.calls, tokens: reservedToolTokens(plan) };
  let tokens = 0;
  for (const item of reported) tokens += plan.prices.get(item) ?? plan.perCall;
  return { calls: reported.length, tokens };
}
