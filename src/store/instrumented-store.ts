/** A Store decorator that times every operation and counts failures, for the store metrics. */
import type { Metrics } from '../observability/metrics';
import type { Store } from './ports/store';

/** Metric `op` labels that predate accounts, kept so dashboards and alerts keep working; others are snake_case. */
const OP_LABELS: Partial<Record<keyof Store, string>> = {
  grantPackage: 'grant',
  findKeyId: 'lookup',
  revokeKey: 'revoke',
};

const snakeCase = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/**
 * Every function of the store is wrapped (so operations added to the contract are measured without touching this
 * file), but `close`, which is not a store operation worth timing.
 */
export function instrumentStore(store: Store, metrics: Metrics): Store {
  /**
   * One timed operation: two clock reads and the op's histogram child, bound once per op. prom-client's startTimer
   * would allocate two closures, two hrtime arrays and a copy of the labels on every call of the hot path.
   */
  function timed(op: string, method: (...args: unknown[]) => Promise<unknown>) {
    const duration = metrics.storeDuration.labels({ op });
    const errors = metrics.storeErrors.labels({ op });
    return function timedOperation(...args: unknown[]): Promise<unknown> {
      const started = performance.now();
      return method(...args).then(
        (value) => {
          duration.observe((performance.now() - started) / 1000);
          return value;
        },
        (err: unknown) => {
          duration.observe((performance.now() - started) / 1000);
          errors.inc();
          throw err;
        },
      );
    };
  }
  const wrapped: Record<string, unknown> = { kind: store.kind };
  const methods = new Set<string>();
  for (let proto: object | null = store; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto) as object | null) {
    for (const name of Object.getOwnPropertyNames(proto)) methods.add(name);
  }
  const target = store as unknown as Record<string, unknown>;
  for (const name of methods) {
    const fn = target[name];
    if (name === 'constructor' || typeof fn !== 'function') continue;
    const method = (fn as (...args: unknown[]) => Promise<unknown>).bind(store);
    if (name === 'close') {
      wrapped.close = method;
      continue;
    }
    const op = OP_LABELS[name as keyof Store] ?? snakeCase(name);
    wrapped[name] = timed(op, method);
  }
  return wrapped as unknown as Store;
}
