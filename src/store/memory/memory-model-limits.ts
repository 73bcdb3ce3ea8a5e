/** The memory store's model level of rate and concurrency limits: one limit window per model, dropped when idle. */
import type { AdmitResult, LevelUse, LimitCheck, LimitEnd, Limits } from '../../limits/limits';
import { LimitWindow } from '../../limits/limit-window';

export class MemoryModelLimits {
  /** Model id -> its limit windows; dropped when nothing is held. */
  private readonly windows = new Map<string, LimitWindow>();

  constructor(
    private readonly now: () => number,
    private readonly windowMs: number,
  ) {}

  admit(model: string, check: LimitCheck): AdmitResult {
    let window = this.windows.get(model);
    if (!window) this.windows.set(model, (window = new LimitWindow(this.windowMs)));
    return window.admit('model', check, this.now());
  }

  end(model: string, requestId: string, how: LimitEnd): void {
    const window = this.windows.get(model);
    if (!window) return;
    const now = this.now();
    window.end(requestId, how, now);
    if (window.empty(now)) this.windows.delete(model);
  }

  renew(model: string, requestId: string, leaseMs: number): void {
    this.windows.get(model)?.renew(requestId, leaseMs, this.now());
  }

  use(model: string, limits: Limits): LevelUse {
    return (this.windows.get(model) ?? new LimitWindow(this.windowMs)).use(limits, this.now());
  }
}
