/**
 * WORKERS=2: two workers share the port. One is killed with requests in flight on both: every request is either
 * answered in full and charged once, or cut off and charged nothing (its reservation lapses); the dead worker is
 * replaced; /metrics on any worker counts the whole group; SIGTERM drains every worker.
 */
import { mkdtempSync, readdirSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { RedisStore } from '../../src/store/redis/redis-store';
import { eventually } from '../helpers/eventually';
import { writeModelsFile } from '../helpers/models-file';
import { startProxyProcess, type ProxyProcess } from '../helpers/processes';
import { chatBody } from '../helpers/proxy';
import { keyWithTokens, testRedisUrl } from '../helpers/stores';
import { jsonReply, startUpstream, streamReply, words, type Behaviour, type TestUpstream } from '../helpers/upstream';

jest.setTimeout(60_000);

const GRANT = 100_000;
const IN_FLIGHT = 16;

interface Outcome {
  status: number;
  requestId: string | undefined;
  /** The whole response arrived: a JSON body, or a stream ending in [DONE]. */
  answered: boolean;
}

/** One request on a connection of its own (so the cluster spreads them), resolved however it ends. */
function send(url: string, secret: string, body: Record<string, unknown>): Promise<Outcome> {
  return new Promise((resolve) => {
    const req = http.request(
      `${url}/v1/chat/completions`,
      { method: 'POST', agent: false, headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        const requestId = res.headers['x-request-id'] as string | undefined;
        const done = () => {
          const whole = res.complete && (body.stream ? text.endsWith('data: [DONE]\n\n') : text.startsWith('{'));
          resolve({ status: res.statusCode ?? 0, requestId, answered: res.statusCode === 200 && whole });
        };
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.once('end', done);
        res.once('close', done);
        res.once('error', done);
      },
    );
    req.once('error', () => resolve({ status: 0, requestId: undefined, answered: false }));
    req.end(JSON.stringify(body));
  });
}

/** The workers' pids by worker number, from their latest "tokenmeter listening" lines. */
function workerPids(output: string): Map<number, number> {
  const pids = new Map<number, number>();
  for (const line of output.split('\n')) {
    if (!line.includes('"msg":"tokenmeter listening"')) continue;
    const parsed = JSON.parse(line) as { worker: number; pid: number };
    pids.set(parsed.worker, parsed.pid);
  }
  return pids;
}

/** Sum of a counter's samples whose labels match `labels`, in Prometheus text. */
function counterSum(text: string, name: string, labels: string): number {
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) && l.includes(labels))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

/** Slow enough that every request is still running when a worker is killed. */
const slowAnswers: Behaviour = async (call, req, res) => {
  if (call.body.stream) return streamReply({ tokens: words(30), delayMs: 50 })(call, req, res);
  await new Promise((r) => setTimeout(r, 1_000));
  return jsonReply({ tokens: words(20) })(call, req, res);
};

