/**
 * The built proxy process on the test redis-server under a prefix of its own, with a RedisStore on the same prefix
 * for the test to create keys and read balances and the ledger as the process wrote them.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { RedisStore } from '../../src/store/redis/redis-store';
import { startProxyProcess, type ProxyProcess } from './processes';
import { testRedisUrl } from './stores';

export interface RedisProxy {
  proxy: ProxyProcess;
  /** A store on the process's prefix. */
  store: RedisStore;
  /** A plain client on the same Redis. */
  redis: Redis;
  prefix: string;
  close(): Promise<void>;
}

export async function startRedisProxyProcess(env: Record<string, string>): Promise<RedisProxy> {
  const prefix = `f${randomBytes(4).toString('hex')}:`;
  const journalDir = mkdtempSync(join(tmpdir(), 'tm-journal-'));
  const proxy = await startProxyProcess({
    REDIS_URL: testRedisUrl(),
    REDIS_PREFIX: prefix,
    // A journal of its own: parallel test processes must not share (and truncate) data/settlements.journal.
    JOURNAL_FILE: join(journalDir, 'settlements.journal'),
    ...env,
  });
  const redis = new Redis(testRedisUrl());
  const store = new RedisStore(new Redis(testRedisUrl()), { prefix });
  return {
    proxy,
    store,
    redis,
    prefix,
    close: async () => {
      await proxy.stop();
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(...keys);
      await store.close();
      redis.disconnect();
      rmSync(journalDir, { recursive: true, force: true });
    },
  };
}

/** Resident set size of a process, in KiB (Linux). */
export function vmRssKiB(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]);
}
