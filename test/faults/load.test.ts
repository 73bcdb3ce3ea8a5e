/**
 * Load: 1,000 concurrent streams through one proxy process (the built server, Redis store). All are open together,
 * all complete, the ledger holds exactly one record per request and agrees with the balance, and the process's
 * resident memory's peak grows by less than 64 KiB per open stream (80 on Node 22+: see RSS_BOUND_KIB). The process
 * runs as `npm start` runs it (with its node flags: see startNodeArgs).
 */
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { startUpstream, streamReply, words, type TestUpstream } from '../helpers/upstream';
import { chatBody } from '../helpers/proxy';
import { keyWithTokens } from '../helpers/stores';
import { writeModelsFile } from '../helpers/models-file';
import { eventually } from '../helpers/eventually';
import { startRedisProxyProcess, vmRssKiB, type RedisProxy } from '../helpers/redis-proxy';

/**
 * Peak RSS growth per open stream, in KiB. The product's target (64 KiB) is measured by the bench after a full GC
 * (bench/rss.ts: about 23 KiB on Node 20, 55 on Node 24). This test reads the peak instead, garbage included, which
 * V8 on Node 22+ lets grow further between collections: with `npm start`'s --max-semi-space-size=8 it peaks at 45 KiB
 * on Node 20 and 55–66 KiB on Node 24 here (120–140 without the flag). Node 20 is held to the target, Node 22+ to
 * 80 KiB, a guard against the old doubling coming back.
 */
const RSS_BOUND_KIB = Number(process.versions.node.split('.')[0]) >= 22 ? 80 : 64;

const STREAMS = 1_000;
const CHUNKS = 20;
const CHUNK_GAP_MS = 50;
/** Requests started together: below the listen backlog (511), so no connection waits for a SYN retry. */
const WAVE = 100;
const BALANCE = 10_000_000;

jest.setTimeout(60_000);

interface StreamResult {
  status: number;
  requestId: string;
  text: string;
}

/** Opens one stream on a connection of its own; resolves `headers` when they arrive and `done` with the whole body. */
function openStream(url: string, secret: string, agent: http.Agent): { headers: Promise<void>; done: Promise<StreamResult> } {
  let gotHeaders!: () => void;
  const headers = new Promise<void>((resolve) => (gotHeaders = resolve));
  const done = new Promise<StreamResult>((resolve, reject) => {
    const req = http.request(
      `${url}/v1/chat/completions`,
      { method: 'POST', agent, headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' } },
      (res) => {
        gotHeaders();
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, requestId: String(res.headers['x-request-id']), text: Buffer.concat(chunks).toString() }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(chatBody({ stream: true, max_tokens: 50 })));
  });
  done.catch(() => gotHeaders());
  return { headers, done };
}

describe(`load: ${STREAMS} concurrent streams through one proxy process (redis store)`, () => {
  let upstream: TestUpstream;
  let rp: RedisProxy;

  beforeAll(async () => {
    // Each stream holds a socket on each side of the proxy, and two here: far below the limit, but say so if not.
    const limit = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1];
    if (limit !== 'unlimited' && Number(limit) < 4 * STREAMS + 1_000) {
      throw new Error(`ulimit -n is ${limit}: this test needs at least ${4 * STREAMS + 1_000} open files`);
    }
    upstream = await startUpstream();
    rp = await startRedisProxyProcess({ UPSTREAM_URL: upstream.url, MODELS_FILE: writeModelsFile() });
  });
  afterAll(async () => {
    await rp?.close();
    await upstream?.close();
  });

  it(`all streams open together and complete; one ledger record each; balance agrees; RSS per stream bounded`, async () => {
    const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
    const pid = rp.proxy.child.pid as number;

    // Warm up (code paths compiled, pools and caches filled) on a key of its own, then take the baseline.
    upstream.behave(streamReply({ tokens: words(CHUNKS) }));
    const warm = await keyWithTokens(rp.store, BALANCE);
    for (let i = 0; i < 5; i++) {
      const wave = Array.from({ length: 40 }, () => openStream(rp.proxy.url, warm.secret, agent).done);
      for (const r of await Promise.all(wave)) expect(r.status).toBe(200);
    }
    await new Promise((r) => setTimeout(r, 200));
    const baseline = vmRssKiB(pid);

    // The upstream sends every stream its first chunk at once, then holds them all until the last has arrived,
    // then sends the rest slowly: all STREAMS are open at the same time, through the proxy.
    let arrived = 0;
    let open = 0;
    let peakOpen = 0;
    let release!: () => void;
    const allArrived = new Promise<void>((resolve) => (release = resolve));
    const slow = streamReply({ tokens: words(CHUNKS), delayMs: CHUNK_GAP_MS, holdAfterFirst: allArrived });
    upstream.behave((call, req, res) => {
      open++;
      peakOpen = Math.max(peakOpen, open);
      res.once('close', () => open--);
      if (++arrived === STREAMS) release();
      return slow(call, req, res);
    });
    const key = await keyWithTokens(rp.store, BALANCE);

    let peak = baseline;
    const sampler = setInterval(() => (peak = Math.max(peak, vmRssKiB(pid))), 20);
    const streams: Promise<StreamResult>[] = [];
    let results: StreamResult[];
    try {
      for (let i = 0; i < STREAMS; i += WAVE) {
        const wave = Array.from({ length: Math.min(WAVE, STREAMS - i) }, () => openStream(rp.proxy.url, key.secret, agent));
        streams.push(...wave.map((s) => s.done));
        await Promise.all(wave.map((s) => s.headers));
      }
      await allArrived;
      peak = Math.max(peak, vmRssKiB(pid));
      results = await Promise.all(streams);
    } finally {
      clearInterval(sampler);
      agent.destroy();
    }

    expect(peakOpen).toBe(STREAMS);
    const perStream = ((peak - baseline) * 1024) / STREAMS;
    console.log(
      `${STREAMS} concurrent streams: proxy RSS ${(baseline / 1024).toFixed(1)} MiB before, ${(peak / 1024).toFixed(1)} MiB at the peak: ` +
        `${(perStream / 1024).toFixed(1)} KiB per open stream`,
    );

    for (const r of results) {
      expect(r.status).toBe(200);
      expect(r.text.endsWith('data: [DONE]\n\n')).toBe(true);
      expect(r.text.match(/"content":"w\d+ "/g)).toHaveLength(CHUNKS);
    }

    // Exactly one ledger record per request id, and the balance fell by exactly what they charged.
    const ids = results.map((r) => r.requestId);
    expect(new Set(ids).size).toBe(STREAMS);
    const records = await eventually(async () => {
      const rs = await rp.store.usage({ keyId: key.id, limit: 1000 });
      expect(rs).toHaveLength(STREAMS);
      return rs;
    }, 15_000);
    expect(records.map((r) => r.requestId).sort()).toEqual([...ids].sort());
    for (const r of records) expect(r).toMatchObject({ status: 200, stream: true, estimated: false, completionTokens: CHUNKS });
    const charged = records.reduce((sum, r) => sum + r.chargedTokens, 0);
    expect(await rp.store.getKey(key.id)).toMatchObject({ balance: BALANCE - charged, reserved: 0, debt: 0 });

    expect(perStream).toBeLessThan(RSS_BOUND_KIB * 1024);
  });
});
