/**
 * Reserve, hold, settle: turns token counts into charges (with the model's weights), keeps reservations' leases alive
 * while requests are in flight, and makes sure every settlement reaches the store, retrying while it is away.
 */
import type { Journal } from './journal';
import { LostReserves } from './lost-reserves';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import type { Model } from '../catalog/models';
import type { AdmitResult, LimitEnd, Limits } from '../limits/limits';
import type { ReserveResult, Settlement } from '../store/records/metering';
import type { MeteringStore } from '../store/ports/metering-store';
import type { ModelLimitStore } from '../store/ports/model-limit-store';
import { charge, reservedPrompt } from './charge';

export { charge };

export interface MeterOptions {
  store: MeteringStore;
  /** The model level of the limits (admitModel, endModel, renewModel). */
  modelLimits: ModelLimitStore;
  leaseMs: number;
  logger: Logger;
  /** Counts settled tokens and the backlog. Optional, so the meter works on its own. */
  metrics?: Metrics;
  /** Keeps settlements the store did not take across restarts; its leftovers are retried at once. */
  journal?: Journal;
  /** Most settlements kept for retry while the store is away. Default 10000. */
  maxPending?: number;
  /** First retry delay; doubles up to 30 s. Default 500 ms. */
  retryBaseMs?: number;
  /** Told of each settlement the store took, once (replays from the journal included; duplicates never). */
  onSettle?: (settlement: Settlement) => void | Promise<void>;
}

export interface Lease {
  stop(): void;
}

export class Meter {
  private readonly store: MeteringStore;
  private readonly modelLimits: ModelLimitStore;
  private readonly leaseMs: number;
  private readonly logger: Logger;
  private readonly metrics: Metrics | undefined;
  private readonly journal: Journal | undefined;
  private readonly maxPending: number;
  private readonly retryBaseMs: number;
  private readonly onSettle: MeterOptions['onSettle'];
  private readonly pending = new Map<string, { settlement: Settlement; attempt: number; timer: NodeJS.Timeout }>();
  private inFlight = 0;
  /** Requests holding a reservation (between hold() and their lease's stop()). */
  private holding = 0;
  private idleWaiters: (() => void)[] = [];
  private readonly lost: LostReserves;

  constructor(options: MeterOptions) {
    this.store = options.store;
    this.modelLimits = options.modelLimits;
    this.leaseMs = options.leaseMs;
    this.logger = options.logger;
    this.metrics = options.metrics;
    this.journal = options.journal;
    this.maxPending = options.maxPending ?? 10_000;
    this.retryBaseMs = options.retryBaseMs ?? 500;
    this.onSettle = options.onSettle;
    const release = (accountId: string, requestId: string) => this.store.release(accountId, requestId);
    this.lost = new LostReserves({ release, logger: this.logger, baseMs: this.retryBaseMs, max: this.maxPending });
    const leftovers = this.journal?.unsettled() ?? [];
    if (leftovers.length > 0) this.logger.warn({ count: leftovers.length }, 'replaying settlements from the journal');
    for (const s of leftovers) void this.attempt(s, 0);
  }

  /**
   * Reserves the prompt estimate plus `allowance` completion tokens per choice, lowered to what the account's balance
   * and the key's cap cover. `keyId` null: charged to the account without a key.
   */
  reserve(args: {
    accountId: string;
    keyId: string | null;
    requestId: string;
    model: Model;
    promptTokens: number;
    /** Tokens held for hosted tool calls (hosted-tools.ts), on top of the prompt's. Default 0. */
    toolTokens?: number;
    allowance: number;
    /** The allowance is the model's default (the client named no max_tokens): tpm limits may lower it. */
    defaultAllowance?: boolean;
    choices: number;
  }): Promise<ReserveResult> {
    const { accountId, requestId } = args;
    return this.store
      .reserve({
        accountId: args.accountId,
        keyId: args.keyId,
        requestId: args.requestId,
        model: args.model.id,
        fixed: reservedPrompt(args.model, args.promptTokens) + (args.toolTokens ?? 0),
        unit: args.model.outputWeight * args.choices,
        allowance: args.allowance,
        defaultAllowance: args.defaultAllowance,
        leaseMs: this.leaseMs,
      })
      .catch((err: unknown) => {
        // It may have run all the same: released once the store answers again (lost-reserves.ts).
        this.lost.add(accountId, requestId);
        throw err;
      });
  }

  /** Tokens a request counts against tpm limits when admitted: what `reserve` asks for. */
  reservationTokens(model: Model, promptTokens: number, allowance: number, choices: number): number {
    return Math.ceil(reservedPrompt(model, promptTokens) + allowance * model.outputWeight * choices);
  }

  /** The model level of the limits (its own slot), for a model that has limits; before the reservation. */
  admitModel(modelId: string, limits: Limits, requestId: string, tokens: number): Promise<AdmitResult> {
    return this.modelLimits.admitModel(modelId, { limits, tokens, requestId, leaseMs: this.leaseMs });
  }

  /**
   * Lets go of a model's limits (no-op for a model without). Best effort: a failure can only over-count, until the
   * entry leaves the window or the slot's lease lapses; it never lets more through.
   */
  endModel(model: Model, requestId: string, how: LimitEnd): void {
    if (!model.limits) return;
    this.modelLimits.endModel(model.id, requestId, how).catch((err: Error) => {
      this.logger.warn({ requestId, err: err.message }, 'model limit release failed; its lease and window will free it');
    });
  }