describe('WORKERS=2', () => {
  let upstream: TestUpstream;
  let store: RedisStore;
  let proxy: ProxyProcess;
  let journalDir: string;

  beforeAll(async () => {
    upstream = await startUpstream(slowAnswers);
    const prefix = `workers${Math.random().toString(36).slice(2, 8)}:`;
    store = new RedisStore(new Redis(testRedisUrl()), { prefix });
    journalDir = mkdtempSync(join(tmpdir(), 'tm-workers-'));
    proxy = await startProxyProcess({
      WORKERS: '2',
      REDIS_URL: testRedisUrl(),
      REDIS_PREFIX: prefix,
      UPSTREAM_URL: upstream.url,
      MODELS_FILE: writeModelsFile(),
      RESERVATION_LEASE_SECONDS: '1',
      JOURNAL_FILE: join(journalDir, 'journal'),
    });
    await eventually(async () => expect(proxy.output()).toContain('"msg":"worker group listening"'), 15_000);
  });
  afterAll(async () => {
    await proxy?.stop('SIGKILL');
    await upstream.close();
    await store.close();
  });

  it('loses nothing when a worker dies mid-request, replaces it, and reports both workers in /metrics', async () => {
    const key = await keyWithTokens(store, GRANT);
    const before = workerPids(proxy.output());
    expect([...before.keys()].sort()).toEqual([1, 2]);
    // Each worker keeps a journal of its own.
    expect(readdirSync(journalDir).sort()).toEqual(['journal', 'journal.2']);

    const outcomes = Array.from({ length: IN_FLIGHT }, (_, i) =>
      send(proxy.url, key.secret, chatBody({ stream: i % 2 === 0, max_tokens: 40, stream_options: { include_usage: true } })),
    );
    // Every request has reached the upstream, so each worker holds some of them in flight.
    await eventually(async () => expect(upstream.calls.length).toBe(IN_FLIGHT));
    process.kill(before.get(1) as number, 'SIGKILL');
    const results = await Promise.all(outcomes);

    const answered = results.filter((r) => r.answered);
    const cut = results.filter((r) => !r.answered);
    // The cluster spread the requests: the dead worker's were cut, the other's answered.
    expect(answered.length).toBeGreaterThan(0);
    expect(cut.length).toBeGreaterThan(0);

    // The reservations of the cut requests lapse; what is charged is exactly the answered requests, once each.
    await eventually(async () => expect((await store.getAccount(key.accountId))?.reserved).toBe(0), 10_000);
    const ledger = await store.usage({ keyId: key.id, limit: 100 });
    expect(ledger.map((r) => r.requestId).sort()).toEqual(answered.map((r) => r.requestId).sort());
    const charged = ledger.reduce((sum, r) => sum + r.chargedTokens, 0);
    expect((await store.getAccount(key.accountId))?.balance).toBe(GRANT - charged);

    // Worker 1 is replaced (a new process in its slot, so with its journal).
    await eventually(async () => {
      const now = workerPids(proxy.output());
      expect(now.get(1)).toBeDefined();
      expect(now.get(1)).not.toBe(before.get(1));
    }, 15_000);
    expect(proxy.output()).toContain('worker died: starting a replacement');

    // New requests spread over both workers; a scrape through either counts them all.
    upstream.behave(jsonReply({ tokens: words(3) }));
    const more = await Promise.all(Array.from({ length: 10 }, () => send(proxy.url, key.secret, chatBody())));
    expect(more.every((r) => r.answered)).toBe(true);
    for (let i = 0; i < 4; i++) {
      const text = await new Promise<string>((resolve, reject) => {
        http
          .get(`${proxy.url}/metrics`, { agent: false }, (res) => {
            let body = '';
            res.on('data', (c: Buffer) => (body += c.toString()));
            res.on('end', () => resolve(body));
          })
          .once('error', reject);
      });
      // The dead worker's counts died with it: the group counts the survivor's answers and the ten new ones.
      expect(counterSum(text, 'tokenmeter_requests_total', 'status="200"')).toBe(answered.length + 10);
    }
  });

  it('drains every worker on SIGTERM and exits 0', async () => {
    const key = await keyWithTokens(store, GRANT);
    upstream.behave(streamReply({ tokens: words(10), delayMs: 50 }));
    const seen = upstream.calls.length;
    const streams = Array.from({ length: 4 }, () => send(proxy.url, key.secret, chatBody({ stream: true })));
    await eventually(async () => expect(upstream.calls.length).toBe(seen + 4));
    const code = proxy.stop('SIGTERM');
    const results = await Promise.all(streams);
    expect(results.every((r) => r.answered)).toBe(true);
    expect(await code).toBe(0);
    for (const pid of workerPids(proxy.output()).values()) expect(() => process.kill(pid, 0)).toThrow();
    const ledger = await store.usage({ keyId: key.id, limit: 10 });
    expect(ledger).toHaveLength(4);
  });
});
