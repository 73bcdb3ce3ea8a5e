/** What only the memory store does: it bounds its heap, keeping the newest usage records and exact totals. */
import { MemoryStore } from '../../src/store/memory/memory-store';
import type { Settlement } from '../../src/store/records/metering';
import { keyWithTokens } from '../helpers/stores';

/** A settled request of 1 + 1 tokens, charged 2. */
const settlement = (key: { id: string; accountId: string }, requestId: string): Settlement => ({
  accountId: key.accountId,
  keyId: key.id,
  requestId,
  model: 'a/b',
  promptTokens: 1,
  completionTokens: 1,
  chargedTokens: 2,
  estimated: false,
  stream: false,
  status: 200,
});

describe('MemoryStore', () => {
  it('keeps the newest usage records up to its limit, with totals and balance still exact', async () => {
    const store = new MemoryStore({ ledgerLimit: 8 });
    const key = await keyWithTokens(store, 10_000);
    for (let i = 0; i < 30; i++) {
      await store.settle(settlement(key, `r${i}`));
    }
    const kept = (await store.usage({ keyId: key.id, limit: 100 })).map((r) => r.requestId);
    expect(kept.length).toBeGreaterThanOrEqual(8);
    expect(kept.length).toBeLessThanOrEqual(9);
    expect(kept[kept.length - 1]).toBe('r29');
    expect(await store.getKey(key.id)).toMatchObject({ balance: 10_000 - 60, usage: { requests: 30, chargedTokens: 60 } });
  });

  it('remembers a settled request for its dedup window, across a bucket boundary, and forgets it one bucket later', async () => {
    // Markers are kept in buckets of the window's width (60 s here): settled 1 s before a bucket ends.
    let now = 1_019_000;
    const store = new MemoryStore({ now: () => now, settleDedupSeconds: 60 });
    const key = await keyWithTokens(store, 10_000);
    const s = settlement(key, 'r1');
    expect(await store.settle(s)).toMatchObject({ kind: 'settled' });
    now += 2_000;
    expect(await store.settle(s)).toEqual({ kind: 'duplicate' });
    now += 57_000;
    expect(await store.settle(s)).toEqual({ kind: 'duplicate' });
    now += 61_000;
    expect(await store.settle({ ...s, requestId: 'r2' })).toMatchObject({ kind: 'settled' });
    expect(await store.settle(s)).toMatchObject({ kind: 'settled' });
  });
});
