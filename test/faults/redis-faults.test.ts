/**
 * Redis faults against real processes: the built proxy, real redis-servers that are killed and restarted. The proxy
 * fails closed while Redis is away, recovers without a restart, and loses and double-counts no usage, even across
 * its own restart (the settlement journal).
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import request from 'supertest';
import { RedisStore } from '../../src/store/redis/redis-store';
import { eventually } from '../helpers/eventually';
import { writeModelsFile } from '../helpers/models-file';
import { startProxyProcess, type ProxyProcess } from '../helpers/processes';
import { chatBody } from '../helpers/proxy';
import { claimPort } from '../helpers/ports';
import { startRedisServer, type RedisServer } from '../helpers/redis-server';
import { keyWithTokens } from '../helpers/stores';
import { jsonReply, PROMPT_TOKENS, startUpstream, streamReply, words, type TestUpstream } from '../helpers/upstream';

jest.setTimeout(60_000);

/** A redis-server that keeps its data across a kill -9 (AOF, fsync always), restartable on the same port. */
async function durableRedis(dir: string, port?: number): Promise<RedisServer> {
  return startRedisServer(['--dir', dir, '--appendonly', 'yes', '--appendfsync', 'always'], port);
}

function inspector(url: string): { store: RedisStore; close(): Promise<void> } {
  const client = new Redis(url, { maxRetriesPerRequest: 20 });
  client.on('error', () => {});
  const store = new RedisStore(client, { prefix: 'tm:' });
  return { store, close: () => store.close() };
}

