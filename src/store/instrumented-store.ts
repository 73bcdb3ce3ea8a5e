/**
 * Timing for the store metrics: one typed wrapper per port, each operation timed under its `op` label and its
 * failures counted. The labels are the dashboards' and alerts' (config/grafana, config/prometheus): keep them.
 */
import type { Metrics } from '../observability/metrics';
import type { AccountStore } from './ports/account-store';
import type { EventOutbox } from './ports/event-outbox';
import type { KeyLookup } from './ports/key-lookup';
import type { KeyStore } from './ports/key-store';
import type { MeteringStore } from './ports/metering-store';
import type { ModelLimitStore } from './ports/model-limit-store';
import { isWholeStore, type ServingStore, type Store } from './ports/store';
import type { UsageLedger } from './ports/usage-ledger';

/** Wraps one store operation so each call is timed under `op`. */
export type Timed = <A extends unknown[], R>(op: string, operation: (...args: A) => Promise<R>) => (...args: A) => Promise<R>;

/**
 * Two clock reads and the op's histogram child, bound once per op. prom-client's startTimer would allocate two
 * closures, two hrtime arrays and a copy of the labels on every call of the hot path.
 */
export function storeTimer(metrics: Metrics): Timed {
  return (op, operation) => {
    const duration = metrics.storeDuration.labels({ op });
    const errors = metrics.storeErrors.labels({ op });
    return function timedOperation(...args) {
      const started = performance.now();
      return operation(...args).then(
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
  };
}

export function timedMetering(s: MeteringStore, timed: Timed): MeteringStore {
  return {
    kind: s.kind,
    reserve: timed('reserve', s.reserve.bind(s)),
    renew: timed('renew', s.renew.bind(s)),
    release: timed('release', s.release.bind(s)),
    settle: timed('settle', s.settle.bind(s)),
    ping: timed('ping', s.ping.bind(s)),
  };
}

/** `lookup`: the label from before the ports, kept. */
export function timedKeyLookup(s: KeyLookup, timed: Timed): KeyLookup {
  return { findKeyId: timed('lookup', s.findKeyId.bind(s)), getKey: timed('get_key', s.getKey.bind(s)) };
}

export function timedKeys(s: KeyStore, timed: Timed): KeyStore {
  return {
    findKeyId: timed('lookup', s.findKeyId.bind(s)),
    getKey: timed('get_key', s.getKey.bind(s)),
    createKey: timed('create_key', s.createKey.bind(s)),
    listKeys: timed('list_keys', s.listKeys.bind(s)),
    updateKey: timed('update_key', s.updateKey.bind(s)),
    revokeKey: timed('revoke', s.revokeKey.bind(s)),
  };
}

export function timedAccounts(s: AccountStore, timed: Timed): AccountStore {
  return {
    createAccount: timed('create_account', s.createAccount.bind(s)),
    getAccount: timed('get_account', s.getAccount.bind(s)),
    getAccounts: timed('get_accounts', s.getAccounts.bind(s)),
    findAccountByEmail: timed('find_account_by_email', s.findAccountByEmail.bind(s)),
    listAccounts: timed('list_accounts', s.listAccounts.bind(s)),
    updateAccount: timed('update_account', s.updateAccount.bind(s)),
    grantPackage: timed('grant', s.grantPackage.bind(s)),
  };
}

export function timedLedger(s: UsageLedger, timed: Timed): UsageLedger {
  return { usage: timed('usage', s.usage.bind(s)), daily: s.daily && timed('daily', s.daily.bind(s)) };
}

export function timedModelLimits(s: ModelLimitStore, timed: Timed): ModelLimitStore {
  return {
    admitModel: timed('admit_model', s.admitModel.bind(s)),
    endModel: timed('end_model', s.endModel.bind(s)),
    renewModel: timed('renew_model', s.renewModel.bind(s)),
    modelUse: timed('model_use', s.modelUse.bind(s)),
  };
}

/** The outbox port timed; `wantEvents` is passed on untimed (it only sets what later steps write). */
export function timedOutbox(s: EventOutbox, timed: Timed): EventOutbox {
  return {
    wantEvents: (wants) => s.wantEvents(wants),
    eventAccounts: timed('event_accounts', s.eventAccounts.bind(s)),
    readEvents: timed('read_events', s.readEvents.bind(s)),
    dropEvents: timed('drop_events', s.dropEvents.bind(s)),
    packageEvents: timed('package_events', s.packageEvents.bind(s)),
    setLowBalance: timed('set_low_balance', s.setLowBalance.bind(s)),
  };
}

/** The store with every port timed; `close` is passed on untimed (it is not a store operation worth timing). */
export function instrumentStore(store: Store, metrics: Metrics): Store;
export function instrumentStore(store: ServingStore, metrics: Metrics): ServingStore;
export function instrumentStore(store: ServingStore, metrics: Metrics): ServingStore {
  const timed = storeTimer(metrics);
  if (!isWholeStore(store)) return { ...timedMetering(store, timed), ...timedKeyLookup(store, timed) };
  const whole: Store = {
    ...timedMetering(store, timed),
    ...timedKeys(store, timed),
    ...timedAccounts(store, timed),
    ...timedLedger(store, timed),
    ...timedModelLimits(store, timed),
    ...timedOutbox(store, timed),
    kind: store.kind,
    close: () => store.close(),
  };
  return whole;
}
