/** createTokenmeter: its options checked once with one clear error, the environment's defaults, and what close() closes. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import express from 'express';
import Redis from 'ioredis';
import request from 'supertest';
import { loadConfig } from '../src/config/config';
import { meterConfig } from '../src/config/options';
import { createLogger } from '../src/observability/logger';
import { ConfigError, createTokenmeter, MemoryStore, type TokenmeterOptions } from '../src/index';
import { chatBody, MODEL } from './helpers/proxy';
import { keyWithTokens, testRedisUrl } from './helpers/stores';
import { startUpstream, streamReply, type TestUpstream } from './helpers/upstream';

const models = [{ id: MODEL, context_length: 8192, max_output_tokens: 1024 }];
const quiet = { logLevel: 'silent' } as const;
const journalFile = () => join(mkdtempSync(join(tmpdir(), 'tm-lib-')), 'journal');

async function configError(options: unknown): Promise<ConfigError> {
  const err = await createTokenmeter(options as TokenmeterOptions).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConfigError);
  return err as ConfigError;
}

describe('createTokenmeter options', () => {
  it('has the environment variables’ defaults, under their camelCase names', () => {
    const { port: _p, workers: _w, host: _h, shutdownGraceSeconds: _s, metricsPort: _m, trustProxy: _t, ...fromEnv } = loadConfig({});
    expect(meterConfig({}).config).toEqual(fromEnv);
    const {
      port: _p2,
      workers: _w2,
      host: _h2,
      shutdownGraceSeconds: _s2,
      metricsPort: _m2,
      trustProxy: _t2,
      ...set
    } = loadConfig({
      UPSTREAM_URL: 'https://api.example.com/v1/',
      BODY_LIMIT: '512kb',
      RESERVATION_LEASE_SECONDS: '5',
      REDIS_CLUSTER: 'yes',
      LOG_LEVEL: 'warn',
    });
    expect(
      meterConfig({
        upstreamUrl: 'https://api.example.com/v1/',
        bodyLimit: '512kb',
        reservationLeaseSeconds: 5,
        redisCluster: true,
        logLevel: 'warn',
      }).config,
    ).toEqual(set);
  });

  it.each([
    ['upstreamUrl', { upstreamUrl: 'ftp://x/v1' }, 'must be an http:// or https:// URL'],
    ['bodyLimit', { bodyLimit: 'lots' }, 'must be a size such as 1048576, 512kb or 4mb'],
    ['reservationLeaseSeconds', { reservationLeaseSeconds: 0 }, 'must be greater than 0'],
    ['reservationLeaseSeconds', { reservationLeaseSeconds: '60' }, 'must be a whole number'],
    ['adminToken', { adminToken: 'short' }, 'must be at least 16 characters'],
    ['onSettle', { onSettle: 'https://billing.example.com' }, 'must be a function'],
    ['upstreamURL', { upstreamURL: 'http://x/v1' }, 'is not a tokenmeter option'],
    ['redisUrl', { store: new MemoryStore(), redisUrl: 'redis://x' }, 'give one of store, redis and redisUrl, not store and redisUrl'],
  ])('refuses a bad %s with one error naming it', async (option, options, detail) => {
    const err = await configError({ models, ...options });
    expect(err.message).toBe(`invalid tokenmeter option ${option}: ${detail}`);
    expect(err.option).toBe(option);
  });

  it('warns at start when a sign-up trial is set but nobody can sign up', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const meter = await createTokenmeter({ models, store: new MemoryStore(), logger: createLogger('info', sink), signupTokens: 1000 });
    await meter.close();
    expect(lines.join('')).toContain('SIGNUP_TOKENS is set but ACCOUNT_REGISTRATION is closed');
    lines.length = 0;
    const open = await createTokenmeter({
      models,
      store: new MemoryStore(),
      logger: createLogger('info', sink),
      signupTokens: 1000,
      accountRegistration: 'open',
    });
    await open.close();
    expect(lines.join('')).not.toContain('SIGNUP_TOKENS');
  });

  it('names the entry and field of bad inline models', async () => {
    await expect(createTokenmeter({ ...quiet, models: [{ id: 'a/b', context_length: 10 }] })).rejects.toThrow(
      'models option: models[0].max_output_tokens (a/b): is required',
    );
  });
});

describe('a tokenmeter’s close()', () => {
  let upstream: TestUpstream;
  beforeEach(async () => {
    upstream = await startUpstream();
  });
  afterEach(() => upstream.close());

  it('closes the Redis connection it opened, but not a client the host passed in', async () => {
    const own = await createTokenmeter({
      ...quiet,
      models,
      redisUrl: testRedisUrl(),
      redisPrefix: 'libclose:',
      journalFile: journalFile(),
    });
    await own.store.ping();
    await own.close();
    await expect(own.store.ping()).rejects.toThrow();

    const hostClient = new Redis(testRedisUrl());
    const borrowed = await createTokenmeter({ ...quiet, models, redis: hostClient, redisPrefix: 'libclose:', journalFile: journalFile() });
    await borrowed.close();
    await expect(hostClient.ping()).resolves.toBe('PONG');
    hostClient.disconnect();
  });

  it('lets an in-flight stream finish and settle, refuses new completions, and is not held up by a slow onSettle', async () => {
    let release!: () => void;
    upstream.behave(streamReply({ holdAfterFirst: new Promise<void>((r) => (release = r)) }));
    const store = new MemoryStore();
    let told = 0;
    const meter = await createTokenmeter({
      ...quiet,
      models,
      upstreamUrl: upstream.url,
      store,
      // A billing push that never answers.
      onSettle: () => {
        told++;
        return new Promise<void>(() => {});
      },
    });
    const app = express().use('/v1', meter.openai);
    const server = app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const key = await keyWithTokens(store, 10_000);
    const streaming = request(url)
      .post('/v1/chat/completions')
      .set('authorization', `Bearer ${key.secret}`)
      .send(chatBody({ stream: true }))
      .then((r) => r);
    await new Promise<void>((resolve) => {
      const wait = () => (upstream.calls.length > 0 ? resolve() : setTimeout(wait, 10));
      wait();
    });

    const closed = meter.close();
    const refused = await request(url).post('/v1/chat/completions').set('authorization', `Bearer ${key.secret}`).send(chatBody());
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe('shutting_down');

    release();
    expect((await streaming).text).toContain('[DONE]');
    await closed;
    expect(told).toBe(1);
    expect((await store.usage({ keyId: key.id, limit: 10 })).length).toBe(1);
    expect((await store.getKey(key.id))!.reserved).toBe(0);
    expect(meter.close()).toBe(closed);
    server.closeAllConnections();
    server.close();
  });
});

describe('a tokenmeter’s rate-limit window', () => {
  let upstream: TestUpstream;
  beforeAll(async () => {
    upstream = await startUpstream();
  });
  afterAll(() => upstream.close());

  // The same option through each way the factory opens a store: it once built the host-client store apart and lost it.
  const hostClient = () => new Redis(testRedisUrl());
  it.each([
    ['the memory store', () => ({})],
    ['REDIS_URL', () => ({ redisUrl: testRedisUrl(), journalFile: journalFile() })],
    ['the host’s Redis client', () => ({ redis: hostClient(), journalFile: journalFile() })],
  ] as const)('is rateLimitWindowSeconds on %s: the rpm window resets within it', async (_way, storeOptions) => {
    const given = storeOptions() as TokenmeterOptions;
    const meter = await createTokenmeter({
      ...quiet,
      ...given,
      redisPrefix: `libwindow${Math.random()}:`,
      upstreamUrl: upstream.url,
      rateLimitWindowSeconds: 2,
      models: [{ ...models[0], limits: { rpm: 5 } }],
    });
    try {
      const key = await keyWithTokens(meter.store, 10_000);
      const app = express().use('/v1', meter.openai);
      const res = await request(app).post('/v1/chat/completions').set('authorization', `Bearer ${key.secret}`).send(chatBody());
      expect(res.status).toBe(200);
      expect(res.headers['x-ratelimit-limit-requests']).toBe('5');
      // Within the two-second window, not the default minute ("1m0s" or "59.9s").
      expect(res.headers['x-ratelimit-reset-requests']).toMatch(/^(\d+ms|[12](\.\d+)?s)$/);
    } finally {
      await meter.close();
      given.redis?.disconnect();
    }
  });
});

describe('a tokenmeter’s admin router and models', () => {
  it('mounts the admin API behind its token beside a host body parser, and passes every request on without a token', async () => {
    const token = 'library-admin-token-1234';
    const withAdmin = await createTokenmeter({ ...quiet, models, store: new MemoryStore(), adminToken: token });
    const withoutAdmin = await createTokenmeter({ ...quiet, models, store: new MemoryStore() });
    const app = express()
      .use(express.json())
      .use('/admin', withAdmin.admin)
      .use('/off', withoutAdmin.admin)
      .use((_req, res) => {
        res.status(404).send('host 404');
      });
    const created = await request(app).post('/admin/accounts').set('authorization', `Bearer ${token}`).send({ name: 'acme' });
    expect(created.status).toBe(201);
    expect((await request(app).get('/admin/accounts').set('authorization', 'Bearer wrong-token-wrong-token')).status).toBe(401);
    const off = await request(app).get('/off/accounts').set('authorization', `Bearer ${token}`);
    expect([off.status, off.text]).toEqual([404, 'host 404']);
    await withAdmin.close();
    await withoutAdmin.close();
  });

  it('refuses to reload inline models', async () => {
    const meter = await createTokenmeter({ ...quiet, models, store: new MemoryStore() });
    await expect(meter.reloadModels()).rejects.toThrow('no models file to reload');
    await meter.close();
  });
});
