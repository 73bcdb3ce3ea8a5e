/** Settlement survives a store outage: kept for retry, charged once when Redis is back, never twice. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { Journal } from '../../src/metering/journal';
import { Meter, charge } from '../../src/metering/metering';
import { MemoryStore } from '../../src/store/memory/memory-store';
import type { Settlement } from '../../src/store/records/metering';
import { RedisStore, redisClientOptions } from '../../src/store/redis/redis-store';
import { createLogger } from '../../src/observability/logger';
import { startRedisServer } from '../helpers/redis-server';
import { keyWithTokens } from '../helpers/stores';

describe('Meter', () => {
  it('charges with the model weights, rounding up', () => {
    expect(charge({ inputWeight: 1, outputWeight: 1 }, 10, 5)).toBe(15);
    expect(charge({ inputWeight: 0.5, outputWeight: 3 }, 3, 2)).toBe(8);
  });

  it('charges the cached part of the prompt at the cached-input weight and the rest at the input weight', () => {
    const model = { inputWeight: 2, cachedInputWeight: 0.25, outputWeight: 3 };
    // ceil(200 × 2 + 800 × 0.25 + 7 × 3)
    expect(charge(model, 1000, 7, 800)).toBe(621);
    expect(charge(model, 3, 0, 1)).toBe(5); // ceil(2 × 2 + 0.25)
    // Never more cached than the prompt; without a cached weight, cached tokens cost what the rest do.
    expect(charge(model, 10, 0, 50)).toBe(3);
    expect(charge({ inputWeight: 2, outputWeight: 1 }, 10, 0, 10)).toBe(20);
  });

  it('charges cache writes at the cache-write weight, and reserves a prompt at it where it is dearer than input', () => {
    const model = { inputWeight: 1, cachedInputWeight: 0.1, cacheWriteWeight: 1.25, outputWeight: 2 };
    // ceil(9 × 1 + 200 × 0.1 + 100 × 1.25 + 4 × 2)
    expect(charge(model, 309, 4, 200, 100)).toBe(162);
    // Never more written than the prompt left after its cached part.
    expect(charge(model, 10, 0, 8, 50)).toBe(Math.ceil(8 * 0.1 + 2 * 1.25));
    const meter = new Meter({ store: {} as never, modelLimits: {} as never, leaseMs: 1000, logger: createLogger('silent') });
    expect(meter.reservationTokens(model as never, 100, 10, 1)).toBe(125 + 20);
    expect(meter.reservationTokens({ ...model, cacheWriteWeight: 0.5 } as never, 100, 10, 1)).toBe(100 + 20);
    meter.stop();
  });

  it('retries a settlement while Redis is down and charges it exactly once when Redis returns', async () => {
    const server = await startRedisServer(['--dir', mkdtempSync(join(tmpdir(), 'tm-redis-'))]);
    const client = new Redis(server.url, redisClientOptions(300));
    client.on('error', () => {});
    await new Promise((r) => client.once('ready', r));
    const store = new RedisStore(client);
    const meter = new Meter({ store, modelLimits: store, leaseMs: 60_000, logger: createLogger('silent'), retryBaseMs: 50 });
    try {
      const key = await keyWithTokens(store, 1000);
      await store.reserve({
        accountId: key.accountId,
        keyId: key.id,
        requestId: 'r1',
        model: 'a/b',
        fixed: 10,
        unit: 1,
        allowance: 100,
        leaseMs: 60_000,
      });
      // Redis goes away with its data kept (a restart): SAVE, stop, start again on the same port from the dump.
      const dir = (await client.config('GET', 'dir')) as string[];
      await client.save();
      await server.stop();
      meter.settle({
        accountId: key.accountId,
        keyId: key.id,
        requestId: 'r1',
        model: 'a/b',
        promptTokens: 10,
        completionTokens: 20,
        chargedTokens: 30,
        estimated: false,
        stream: false,
        status: 200,
      });
      await new Promise((r) => setTimeout(r, 300));
      expect(meter.backlog()).toBe(1);
      const again = await startRedisServer(['--dir', dir[1], '--dbfilename', 'dump.rdb'], server.port);
      try {
        expect(await meter.drain(10_000)).toBe(true);
        const state = await store.getKey(key.id);
        expect(state).toMatchObject({ balance: 970, reserved: 0 });
        expect(await store.usage({ keyId: key.id, limit: 10 })).toHaveLength(1);
      } finally {
        await again.stop();
      }
    } finally {
      meter.stop();
      await store.close();
      await server.stop();
    }
  });

  it('tells onSettle once per settlement the store took: a journal replay included, a duplicate never', async () => {
    const store = new MemoryStore();
    const key = await keyWithTokens(store, 1000);
    const settlement = (requestId: string): Settlement => ({
      accountId: key.accountId,
      keyId: key.id,
      requestId,
      model: 'a/b',
      promptTokens: 1,
      completionTokens: 2,
      chargedTokens: 3,
      estimated: false,
      stream: false,
      status: 200,
    });
    // A settlement the store never took before a restart: the journal keeps it, the next meter replays it.
    const file = join(mkdtempSync(join(tmpdir(), 'tm-journal-')), 'journal');
    const before = new Journal(file);
    before.record(settlement('replayed'));
    before.close();

    const told: Settlement[] = [];
    const meter = new Meter({
      store,
      modelLimits: store,
      leaseMs: 60_000,
      logger: createLogger('silent'),
      journal: new Journal(file),
      onSettle: (r) => void told.push(r),
    });
    meter.settle(settlement('live'));
    expect(await meter.drain(5_000)).toBe(true);
    meter.settle(settlement('live'));
    expect(await meter.drain(5_000)).toBe(true);
    expect(told.map((r) => r.requestId).sort()).toEqual(['live', 'replayed']);
    expect(told[0]).toEqual(settlement(told[0].requestId));
    meter.stop();
  });

  it('settles as usual when onSettle throws or rejects: logged, nothing retried', async () => {
    const store = new MemoryStore();
    const key = await keyWithTokens(store, 1000);
    const lines: string[] = [];
    const logger = createLogger('error', { write: (line: string) => void lines.push(line) });
    let calls = 0;
    const meter = new Meter({
      store,
      modelLimits: store,
      leaseMs: 60_000,
      logger,
      onSettle: () => {
        if (++calls === 1) throw new Error('sync failure');
        return Promise.reject(new Error('async failure'));
      },
    });
    for (const requestId of ['r1', 'r2']) {
      meter.settle({
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
    }
    expect(await meter.drain(5_000)).toBe(true);
    await new Promise((r) => setImmediate(r));
    expect(calls).toBe(2);
    expect(meter.backlog()).toBe(0);
    expect((await store.getAccount(key.accountId))!.balance).toBe(996);
    expect(lines.join('')).toContain('sync failure');
    expect(lines.join('')).toContain('async failure');
    meter.stop();
  });
});
