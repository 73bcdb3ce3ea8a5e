/**
 * The memory store's model level of rate and concurrency limits: one limit window per model, dropped when idle. The
 * bottom layer of MemoryStore (memory-store.ts), and on its own the model limits beside a host's serving store.
 */
import { DEFAULT_WINDOW_MS, type AdmitResult, type LevelUse, type LimitCheck, type LimitEnd, type Limits } from '../../limits/limits';
import { LimitWindow } from '../../limits/limit-window';
import type { ModelLimitStore } from '../ports/model-limit-store';

export interface MemoryModelLimitsOptions {
  /** The clock, in ms. Default Date.now. */
  now?: () => number;
  /** Length of the rpm and tpm windows. Default 60 s. */
  limitWindowMs?: number;
}

export class MemoryModelLimits implements ModelLimitStore {
  private readonly now: () => number;
  private readonly windowMs: number;
  /** Model id -> its limit windows; dropped when nothing is held. */
  private readonly modelWindows = new Map<string, LimitWindow>();

  constructor(options: MemoryModelLimitsOptions = {}) {
    this.now = options.now ?? Date.now;
    this.windowMs = options.limitWindowMs ?? DEFAULT_WINDOW_MS;
  }

  async admitModel(model: string, check: LimitCheck): Promise<AdmitResult> {
    let window = this.modelWindows.get(model);
    if (!window) this.modelWindows.set(model, (window = new LimitWindow(this.windowMs)));
    return window.admit('model', check, this.now());
  }

  async endModel(model: string, requestId: string, how: LimitEnd): Promise<void> {
    const window = this.modelWindows.get(model);
    if (!window) return;
    const now = this.now();
    window.end(requestId, how, now);
    if (window.empty(now)) this.modelWindows.delete(model);
  }

  async renewModel(model: string, requestId: string, leaseMs: number): Promise<void> {
    this.modelWindows.get(model)?.renew(requestId, leaseMs, this.now());
  }

  async modelUse(model: string, limits: Limits): Promise<LevelUse> {
    return (this.modelWindows.get(model) ?? new LimitWindow(this.windowMs)).use(limits, this.now());
  }
}
