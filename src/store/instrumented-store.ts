/** A Store decorator that times every operation and counts failures, for the store metrics. */
import type { Metrics } from '../observability/metrics';
import type { Store } from './types';

export function instrumentStore(store: Store, metrics: Metrics): Store {
  function timed<T>(op: string, run: () => Promise<T>): Promise<T> {
    const end = metrics.storeDuration.startTimer({ op });
    return run().then(
      (value) => {
        end();
        return value;
      },
      (err: unknown) => {
        end();
        metrics.storeErrors.inc({ op });
        throw err;
      },
    );
  }
  return {
    kind: store.kind,
    createKey: (input) => timed('create_key', () => store.createKey(input)),
    grantPackage: (keyId, input) => timed('grant', () => store.grantPackage(keyId, input)),
    findKeyId: (hash) => timed('lookup', () => store.findKeyId(hash)),
    getKey: (keyId) => timed('get_key', () => store.getKey(keyId)),
    listKeys: () => timed('list_keys', () => store.listKeys()),
    revokeKey: (keyId) => timed('revoke', () => store.revokeKey(keyId)),
    reserve: (request) => timed('reserve', () => store.reserve(request)),
    renew: (keyId, requestId, leaseMs) => timed('renew', () => store.renew(keyId, requestId, leaseMs)),
    release: (keyId, requestId) => timed('release', () => store.release(keyId, requestId)),
    settle: (settlement) => timed('settle', () => store.settle(settlement)),
    usage: (query) => timed('usage', () => store.usage(query)),
    admitModel: (model, check) => timed('model_admit', () => store.admitModel(model, check)),
    endModel: (model, requestId, how) => timed('model_end', () => store.endModel(model, requestId, how)),
    renewModel: (model, requestId, leaseMs) => timed('model_renew', () => store.renewModel(model, requestId, leaseMs)),
    modelUse: (model, limits) => timed('model_use', () => store.modelUse(model, limits)),
    ping: () => timed('ping', () => store.ping()),
    close: () => store.close(),
  };
}
