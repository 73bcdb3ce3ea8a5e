/** Settlement survives a store outage: kept for retry, charged once when Redis is back, never twice. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { Meter, charge } from '../../src/metering/metering';
import { RedisStore, redisClientOptions } from '../../src/store/redis-store';
import { createLogger } from '../../src/observability/logger';
import { startRedisServer } from '../helpers/redis-server';
import { keyWithTokens } from '../helpers/stores';

describe('Meter', () => {
  it('charges with the model weights, rounding up', () => {
    expect(charge({ inputWeight: 1, outputWeight: 1 }, 10, 5)).toBe(15);
    expect(charge({ inputWeight: 0.5, outputWeight: 3 }, 3, 2)).toBe(8);
  });

  it('retries a settlement while Redis is down and charges it exactly once when Redis returns', async () => {
    const server = await startRedisServer(['--dir', mkdtempSync(join(tmpdir(), 'tm-redis-'))]);
    const client = new Redis(server.url, redisClientOptions(300));
    client.on('error', () => {});
    await new Promise((r) => client.once('ready', r));
    const store = new RedisStore(client);
    const meter = new Meter({ store, leaseMs: 60_000, logger: createLogger('silent'), retryBaseMs: 50 });
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
});
