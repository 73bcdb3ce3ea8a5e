/**
 * tokenmeter mounted in a host's own Express app: express.json() first, the host's session auth through
 * `authenticate`, its own routes and error handler, two instances on different stores side by side. Driven with the
 * official openai SDK and compared with the standalone server on the same upstream.
 */
import { mkdtempSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import express, { type ErrorRequestHandler, type Express, type Router } from 'express';
import Redis from 'ioredis';
import OpenAI from 'openai';
import request from 'supertest';
import { createTokenmeter, MemoryStore, type SettledRecord, type Tokenmeter, type TokenmeterOptions } from '../src/index';
import { createLogger } from '../src/observability/logger';
import { eventually } from './helpers/eventually';
import { send } from './helpers/raw-http';
import { chatBody, MODEL, settled, startProxy, UPSTREAM_MODEL, type ProxyUnderTest } from './helpers/proxy';
import { keyWithTokens, newAccount, testRedisUrl } from './helpers/stores';
import { startUpstream, type TestUpstream } from './helpers/upstream';

const MODELS = [{ id: MODEL, upstream_model: UPSTREAM_MODEL, context_length: 8192, max_output_tokens: 1024 }];

/** The host's own sessions: cookie token → the user's tokenmeter account (and, for some users, one of its keys). */
type Sessions = Map<string, { accountId: string; keyId?: string }>;

interface Host {
  app: Express;
  url: string;
  server: Server;
  /** What reached the host's own error handler. */
  hostErrors: string[];
}

function sessionAuth(sessions: Sessions): TokenmeterOptions['authenticate'] {
  return async (req) => {
    const token = /(?:^|;\s*)session=([^;]+)/.exec(req.headers.cookie ?? '')?.[1];
    if (token === 'explode') throw new Error('session store down');
    return (token && sessions.get(token)) || null;
  };
}

/** The host: its json parser first, its own routes, tokenmeter at `mounts`, its own 404 and error handler last. */
async function startHost(mounts: [string, Router][]): Promise<Host> {
  const app = express();
  const hostErrors: string[] = [];
  app.use(express.json());
  app.get('/hello', (_req, res) => {
    res.json({ host: 'hello' });
  });
  app.post('/echo', (req, res) => {
    res.json({ echoed: req.body });
  });
  app.get('/boom', () => {
    throw new Error('host route failed');
  });
  for (const [path, router] of mounts) app.use(path, router);
  // A host route under the same prefix, after tokenmeter: tokenmeter must pass it on.
  app.get('/v1/account', (_req, res) => {
    res.json({ host: 'account' });
  });
  const onError: ErrorRequestHandler = (err: Error, _req, res, _next) => {
    hostErrors.push(err.message);
    res.status(418).json({ hostError: err.message });
  };
  app.use(onError);
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return { app, server, hostErrors, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function capture(): { logs: string[]; logger: ReturnType<typeof createLogger> } {
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logs.push(chunk.toString());
      cb();
    },
  });
  return { logs, logger: createLogger('info', sink) };
}