/** Opens a stream and resolves with its status and body when it ends. */
function stream(url: string, secret: string, body = chatBody({ stream: true })): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${secret}` } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe('Redis faults', () => {
  let upstream: TestUpstream;
  let dir: string;
  const procs: ProxyProcess[] = [];
  const servers: RedisServer[] = [];

  beforeEach(async () => {
    upstream = await startUpstream();
    dir = mkdtempSync(join(tmpdir(), 'tm-faults-'));
  });
  afterEach(async () => {
    for (const p of procs.splice(0)) await p.stop('SIGKILL');
    for (const s of servers.splice(0)) await s.stop();
    await upstream.close();
  });

  const proxyOn = async (redisUrl: string, env: Record<string, string> = {}) => {
    const p = await startProxyProcess({
      REDIS_URL: redisUrl,
      UPSTREAM_URL: upstream.url,
      MODELS_FILE: writeModelsFile(),
      JOURNAL_FILE: join(dir, 'journal'),
      STORE_TIMEOUT_MS: '300',
      ...env,
    });
    procs.push(p);
    return p;
  };

  it('starts with Redis down: not ready, 503 and nothing forwarded; recovers when Redis comes up', async () => {
    // Dialled for seconds before Redis binds it: a claimed port outside the ephemeral range, which no outgoing
    // connection (the proxy's own dials included) can take as its source port meanwhile.
    const port = await claimPort();
    const proxy = await proxyOn(`redis://127.0.0.1:${port}`);
    expect((await request(proxy.url).get('/readyz')).status).toBe(503);
    const refused = await request(proxy.url)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer sk-${'a'.repeat(43)}`)
      .send(chatBody());
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe('store_unavailable');
    expect(upstream.calls).toHaveLength(0);

    const redis = await durableRedis(dir, port);
    servers.push(redis);
    const look = inspector(redis.url);
    try {
      const key = await keyWithTokens(look.store, 1000);
      await eventually(async () => expect((await request(proxy.url).get('/readyz')).status).toBe(200), 10_000);
      await request(proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${key.secret}`).send(chatBody()).expect(200);
    } finally {
      await look.close();
    }
  });

  it('fails closed while Redis is killed mid-load, settles the streams that finished meanwhile once it returns', async () => {
    const redis = await durableRedis(dir);
    servers.push(redis);
    const look = inspector(redis.url);
    const proxy = await proxyOn(redis.url);
    try {
      const key = await keyWithTokens(look.store, 100_000);
      upstream.behave(streamReply({ tokens: words(10), delayMs: 100 }));
      const inFlight = Array.from({ length: 8 }, () => stream(proxy.url, key.secret));
      await eventually(async () => expect(upstream.calls).toHaveLength(8));
      await redis.stop(); // kill -9

      const during = await Promise.all(
        Array.from({ length: 4 }, () =>
          request(proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${key.secret}`).send(chatBody()),
        ),
      );
      expect(during.map((r) => r.status)).toEqual([503, 503, 503, 503]);
      expect(upstream.calls).toHaveLength(8); // nothing unmetered went upstream
      const done = await Promise.all(inFlight);
      expect(done.every((r) => r.status === 200 && r.text.endsWith('data: [DONE]\n\n'))).toBe(true);

      servers.push(await durableRedis(dir, redis.port));
      // No proxy restart: the retried settlements land, each exactly once.
      const records = await eventually(async () => {
        const r = await look.store.usage({ keyId: key.id, limit: 100 });
        expect(r).toHaveLength(8);
        return r;
      }, 30_000);
      expect(new Set(records.map((r) => r.requestId)).size).toBe(8);
      const state = await look.store.getKey(key.id);
      expect(state).toMatchObject({ reserved: 0, balance: 100_000 - records.reduce((a, r) => a + r.chargedTokens, 0) });
      await eventually(async () => expect((await stream(proxy.url, key.secret)).status).toBe(200), 10_000);
    } finally {
      await look.close();
    }
  });

  it('serves an answer whose settlement Redis could not take at once: the charge shown, the balance left out, journalled', async () => {
    const redis = await durableRedis(dir);
    servers.push(redis);
    const look = inspector(redis.url);
    try {
      const key = await keyWithTokens(look.store, 100_000);
      const proxy = await proxyOn(redis.url);
      let answer = () => {};
      const gate = new Promise<void>((resolve) => (answer = resolve));
      upstream.behave(async (call, req, res) => {
        await gate;
        if (call.body.stream) return streamReply()(call, req, res);
        return jsonReply()(call, req, res);
      });
      const json = request(proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${key.secret}`).send(chatBody());
      const streamed = stream(proxy.url, key.secret, chatBody({ stream: true, stream_options: { include_usage: true } }));
      const both = Promise.all([json.then((r) => r), streamed]);
      await eventually(async () => expect(upstream.calls).toHaveLength(2));
      await redis.stop();
      answer();
      const [plain, events] = await both;
      expect(plain.status).toBe(200);
      expect(plain.headers['x-tokenmeter-charged-tokens']).toBe(String(PROMPT_TOKENS + 5));
      expect(plain.headers['x-tokenmeter-balance-tokens']).toBeUndefined();
      expect(events.status).toBe(200);
      const usageLine = events.text.split('\n').find((l) => l.includes('"usage":{'))!;
      const usage = JSON.parse(usageLine.slice('data: '.length)).usage;
      expect(usage).toMatchObject({ tokenmeter_charged_tokens: PROMPT_TOKENS + 5 });
      expect(usage.tokenmeter_balance_tokens).toBeUndefined();
      expect(events.text.endsWith('data: [DONE]\n\n')).toBe(true);
      await eventually(async () => expect(readFileSync(join(dir, 'journal'), 'utf8').match(/"t":"settle"/g)).toHaveLength(2));
    } finally {
      await look.close();
    }
  });

  it('keeps a settlement Redis could not take in the journal, replays it after a proxy crash, and never twice', async () => {
    const redis = await durableRedis(dir);
    servers.push(redis);
    const look = inspector(redis.url);
    try {
      const key = await keyWithTokens(look.store, 100_000);
      const first = await proxyOn(redis.url);
      upstream.behave(streamReply({ tokens: words(6), delayMs: 100 }));
      const pending = stream(first.url, key.secret);
      await eventually(async () => expect(upstream.calls).toHaveLength(1));
      await redis.stop();
      expect((await pending).status).toBe(200);
      const journal = join(dir, 'journal');
      await eventually(async () => expect(readFileSync(journal, 'utf8')).toContain('"t":"settle"'));
      const journalled = readFileSync(journal, 'utf8');
      await first.stop('SIGKILL');

      servers.push(await durableRedis(dir, redis.port));
      await proxyOn(redis.url);
      const [record] = await eventually(async () => {
        const r = await look.store.usage({ keyId: key.id, limit: 10 });
        expect(r).toHaveLength(1);
        return r;
      }, 15_000);
      await eventually(async () => expect(readFileSync(journal, 'utf8')).toBe(''));
      const balance = (await look.store.getKey(key.id))!.balance;
      expect(balance).toBe(100_000 - record.chargedTokens);

      // The same settlement replayed again (as if its confirmation had been lost) charges nothing more.
      writeFileSync(journal, journalled);
      await procs.pop()!.stop('SIGKILL');
      await proxyOn(redis.url);
      await eventually(async () => expect(readFileSync(journal, 'utf8')).toBe(''));
      expect(await look.store.usage({ keyId: key.id, limit: 10 })).toHaveLength(1);
      expect((await look.store.getKey(key.id))!.balance).toBe(balance);
      expect(existsSync(journal)).toBe(true);
    } finally {
      await look.close();
    }
  });
});
