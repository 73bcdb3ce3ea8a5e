/**
 * The model-limits port, for the Meter: the model level of rate and concurrency limits, in the model's own slot
 * (the key's and the account's levels are counted inside `reserve`).
 */
import type { AdmitResult, LevelUse, LimitCheck, LimitEnd, Limits } from '../../limits/limits';

export interface ModelLimitStore {
  /**
   * Admits a request into the model's windows, or refuses it with nothing changed. Called only for models with
   * limits, before the reservation (and undone if that is refused).
   */
  admitModel(model: string, check: LimitCheck): Promise<AdmitResult>;
  /** The request lets go of the model's limits: slot freed, tpm corrected (LimitEnd). */
  endModel(model: string, requestId: string, how: LimitEnd): Promise<void>;
  /** Extends the request's concurrency lease on the model (with its reservation's). */
  renewModel(model: string, requestId: string, leaseMs: number): Promise<void>;
  /** The model's current use of its limits. */
  modelUse(model: string, limits: Limits): Promise<LevelUse>;
}
