/**
 * The Redis SETTLE step (lua/metering/settle.lua) on what only the Redis layout can hold: a key id whose key hash is
 * gone (deleted by hand, or never there). The step reads the key's flags and whether it exists in one HMGET.
 */
import { makeStore, keyWithTokens, type StoreUnderTest } from '../../helpers/stores';
import { reserveReq, settlement } from '../contract-fixtures';

describe('redis store: the SETTLE step', () => {
  let s: StoreUnderTest;
  beforeEach(async () => {
    s = await makeStore('redis');
  });
  afterEach(async () => {
    await s.close();
  });

  it('charges the account but adds no usage totals under a key whose hash is gone', async () => {
    const k = await keyWithTokens(s.store, 1000);
    await s.store.reserve(reserveReq(k, 'r1'));
    const keyHash = `${s.prefix}{${k.accountId}}:k:${k.id}`;
    await s.redis!.del(keyHash);
    expect(await s.store.settle(settlement(k, 'r1', 40))).toEqual({ kind: 'settled', balance: 960 });
    // Only the reservation's give-back writes to it (its `reserved`), as it always has.
    expect(await s.redis!.hmget(keyHash, 'requests', 'spent', 'last_used', 'created')).toEqual([null, null, null, null]);
    expect(await s.store.getAccount(k.accountId)).toMatchObject({ balance: 960, reserved: 0 });
  });
});