  /** Renews the reservation's lease (and the model's concurrency slot, when it has one) at a third of its length. */
  hold(accountId: string, requestId: string, model?: Model): Lease {
    const slot = model?.limits?.maxConcurrent !== undefined ? model.id : undefined;
    const warn = (err: Error) => this.logger.warn({ requestId, err: err.message }, 'lease renewal failed');
    const timer = setInterval(
      () => {
        this.store.renew(accountId, requestId, this.leaseMs).catch(warn);
        if (slot !== undefined) this.modelLimits.renewModel(slot, requestId, this.leaseMs).catch(warn);
      },
      Math.max(10, Math.floor(this.leaseMs / 3)),
    );
    timer.unref();
    this.holding++;
    let held = true;
    return {
      stop: () => {
        clearInterval(timer);
        if (!held) return;
        held = false;
        this.holding--;
        this.notifyIfIdle();
      },
    };
  }

  /** Whether new requests may be taken: false once the retry queue is full (fail closed rather than lose usage). */
  accepting(): boolean {
    return this.pending.size < this.maxPending;
  }

  /**
   * Charges a finished request. Never rejects: a store failure queues the settlement for retry. Resolves with the
   * account's balance after the charge when the store took it at once and said (else undefined), for the answer to show.
   */
  settle(settlement: Settlement): Promise<number | undefined> {
    return this.attempt(settlement, 0);
  }

  /** Returns a reservation unused. A failure is only logged: the lease returns it on its own. */
  release(accountId: string, requestId: string): void {
    this.inFlight++;
    this.store
      .release(accountId, requestId)
      .catch((err: Error) => this.logger.warn({ requestId, err: err.message }, 'release failed; the lease will return the reservation'))
      .finally(() => this.done());
  }

  /** Settlements not yet confirmed by the store. */
  backlog(): number {
    return this.pending.size + this.inFlight;
  }

  /** Resolves when no request holds a reservation and nothing is left to settle (or false after `timeoutMs`). */
  async drain(timeoutMs: number): Promise<boolean> {
    if (this.idle()) return true;
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.idleWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  /** Stops retry timers (tests, shutdown after drain). */
  stop(): void {
    for (const p of this.pending.values()) clearTimeout(p.timer);
    this.pending.clear();
    this.lost.stop();
  }

  private attempt(settlement: Settlement, attempt: number): Promise<number | undefined> {
    this.inFlight++;
    this.metrics?.settleBacklog.set(this.backlog());
    return this.store.settle(settlement).then(
      (result) => {
        this.pending.delete(settlement.requestId);
        this.forget(settlement.requestId);
        if (result.kind === 'settled') {
          this.metrics?.settled(settlement);
          if (this.onSettle) this.tell(this.onSettle, settlement);
        }
        if (result.kind === 'duplicate' && attempt === 0) {
          this.logger.warn({ requestId: settlement.requestId }, 'settlement was already recorded');
        }
        this.done();
        return result.kind === 'settled' ? result.balance : undefined;
      },
      (err: Error) => {
        this.remember(settlement);
        const delay = Math.min(this.retryBaseMs * 2 ** attempt, 30_000);
        this.logger.error({ requestId: settlement.requestId, attempt, err: err.message }, 'settle failed; will retry');
        const timer = setTimeout(() => {
          this.pending.delete(settlement.requestId);
          void this.attempt(settlement, attempt + 1);
        }, delay);
        timer.unref();
        this.pending.set(settlement.requestId, { settlement, attempt, timer });
        this.done();
        return undefined;
      },
    );
  }

  /**
   * Hands a stored settlement to the host's callback: not awaited, and whatever it throws or rejects with is only
   * logged, so a failing or slow callback can neither delay the request nor make the settlement look failed.
   */
  private tell(onSettle: NonNullable<MeterOptions['onSettle']>, settlement: Settlement): void {
    const failed = (err: unknown) =>
      this.logger.error({ requestId: settlement.requestId, err: (err as Error)?.message ?? String(err) }, 'the onSettle callback failed');
    try {
      // Any thenable the callback returns: its rejection must not become an unhandled one.
      Promise.resolve(onSettle(Object.freeze({ ...settlement }))).catch(failed);
    } catch (err) {
      failed(err);
    }
  }

  /** Journals a settlement the store did not take, so a restart cannot lose it. */
  private remember(settlement: Settlement): void {
    try {
      this.journal?.record(settlement);
    } catch (err) {
      this.logger.error({ requestId: settlement.requestId, err: (err as Error).message }, 'cannot write the settlement journal');
    }
  }

  private forget(requestId: string): void {
    try {
      this.journal?.done(requestId);
    } catch (err) {
      this.logger.error({ requestId, err: (err as Error).message }, 'cannot write the settlement journal');
    }
  }

  private done(): void {
    this.inFlight--;
    this.metrics?.settleBacklog.set(this.backlog());
    this.notifyIfIdle();
  }

  private idle(): boolean {
    return this.holding === 0 && this.backlog() === 0;
  }

  private notifyIfIdle(): void {
    if (!this.idle()) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w();
  }
}
