/**
 * The delivery thread (WEBHOOK_DELIVERY_THREAD, on REDIS_URL): webhooks are delivered from a thread of the process's
 * own, so they go out while the request path's event loop is busy, and its gauges still reach the process's
 * /metrics. The receiver is another process, so a blocked event loop here cannot hide when an event arrived.
 */
import { Writable } from 'node:stream';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import express from 'express';
import Redis from 'ioredis';
import request from 'supertest';
import { DeliveryThread } from '../../src/events/delivery-thread';
import { createLogger } from '../../src/observability/logger';
import { createTokenmeter, type Tokenmeter } from '../../src/index';
import { RedisWebhookStore } from '../../src/store/redis/redis-webhook-store';
import { eventually } from '../helpers/eventually';
import { chatBody, MODEL } from '../helpers/proxy';
import { keyWithTokens, testRedisUrl } from '../helpers/stores';
import { startUpstream, type TestUpstream } from '../helpers/upstream';

jest.setTimeout(30_000);

/** A receiver in a process of its own: one line per delivery, `{"at": <ms>, "type": …}`, its port first. */
const RECEIVER = `
const http = require('node:http');
const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    const at = Date.now();
    res.writeHead(200).end();
    process.stdout.write(JSON.stringify({ at, type: JSON.parse(body).type }) + '\\n');
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(JSON.stringify({ port: server.address().port }) + '\\n'));
`;

interface Arrival {
  at: number;
  type: string;
}

async function startReceiverProcess(): Promise<{ url: string; arrivals: Arrival[]; child: ChildProcess }> {
  const child = spawn(process.execPath, ['-e', RECEIVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const arrivals: Arrival[] = [];
  const lines = createInterface({ input: child.stdout! });
  const port = await new Promise<number>((resolve) => {
    lines.on('line', (line) => {
      const m = JSON.parse(line) as { port?: number } & Arrival;
      if (m.port !== undefined) resolve(m.port);
      else arrivals.push(m);
    });
  });
  return { url: `http://127.0.0.1:${port}/hook`, arrivals, child };
}

/** Blocks this thread's event loop (nothing here runs: no timer, no socket) for `ms`. */
function blockEventLoop(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

describe.each([
  ['a thread of its own', true],
  ['the event loop', false],
])('webhook delivery in %s', (_label, thread) => {
  let upstream: TestUpstream;
  let receiver: Awaited<ReturnType<typeof startReceiverProcess>>;
  let meter: Tokenmeter;
  let redis: Redis;
  const prefix = `dthread-${randomBytes(4).toString('hex')}:`;

  beforeEach(async () => {
    upstream = await startUpstream();
    receiver = await startReceiverProcess();
    redis = new Redis(testRedisUrl());
    meter = await createTokenmeter({
      logLevel: 'silent',
      models: [{ id: MODEL, context_length: 8192, max_output_tokens: 1024 }],
      upstreamUrl: upstream.url,
      redisUrl: testRedisUrl(),
      redisPrefix: prefix,
      journalFile: join(mkdtempSync(join(tmpdir(), 'tm-dthread-')), 'journal'),
      webhookDeliveryThread: thread,
    });
  });

  afterEach(async () => {
    await meter.close();
    receiver.child.kill();
    redis.disconnect();
    await upstream.close();
  });

  it(thread ? 'delivers while the request path is blocked' : 'delivers only once the event loop is free again', async () => {
    const webhooks = new RedisWebhookStore(redis, { prefix });
    const endpoint = `we_${randomBytes(4).toString('hex')}`;
    await webhooks.createEndpoint({ id: endpoint, url: receiver.url, types: ['usage.settled'], secret: 'whsec_test', created: 1 });
    const key = await keyWithTokens(meter.store, 10_000);
    const app = express().use('/v1', meter.openai).get('/metrics', meter.metrics);
    // The gates have read the endpoint: the settlement writes its usage.settled event.
    await eventually(async () => {
      const res = await request(app).get('/metrics');
      expect(res.text).toContain(`tokenmeter_webhook_backlog{endpoint="${endpoint}"}`);
    });
    const res = await request(app).post('/v1/chat/completions').set('authorization', `Bearer ${key.secret}`).send(chatBody());
    expect(res.status).toBe(200);

    // Three seconds of a request path that never yields: the delivery's round comes every second.
    blockEventLoop(3_000);
    const freed = Date.now();
    await eventually(async () => expect(receiver.arrivals.map((a) => a.type)).toEqual(['usage.settled']));
    if (thread) expect(receiver.arrivals[0].at).toBeLessThan(freed);
    else expect(receiver.arrivals[0].at).toBeGreaterThanOrEqual(freed);
  });
});

describe('the delivery thread itself', () => {
  /** A thread on the test Redis whose restarts' waits (the `inMs` of each restart logged) land in `waits`. */
  function threadLoggingRestarts(restartMs?: number) {
    const waits: number[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) {
          const entry = JSON.parse(line) as { msg: string; inMs?: number };
          if (entry.msg.includes('starting it again')) waits.push(entry.inMs as number);
        }
        done();
      },
    });
    const thread = new DeliveryThread({
      data: {
        store: {
          redisUrl: testRedisUrl(),
          redisPrefix: 'dthread-restart:',
          redisCluster: false,
          storeTimeoutMs: 2_000,
          rateLimitWindowSeconds: 60,
        },
        logLevel: 'silent',
        lowBalance: { tokens: undefined, percent: 20 },
        timeoutMs: 2_000,
        packageExpiringDays: 7,
      },
      logger: createLogger('warn', sink),
      restartMs,
    });
    // Its worker is private: read here only to end it from outside, as a crash would.
    const current = () => (thread as unknown as { worker: import('node:worker_threads').Worker }).worker;
    return { thread, waits, current };
  }

  it('is started again when it ends, and stop() ends it for good', async () => {
    const { thread, waits, current } = threadLoggingRestarts();
    thread.start();
    const first = current();
    await first.terminate();
    await eventually(async () => expect(current()).not.toBe(first));
    expect(waits).toEqual([1_000]);
    const second = current();
    await thread.stop();
    await new Promise((r) => setTimeout(r, 1_500));
    expect(current()).toBe(second);
    expect(second.threadId).toBe(-1);
  });

  it('waits twice as long before each restart of a thread that keeps ending soon after its start (no log line a second)', async () => {
    const { thread, waits, current } = threadLoggingRestarts(20);
    thread.start();
    for (let i = 0; i < 4; i++) {
      const ended = current();
      await ended.terminate();
      await eventually(async () => expect(current()).not.toBe(ended));
    }
    await thread.stop();
    expect(waits).toEqual([20, 40, 80, 160]);
  });
});
