/**
 * The Redis store's settled markers (lua/helpers/settled-marks.lua): a few bytes a request in one hash per account and
 * hour, read by a settlement without its reservation only in the hours since its request was made, and the layouts
 * before still honoured until they expire.
 */
import { createHash, randomUUID } from 'node:crypto';
import { makeStore, keyWithTokens, type StoreUnderTest } from '../../helpers/stores';
import { nowS, reserveReq, settlement } from '../contract-fixtures';
import { SETTLE_DEDUP_SECONDS } from '../../../src/store/records/metering';
import { newRequestId } from '../../../src/store/ids';

/** A request's mark as the script files it: its field (0xFF, the first byte) and the 7 bytes after it. */
function mark(requestId: string): { field: Buffer; rest: Buffer } {
  const fp = createHash('sha1').update(requestId).digest().subarray(0, 8);
  return { field: Buffer.concat([Buffer.from([0xff]), fp.subarray(0, 1)]), rest: fp.subarray(1) };
}

describe('redis store: settled markers', () => {
  let s: StoreUnderTest;
  beforeEach(async () => {
    s = await makeStore('redis');
  });
  afterEach(async () => {
    await s.close();
  });
  const slot = (accountId: string) => `${s.prefix}{${accountId}}:`;

  it('keeps markers in one hash per account and hour that outlives its hour by the dedup window, 7 bytes a request', async () => {
    const k = await keyWithTokens(s.store, 100_000);
    const ids = ['r1', 'r2', randomUUID(), ...Array.from({ length: 297 }, () => newRequestId())];
    for (const id of ids) await s.store.settle(settlement(k, id, 20));
    const keys = await s.redis!.keys(`${slot(k.accountId)}s*`);
    expect(keys).toHaveLength(1);
    const hour = Number(keys[0].split(':sh:')[1]);
    expect(hour).toBe(Math.floor(Date.now() / 3_600_000));
    // Filed by the fingerprint's first byte: at most 256 fields, holding 7 bytes of each request's mark end to end.
    const packed = await s.redis!.hvalsBuffer(keys[0]);
    expect(packed.length).toBeLessThanOrEqual(256);
    expect(packed.reduce((n, v) => n + v.length, 0)).toBe(7 * ids.length);
    for (const id of ids) {
      const { field, rest } = mark(id);
      const filed = await s.redis!.hgetBuffer(keys[0], field);
      expect(filed!.indexOf(rest) % 7).toBe(0);
    }
    const expiresAt = nowS() + (await s.redis!.ttl(keys[0]));
    expect(Math.abs(expiresAt - ((hour + 1) * 3600 + SETTLE_DEDUP_SECONDS))).toBeLessThanOrEqual(2);
  });

  it('refuses a retry whose first settlement was in an earlier hour of the window, or marked by the old per-request key', async () => {
    const k = await keyWithTokens(s.store, 1000);
    const hour = Math.floor(Date.now() / 3_600_000);
    // Settled 23 h ago (the bucket a day-long window still reaches), and before the upgrade (the old layout).
    await s.redis!.hset(`${slot(k.accountId)}sh:${hour - 23}`, 'r-earlier', '');
    await s.redis!.set(`${slot(k.accountId)}s:r-legacy`, '1-0', 'EX', 3600);
    expect(await s.store.settle(settlement(k, 'r-earlier', 20))).toEqual({ kind: 'duplicate' });
    expect(await s.store.settle(settlement(k, 'r-legacy', 20))).toEqual({ kind: 'duplicate' });
    // A UUID marked in the layout before: its 16 bytes and 0xFF as the field.
    const uuid = randomUUID();
    const before = Buffer.concat([Buffer.from(uuid.replaceAll('-', ''), 'hex'), Buffer.from([0xff])]);
    await s.redis!.hset(`${slot(k.accountId)}sh:${hour - 2}`, before, '');
    expect(await s.store.settle(settlement(k, uuid, 20))).toEqual({ kind: 'duplicate' });
    expect((await s.store.getKey(k.id))!.balance).toBe(1000);
    // A marker older than every bucket the window reaches is gone from the check, as an expired key was.
    await s.redis!.hset(`${slot(k.accountId)}sh:${hour - 26}`, 'r-older', '');
    expect(await s.store.settle(settlement(k, 'r-older', 20))).toMatchObject({ kind: 'settled' });
  });

  it('refuses a retry hours later by reading only the hours since its UUIDv7 request id was made', async () => {
    const k = await keyWithTokens(s.store, 1000);
    const hour = Math.floor(Date.now() / 3_600_000);
    const put = async (id: string, h: number) => {
      const { field, rest } = mark(id);
      await s.redis!.hset(`${slot(k.accountId)}sh:${h}`, field, Buffer.concat([Buffer.alloc(7, 1), rest]));
    };
    // Made 5 h ago and settled then: its retry finds the mark 5 h back (behind another mark of the same field).
    const earlier = newRequestId(Date.now() - 5 * 3_600_000);
    await put(earlier, hour - 5);
    expect(await s.store.settle(settlement(k, earlier, 20))).toEqual({ kind: 'duplicate' });
    // Made now: a mark 3 h back cannot be its own (it did not exist then), and is not read.
    const fresh = newRequestId();
    await put(fresh, hour - 3);
    expect(await s.store.settle(settlement(k, fresh, 20))).toMatchObject({ kind: 'settled' });
    expect(await s.store.settle(settlement(k, fresh, 20))).toEqual({ kind: 'duplicate' });
    // An id that does not say when it was made (a UUIDv4, a host's own id) is looked for in the whole window.
    const v4 = randomUUID();
    await put(v4, hour - 23);
    expect(await s.store.settle(settlement(k, v4, 20))).toEqual({ kind: 'duplicate' });
    expect((await s.store.getKey(k.id))!.balance).toBe(980);
  });

  it('reads no marker for a settlement whose request still holds its reservation: it was never settled', async () => {
    const k = await keyWithTokens(s.store, 1000);
    const hour = Math.floor(Date.now() / 3_600_000);
    // A marker no SETTLE could have left (its reservation is still held): read, it would refuse the settlement.
    await s.redis!.hset(`${slot(k.accountId)}sh:${hour - 5}`, 'r-held', '');
    await s.store.reserve(reserveReq(k, 'r-held'));
    expect(await s.store.settle(settlement(k, 'r-held', 20))).toMatchObject({ kind: 'settled' });
    // Once settled (the reservation dropped in the same step), a retry reads the markers and is refused.
    expect(await s.store.settle(settlement(k, 'r-held', 20))).toEqual({ kind: 'duplicate' });
    expect((await s.store.getKey(k.id))!).toMatchObject({ balance: 980, reserved: 0 });
  });
});
