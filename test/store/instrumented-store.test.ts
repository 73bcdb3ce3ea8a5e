/** The store metrics: every operation of every port timed under the `op` label the dashboards and alerts query. */
import { Metrics } from '../../src/observability/metrics';
import { instrumentStore } from '../../src/store/instrumented-store';
import { MemoryStore } from '../../src/store/memory/memory-store';
import type { ServingStore } from '../../src/store/ports/store';
import { keyWithTokens } from '../helpers/stores';
import { reserveReq, settlement } from './contract-fixtures';

/** The `op` labels with at least one observation, and the failures counted per label. */
async function observed(metrics: Metrics): Promise<{ ops: string[]; errors: Record<string, number> }> {
  const counts = (await metrics.storeDuration.get()).values.filter((v) => v.metricName?.endsWith('_count') && v.value > 0);
  const errors = (await metrics.storeErrors.get()).values.filter((v) => v.value > 0);
  return {
    ops: counts.map((v) => String(v.labels.op)).sort(),
    errors: Object.fromEntries(errors.map((v) => [String(v.labels.op), v.value])),
  };
}

describe('instrumentStore', () => {
  it('times each operation under its label from before the ports (lookup, grant, revoke; snake_case for the rest)', async () => {
    const metrics = new Metrics({ processMetrics: false });
    const store = instrumentStore(new MemoryStore(), metrics);
    const created = await store.createAccount({ email: 'a@example.com', name: 'a', passwordHash: null, role: 'member', status: 'active' });
    if (created.kind !== 'created') throw new Error(created.kind);
    const accountId = created.account.id;
    await store.getAccount(accountId);
    await store.getAccounts([accountId]);
    await store.findAccountByEmail('a@example.com');
    await store.listAccounts({ limit: 1 });
    await store.updateAccount(accountId, { name: 'b' });
    await store.grantPackage(accountId, { tokens: 1000, expiresAt: null });
    const key = await store.createKey(accountId, { hash: 'h', prefix: 'p', name: 'k', expiresAt: null, models: null });
    if (key.kind !== 'created') throw new Error(key.kind);
    const ref = { id: key.key.id, accountId };
    await store.findKeyId('h');
    await store.getKey(ref.id);
    await store.listKeys(accountId);
    await store.updateKey(ref.id, { limits: null });
    await store.reserve(reserveReq(ref, 'r1'));
    await store.renew(accountId, 'r1', 60_000);
    await store.settle(settlement(ref, 'r1', 20));
    await store.reserve(reserveReq(ref, 'r2'));
    await store.release(accountId, 'r2');
    await store.usage({ accountId, limit: 10 });
    await store.revokeKey(ref.id);
    const check = { limits: { rpm: 5 }, tokens: 1, requestId: 'm1', leaseMs: 60_000 };
    await store.admitModel('acme/m', check);
    await store.renewModel('acme/m', 'm1', 60_000);
    await store.endModel('acme/m', 'm1', { kind: 'release' });
    await store.modelUse('acme/m', { rpm: 5 });
    await store.ping();
    await store.close();
    expect((await observed(metrics)).ops).toEqual(
      [
        'create_account',
        'get_account',
        'get_accounts',
        'find_account_by_email',
        'list_accounts',
        'update_account',
        'grant',
        'create_key',
        'lookup',
        'get_key',
        'list_keys',
        'update_key',
        'reserve',
        'renew',
        'settle',
        'release',
        'usage',
        'revoke',
        'admit_model',
        'renew_model',
        'end_model',
        'model_use',
        'ping',
      ].sort(),
    );
  });

  it('counts a failed operation under its label, and passes the failure on', async () => {
    const metrics = new Metrics({ processMetrics: false });
    const store = instrumentStore(new MemoryStore(), metrics);
    const key = await keyWithTokens(store, 100);
    await expect(store.settle(settlement({ id: key.id, accountId: 'acc_missing' }, 'r1', 20))).rejects.toThrow();
    expect((await observed(metrics)).errors).toEqual({ settle: 1 });
  });

  it('wraps only the serving ports of a store that has no others', async () => {
    const metrics = new Metrics({ processMetrics: false });
    const full = new MemoryStore();
    const serving: ServingStore = {
      reserve: (r) => full.reserve(r),
      renew: (a, r, l) => full.renew(a, r, l),
      release: (a, r) => full.release(a, r),
      settle: (s) => full.settle(s),
      ping: () => full.ping(),
      findKeyId: (h) => full.findKeyId(h),
      getKey: (k) => full.getKey(k),
    };
    const timed = instrumentStore(serving, metrics);
    expect(Object.keys(timed).sort()).toEqual(['findKeyId', 'getKey', 'kind', 'ping', 'release', 'renew', 'reserve', 'settle']);
    await timed.findKeyId('h');
    expect((await observed(metrics)).ops).toEqual(['lookup']);
  });
});
