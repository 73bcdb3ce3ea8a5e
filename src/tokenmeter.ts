/**
 * createTokenmeter: the library's factory. Checks the options once, has buildServices open what they ask for (store,
 * journal, upstream pools), and returns the mountable routers with `close()`, which drains and closes what it opened and nothing else.
 */
import type { ServingStoreOptions, TokenmeterOptions } from './config/option-types';
import { meterConfig, type MeterConfig, type MeterParts } from './config/options';
import type { MeterDeps } from './meter-deps';
import { createRouters, type Routers } from './routers';
import type { ServingStore, Store } from './store/ports/store';
import { buildServices, type ServiceOverrides } from './build-services';
import { settleAtClose } from './metering/settle-at-close';

/** `S`: the store's type, a whole Store unless the host gave a ServingStore. */
export interface Tokenmeter<S extends ServingStore = Store> extends Routers {
  /** The store, instrumented: create keys and grant packages from the host's own code. */
  store: S;
  /** Reloads the models file (a bad file is refused and the catalog in use stays); resolves to the number of models. */
  reloadModels(): Promise<number>;
  /** From now on: new completions get `503 shutting_down`, /readyz turns 503. `close()` does this first. */
  stopAccepting(): void;
  /** Whether `stopAccepting()` was called. */
  readonly draining: boolean;
  /**
   * Stops accepting, waits up to `timeoutMs` (default 10 s) for in-flight requests, drains and settlements, cuts what
   * still reads an upstream and waits for its settlement (up to 10 s more), then closes what the factory opened: its Redis connection, the journal, the upstream pools, the retry timers. Settlements still
   * pending then stay in the journal (with Redis) for the next start. Calling it again returns the same promise.
   */
  close(options?: { timeoutMs?: number }): Promise<void>;
}

export function createTokenmeter(options?: TokenmeterOptions): Promise<Tokenmeter>;
/** With a host's store of the metering and key-lookup ports alone: the admin, console and webhooks routers pass every request on. */
export function createTokenmeter(options: ServingStoreOptions): Promise<Tokenmeter<ServingStore>>;
export async function createTokenmeter(options: TokenmeterOptions | ServingStoreOptions = {}): Promise<Tokenmeter<ServingStore>> {
  const { config, parts } = meterConfig(options);
  return openTokenmeter(config, parts);
}

/** A Tokenmeter from options already checked and resolved (the server's, from the environment; the tests' proxy). */
export function openTokenmeter(
  config: MeterConfig,
  parts: MeterParts & { store?: Store },
  overrides?: ServiceOverrides,
): Promise<Tokenmeter>;
export function openTokenmeter(config: MeterConfig, parts: MeterParts, overrides?: ServiceOverrides): Promise<Tokenmeter<ServingStore>>;
export async function openTokenmeter(
  config: MeterConfig,
  parts: MeterParts,
  overrides?: ServiceOverrides,
): Promise<Tokenmeter<ServingStore>> {
  const services = await buildServices(config, parts, overrides);
  return assemble(services.deps, services.release);
}

/** The Tokenmeter over services already built; `release` closes what its builder opened beyond the meter and pools. */
export function assemble<S extends ServingStore>(deps: MeterDeps & { store: S }, release: () => Promise<void>): Tokenmeter<S> {
  const { meter, logger, lifecycle } = deps;
  let closing: Promise<void> | undefined;
  const stopAccepting = () => {
    lifecycle.draining = true;
  };
  // Health checks start now, not at a pool's first request.
  deps.pools.sync(deps.catalog());
  return {
    ...createRouters(deps),
    store: deps.store,
    reloadModels: deps.reloadModels ?? (() => Promise.reject(new Error('no models file to reload: the models were given inline'))),
    stopAccepting,
    get draining() {
      return lifecycle.draining;
    },
    close: ({ timeoutMs = 10_000 } = {}) =>
      (closing ??= (async () => {
        stopAccepting();
        // The counter closes only after the last settlement: a stream cut here is counted by it, not by its bytes.
        await settleAtClose(meter, timeoutMs, () => deps.pools.close(), logger);
        meter.stop();
        deps.pools.close();
        await deps.counter.close();
        await release();
      })()),
  };
}