describe('tokenmeter mounted in a host app', () => {
  let upstream: TestUpstream;
  let standalone: ProxyUnderTest;
  let standaloneStore: MemoryStore;
  let redis: Redis;
  let meterA: Tokenmeter;
  let meterB: Tokenmeter;
  let host: Host;
  const sessions: Sessions = new Map();
  const settledA: SettledRecord[] = [];
  const settledB: SettledRecord[] = [];
  const logsA = capture();
  const logsB = capture();
  let localsBefore: string[];

  beforeAll(async () => {
    upstream = await startUpstream();
    standaloneStore = new MemoryStore();
    standalone = await startProxy({ store: standaloneStore, upstreamUrl: upstream.url });
    redis = new Redis(testRedisUrl());
    meterA = await createTokenmeter({
      upstreamUrl: upstream.url,
      models: MODELS,
      store: new MemoryStore(),
      logger: logsA.logger,
      authenticate: sessionAuth(sessions),
      onSettle: (record) => {
        settledA.push(record);
      },
    });
    // B: Redis (the host's own client), and an onSettle that always fails, one way or the other.
    let calls = 0;
    meterB = await createTokenmeter({
      upstreamUrl: upstream.url,
      models: MODELS,
      redis,
      redisPrefix: `host${Math.random().toString(36).slice(2, 8)}:`,
      journalFile: join(mkdtempSync(join(tmpdir(), 'tm-host-')), 'journal'),
      logger: logsB.logger,
      onSettle: (record) => {
        settledB.push(record);
        if (++calls % 2 === 1) throw new Error('billing push failed');
        return Promise.reject(new Error('billing push rejected'));
      },
    });
    host = await startHost([
      ['/v1', meterA.openai],
      ['/b/v1', meterB.openai],
    ]);
    localsBefore = Object.keys(host.app.locals);
  });
  afterAll(async () => {
    host.server.closeAllConnections();
    await new Promise<void>((resolve) => host.server.close(() => resolve()));
    await meterA.close();
    await meterB.close();
    await standalone.close();
    redis.disconnect();
    await upstream.close();
  });

  /** A host user: an account of A's holding `tokens`, signed in (a session cookie); no tokenmeter key. */
  async function signedInUser(
    tokens: number,
    key?: { limitTokens: number },
  ): Promise<{ client: OpenAI; accountId: string; token: string }> {
    const accountId = await newAccount(meterA.store);
    await meterA.store.grantPackage(accountId, { tokens, expiresAt: null });
    const keyId = key && (await keyWithTokens(meterA.store, 0, { accountId, limitTokens: key.limitTokens })).id;
    const token = Math.random().toString(36).slice(2);
    sessions.set(token, { accountId, keyId });
    // The SDK needs some apiKey; the host authenticates by its cookie, and the apiKey must not matter.
    const client = new OpenAI({
      apiKey: 'unused',
      baseURL: `${host.url}/v1`,
      defaultHeaders: { cookie: `session=${token}` },
      maxRetries: 0,
    });
    return { client, accountId, token };
  }

  /** An account's one ledger record, without what differs between any two requests (ids, time, position). */
  const ledgerRecord = async (store: MemoryStore | Tokenmeter['store'], accountId: string) => {
    const [record] = await store.usage({ accountId, limit: 100 });
    const { accountId: _a, keyId: _k, requestId: _r, created: _t, cursor: _c, ...rest } = record;
    return rest;
  };

  it("hands out no routes to dispatch without Express when the host authenticates: its authenticate always gets Express's request", () => {
    expect(meterA.meteredRoutes.size).toBe(0);
    expect([...meterB.meteredRoutes.keys()]).toEqual(expect.arrayContaining(['/chat/completions', '/messages']));
  });

  it('serves a JSON completion, metered exactly as the standalone server, the body reaching the upstream byte-correct', async () => {
    const user = await signedInUser(10_000);
    const completion = await user.client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Say hello.' }] });
    const hosted = upstream.calls[upstream.calls.length - 1];

    const key = await keyWithTokens(standaloneStore, 10_000);
    const reference = await new OpenAI({ apiKey: key.secret, baseURL: standalone.baseURL }).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Say hello.' }],
    });
    const direct = upstream.calls[upstream.calls.length - 1];
    await settled(standalone);

    expect(completion).toEqual(reference);
    // express.json() had consumed the stream: the upstream still gets the whole body, with its length.
    expect(hosted.raw.equals(direct.raw)).toBe(true);
    expect(hosted.headers['content-length']).toBe(String(hosted.raw.length));
    expect(hosted.body.model).toBe(UPSTREAM_MODEL);
    // The host's session cookie is a credential: it never reaches the upstream.
    expect(hosted.headers.cookie).toBeUndefined();

    // Charged to the account the host named, without any key.
    await eventually(async () => expect(settledA.some((r) => r.accountId === user.accountId)).toBe(true));
    expect(settledA.find((r) => r.accountId === user.accountId)!.keyId).toBeNull();
    expect(await ledgerRecord(meterA.store, user.accountId)).toEqual(await ledgerRecord(standaloneStore, key.accountId));
    expect(10_000 - (await meterA.store.getAccount(user.accountId))!.balance).toBe(completion.usage!.total_tokens);
  });

  it('serves a stream metered exactly as the standalone server', async () => {
    const user = await signedInUser(10_000);
    const stream = await user.client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Say hello.' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: unknown[] = [];
    for await (const chunk of stream) chunks.push(chunk);

    const key = await keyWithTokens(standaloneStore, 10_000);
    const reference = await new OpenAI({ apiKey: key.secret, baseURL: standalone.baseURL }).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Say hello.' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const referenceChunks: unknown[] = [];
    for await (const chunk of reference) referenceChunks.push(chunk);
    await settled(standalone);

    expect(chunks).toEqual(referenceChunks);
    await eventually(async () => expect(settledA.some((r) => r.accountId === user.accountId)).toBe(true));
    expect(await ledgerRecord(meterA.store, user.accountId)).toEqual(await ledgerRecord(standaloneStore, key.accountId));
  });

  it("holds a request to the key the host names: the key's cap refuses what the account could pay", async () => {
    const user = await signedInUser(10_000, { limitTokens: 3 });
    const err = await user.client.chat.completions
      .create({ model: MODEL, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((await meterA.store.getAccount(user.accountId))!.balance).toBe(10_000);
  });

  it('lists the models for a signed-in user without a key', async () => {
    const user = await signedInUser(10);
    const list = await user.client.models.list();
    expect(list.data.map((m) => m.id)).toEqual([MODEL]);
  });

  it('forwards a gzipped body the host decoded as plain JSON, without its old Content-Encoding', async () => {
    const { token } = await signedInUser(10_000);
    const res = await send(`${host.url}/v1/chat/completions`, {
      headers: { cookie: `session=${token}`, 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync(JSON.stringify(chatBody())),
    });
    expect(res.status).toBe(200);
    const call = upstream.calls[upstream.calls.length - 1];
    expect(call.headers['content-encoding']).toBeUndefined();
    expect(call.body.messages).toEqual(chatBody().messages);
  });

  it('reads the body itself when the host parser skipped it, and answers its own body errors in the OpenAI shape', async () => {
    const { token } = await signedInUser(10_000);
    const errorsBefore = host.hostErrors.length;
    const headers = { cookie: `session=${token}`, 'content-type': 'text/plain' };
    const ok = await send(`${host.url}/v1/chat/completions`, { headers, body: JSON.stringify(chatBody()) });
    expect(ok.status).toBe(200);
    const bad = await send(`${host.url}/v1/chat/completions`, { headers, body: '{nope' });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text).error.code).toBe('invalid_json');
    expect(host.hostErrors.length).toBe(errorsBefore);
  });

  it('answers a request the host does not authenticate with a 401 in the OpenAI shape, and a throwing authenticate with a 500', async () => {
    const before = upstream.calls.length;
    const errorsBefore = host.hostErrors.length;
    const anonymous = new OpenAI({ apiKey: 'sk-whatever', baseURL: `${host.url}/v1`, maxRetries: 0 });
    await expect(anonymous.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(
      OpenAI.AuthenticationError,
    );
    const failing = await request(host.url).post('/v1/chat/completions').set('cookie', 'session=explode').send(chatBody());
    expect(failing.status).toBe(500);
    expect(failing.body.error).toEqual({ message: 'Authentication failed.', type: 'api_error', param: null, code: 'internal_error' });
    expect(JSON.stringify(failing.body)).not.toContain('session store down');
    expect(upstream.calls.length).toBe(before);
    expect(host.hostErrors.length).toBe(errorsBefore);
  });

  it("leaves the host's routes, error handler, app.locals and settings alone", async () => {
    expect((await request(host.url).get('/hello')).body).toEqual({ host: 'hello' });
    expect((await request(host.url).post('/echo').send({ a: 1 })).body).toEqual({ echoed: { a: 1 } });
    expect((await request(host.url).get('/v1/account')).body).toEqual({ host: 'account' });
    const boom = await request(host.url).get('/boom');
    expect(boom.status).toBe(418);
    expect(boom.body).toEqual({ hostError: 'host route failed' });
    // A body the host's own parser refuses is the host's to answer, even on tokenmeter's route.
    const hostParsed = await request(host.url).post('/v1/chat/completions').set('content-type', 'application/json').send('{nope');
    expect(hostParsed.status).toBe(418);
    expect(Object.keys(host.app.locals)).toEqual(localsBefore);
    expect(host.app.get('trust proxy')).toBe(false);
    expect(host.app.get('x-powered-by')).toBe(true);
    expect(host.app.get('etag')).toBe('weak');
  });

  it('calls onSettle exactly once per settled request, with the ledger record, and never for a refusal', async () => {
    const user = await signedInUser(10_000);
    for (let i = 0; i < 3; i++) await user.client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: `n${i}` }] });
    const poor = await signedInUser(2);
    await expect(poor.client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(
      OpenAI.RateLimitError,
    );
    const ledger = await meterA.store.usage({ accountId: user.accountId, limit: 100 });
    await eventually(async () => expect(settledA.filter((r) => r.accountId === user.accountId)).toHaveLength(3));
    const mine = settledA.filter((r) => r.accountId === user.accountId);
    expect(new Set(mine.map((r) => r.requestId)).size).toBe(3);
    expect(mine).toEqual(ledger.map(({ created: _c, cursor: _k, ...record }) => record));
    expect(settledA.some((r) => r.accountId === poor.accountId)).toBe(false);
  });

  it('keeps two instances on different stores apart; a throwing onSettle changes nothing else', async () => {
    // B authenticates by tokenmeter keys in its own (Redis) store: A's users are unknown there, and the reverse.
    const keyB = await keyWithTokens(meterB.store, 10_000);
    const clientB = new OpenAI({ apiKey: keyB.secret, baseURL: `${host.url}/b/v1`, maxRetries: 0 });
    const keyInA = await keyWithTokens(meterA.store, 10_000);
    await expect(
      new OpenAI({ apiKey: keyInA.secret, baseURL: `${host.url}/b/v1`, maxRetries: 0 }).chat.completions.create({
        model: MODEL,
        messages: [{ role: 'user', content: 'x' }],
      }),
    ).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
    expect(await meterA.store.getKey(keyB.id)).toBeUndefined();
    expect(await meterA.store.getAccount(keyB.accountId)).toBeUndefined();

    const first = await clientB.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Say hello.' }] });
    const stream = await clientB.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Say hello.' }],
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    expect(text).toBe(first.choices[0].message.content);

    await eventually(async () => expect(settledB.filter((r) => r.keyId === keyB.id)).toHaveLength(2));
    const ledger = await meterB.store.usage({ keyId: keyB.id, limit: 100 });
    expect(ledger).toHaveLength(2);
    const state = await meterB.store.getAccount(keyB.accountId);
    expect(state!.reserved).toBe(0);
    expect(10_000 - state!.balance).toBe(ledger.reduce((n, r) => n + r.chargedTokens, 0));
    await eventually(async () => expect(logsB.logs.join('')).toContain('billing push rejected'));
    expect(logsB.logs.join('')).toContain('billing push failed');
    // The failures were only logged: no settlement was retried or counted twice.
    expect(settledB.filter((r) => r.keyId === keyB.id)).toHaveLength(2);
    // Each instance counts into its own registry.
    expect(await meterB.registry.getSingleMetricAsString('tokenmeter_charged_tokens_total')).toContain(
      String(ledger.reduce((n, r) => n + r.chargedTokens, 0)),
    );
    expect(meterA.registry).not.toBe(meterB.registry);
  });
});
