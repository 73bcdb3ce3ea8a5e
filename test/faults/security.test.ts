/**
 * Security, against the built proxy process on Redis: the client's key never leaves the edge (not upstream, not in a
 * log line, not in Redis), the admin API refuses anything but its token, key lookup only ever shows the store a
 * hash, and one key's requests never touch another key's balance, ledger or model list.
 */
import { createHash, randomBytes } from 'node:crypto';
import request from 'supertest';
import { startUpstream, type TestUpstream } from '../helpers/upstream';
import { chatBody, MODEL } from '../helpers/proxy';
import { testRedisUrl } from '../helpers/stores';
import { writeModelsFile } from '../helpers/models-file';
import { eventually } from '../helpers/eventually';
import { startMonitor, type Monitor } from '../helpers/monitor';
import { startRedisProxyProcess, type RedisProxy } from '../helpers/redis-proxy';
import { expectOpenAIErrorShape } from '../helpers/raw-http';

const OTHER = 'acme/other';
const ADMIN_TOKEN = `admin-${randomBytes(16).toString('hex')}`;
const UPSTREAM_KEY = `upstream-${randomBytes(8).toString('hex')}`;
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/** Every 12-character window of a secret beyond its display prefix (the first 10 characters, stored by design). */
function fragments(secret: string): string[] {
  const hidden = secret.slice(10);
  return Array.from({ length: hidden.length - 11 }, (_, i) => hidden.slice(i, i + 12));
}

/** Asserts that no part of the secret (beyond its display prefix) appears in `text`. */
function expectNoSecret(text: string, secret: string, where: string): void {
  const leaked = fragments(secret).find((f) => text.includes(f));
  if (leaked !== undefined) throw new Error(`${where} contains part of a secret key: …${leaked}…`);
}

/** A well-formed key that shares exactly the first `n` characters with `secret` and differs at every later one. */
function sharing(secret: string, n: number): string {
  let out = secret.slice(0, n);
  for (let i = n; i < secret.length; i++) out += BASE64URL[(BASE64URL.indexOf(secret[i]) + 1 + (i % 7)) % 64];
  return out;
}

describe('security (proxy process, redis store)', () => {
  let upstream: TestUpstream;
  let rp: RedisProxy;
  const admin = () => ({
    get: (path: string) => request(rp.proxy.url).get(path).set('authorization', `Bearer ${ADMIN_TOKEN}`),
    post: (path: string, body: object = {}) => request(rp.proxy.url).post(path).set('authorization', `Bearer ${ADMIN_TOKEN}`).send(body),
    delete: (path: string) => request(rp.proxy.url).delete(path).set('authorization', `Bearer ${ADMIN_TOKEN}`),
  });
  const createKey = async (body: object): Promise<{ id: string; key: string }> => {
    const res = await admin().post('/admin/keys', body);
    expect(res.status).toBe(201);
    return res.body;
  };
  const chat = (secret: string, body: object = chatBody()) =>
    request(rp.proxy.url).post('/v1/chat/completions').set('authorization', `Bearer ${secret}`).send(body);

  beforeAll(async () => {
    upstream = await startUpstream();
    rp = await startRedisProxyProcess({
      UPSTREAM_URL: upstream.url,
      UPSTREAM_API_KEY: UPSTREAM_KEY,
      ADMIN_TOKEN,
      LOG_LEVEL: 'trace',
      MODELS_FILE: writeModelsFile([
        { id: MODEL, context_length: 8192, max_output_tokens: 1024 },
        { id: OTHER, context_length: 8192, max_output_tokens: 1024 },
      ]),
    });
  });
  afterAll(async () => {
    await rp?.close();
    await upstream?.close();
  });

  describe('the client key never reaches the upstream or the logs', () => {
    it('whether sent as Authorization, x-api-key, api-key, a cookie or in the body, on success and on every refusal', async () => {
      const k = await createKey({ tokens: 100_000, name: 'leak-check' });
      const broke = await createKey({ name: 'no-tokens' });
      const calls = upstream.calls.length;
      const asHeaders = {
        'x-api-key': k.key,
        'api-key': k.key,
        cookie: `session=${k.key}`,
        'proxy-authorization': `Bearer ${k.key}`,
      };
      const ok = [
        await chat(k.key),
        await chat(k.key, chatBody({ stream: true })),
        await chat(k.key).set(asHeaders),
        await chat(k.key, chatBody({ stream: true })).set(asHeaders),
        // The client's own data, forwarded as sent (unknown fields pass through): only headers and logs are checked.
        await chat(k.key, chatBody({ user: k.key, messages: [{ role: 'user', content: `my key is ${k.key}` }] })),
      ];
      for (const res of ok) expect(res.status).toBe(200);
      const refusals = [
        // 401: the key only where we do not read it, a near miss, another scheme.
        await request(rp.proxy.url).post('/v1/chat/completions').set('x-api-key', k.key).send(chatBody()),
        await request(rp.proxy.url).post('/v1/chat/completions').set('api-key', k.key).send(chatBody()),
        await chat(`${k.key}x`),
        await chat(`${k.key.slice(0, -1)}${k.key.endsWith('A') ? 'B' : 'A'}`),
        await request(rp.proxy.url).post('/v1/chat/completions').set('authorization', `Basic ${k.key}`).send(chatBody()),
        // 429: a key without tokens.
        await chat(broke.key),
        // 400 and 404: a bad body, and the key where the model goes.
        await chat(k.key, chatBody({ temperature: 'hot' })).set(asHeaders),
        await chat(k.key, chatBody({ model: k.key })),
        // 401 on the models API and the admin API.
        await request(rp.proxy.url).get('/v1/models').set('authorization', `Bearer ${k.key}x`),
        await request(rp.proxy.url).get('/admin/keys').set('authorization', `Bearer ${k.key}`),
      ];
      expect(refusals.map((r) => r.status)).toEqual([401, 401, 401, 401, 401, 429, 400, 404, 401, 401]);
      for (const res of refusals) expectOpenAIErrorShape(res.text);
      // Our refusals never echo a key the client sent in a header.
      for (const res of refusals.filter((r) => r.status !== 404)) expectNoSecret(res.text, k.key, 'a refusal');

      const forwarded = upstream.calls.slice(calls);
      expect(forwarded).toHaveLength(ok.length);
      for (const call of forwarded) {
        expect(call.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
        for (const name of ['x-api-key', 'api-key', 'cookie', 'proxy-authorization']) expect(call.headers[name]).toBeUndefined();
        expectNoSecret(JSON.stringify(call.headers), k.key, 'the upstream request headers');
        if (call.body.user === undefined) expectNoSecret(JSON.stringify(call.body), k.key, 'the upstream request body');
      }

      // Every request was logged (at trace level), none with the key, the other key, or the admin token.
      await eventually(async () => expect(rp.proxy.output().match(/"msg":"request"/g)?.length ?? 0).toBeGreaterThanOrEqual(15));
      const logs = rp.proxy.output();
      expectNoSecret(logs, k.key, 'the proxy log');
      expectNoSecret(logs, broke.key, 'the proxy log');
      expect(logs).not.toContain(ADMIN_TOKEN);
      expect(logs).not.toContain(UPSTREAM_KEY);
    });
  });

  describe('the admin API refuses anything but its token', () => {
    const routes: [string, string, object?][] = [
      ['POST', '/admin/keys', { tokens: 5 }],
      ['GET', '/admin/keys'],
      ['GET', '/admin/keys/:id'],
      ['DELETE', '/admin/keys/:id'],
      ['POST', '/admin/keys/:id/packages', { tokens: 5 }],
      ['GET', '/admin/usage'],
      ['POST', '/admin/models/reload'],
    ];
    const sameLength = (t: string) => t.slice(0, -4) + (t.endsWith('zzzz') ? 'yyyy' : 'zzzz');
    const badCredentials: [string, (token: string, clientKey: string) => Record<string, string>][] = [
      ['no Authorization', () => ({})],
      ['an empty bearer', () => ({ authorization: 'Bearer ' })],
      ['a wrong token of equal length', (t) => ({ authorization: `Bearer ${sameLength(t)}` })],
      ['a wrong first character, equal length', (t) => ({ authorization: `Bearer ${t[0] === 'a' ? 'b' : 'a'}${t.slice(1)}` })],
      ['all but the last character', (t) => ({ authorization: `Bearer ${t.slice(0, -1)}` })],
      ['the first half', (t) => ({ authorization: `Bearer ${t.slice(0, t.length / 2)}` })],
      ['the token plus one character', (t) => ({ authorization: `Bearer ${t}x` })],
      ['the token in upper case', (t) => ({ authorization: `Bearer ${t.toUpperCase()}` })],
      ['another scheme', (t) => ({ authorization: `Basic ${t}` })],
      ['the token without a scheme', (t) => ({ authorization: t })],
      ['the token as x-api-key', (t) => ({ 'x-api-key': t })],
      ['a client API key', (_t, clientKey) => ({ authorization: `Bearer ${clientKey}` })],
    ];

    const send = (method: string, path: string, headers: Record<string, string>, body?: object) => {
      const agent = request(rp.proxy.url);
      const req = (method === 'GET' ? agent.get(path) : method === 'POST' ? agent.post(path) : agent.delete(path)).set(headers);
      return body ? req.send(body) : req;
    };

    it('every admin route, every bad credential: 401 in the OpenAI shape, and nothing changes', async () => {
      const victim = await createKey({ tokens: 100, name: 'victim' });
      const keysBefore = (await rp.store.listKeys()).length;
      const reloadsBefore = rp.proxy.output().split('models file reloaded').length;
      for (const [method, route, body] of routes) {
        const path = route.replace(':id', victim.id);
        for (const [what, headers] of badCredentials) {
          const res = await send(method, path, headers(ADMIN_TOKEN, victim.key), body);
          if (res.status !== 401) throw new Error(`${method} ${route} with ${what}: ${res.status} ${res.text}`);
          expect(expectOpenAIErrorShape(res.text).code).toBe('invalid_api_key');
          expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
        }
      }
      // No key created, revoked or topped up; no reload.
      expect((await rp.store.listKeys()).length).toBe(keysBefore);
      expect(await rp.store.getKey(victim.id)).toMatchObject({
        revokedAt: null,
        balance: 100,
        packages: [expect.objectContaining({ tokens: 100 })],
      });
      expect(rp.proxy.output().split('models file reloaded').length).toBe(reloadsBefore);

      // The same sweep with the right token reaches every route (so the refusals above were the token's doing).
      const answers: number[] = [];
      for (const [method, route, body] of routes) {
        const path = route.replace(':id', victim.id);
        answers.push((await send(method, path, { authorization: `Bearer ${ADMIN_TOKEN}` }, body)).status);
      }
      expect(answers).toEqual([201, 200, 200, 200, 201, 200, 200]);
    });
  });

  describe('key lookup shows the store nothing but a hash', () => {
    let watch: Monitor | undefined;
    beforeAll(async () => {
      watch = await startMonitor(testRedisUrl());
    });
    afterAll(() => watch?.close());

    /** Runs `act`, then returns every command Redis executed meanwhile. */
    async function commandsDuring(act: () => Promise<void>): Promise<string[][]> {
      return (await watch!.during(act)).map((c) => c.args);
    }

    it('keys sharing 0, 20 and all but one characters with a real key are each looked up once, by GET <prefix>h:<sha256>', async () => {
      const real = await createKey({ tokens: 10_000, name: 'real' });
      expect(real.key).toMatch(/^sk-[A-Za-z0-9_-]{43}$/);
      const presented: [string, string][] = [
        ['no character of the random part', sharing(real.key, 3)],
        ['20 characters', sharing(real.key, 20)],
        ['all but the last character', sharing(real.key, real.key.length - 1)],
      ];
      for (const [what, key] of presented) {
        expect(key).toHaveLength(real.key.length);
        const commands = await commandsDuring(async () => {
          const res = await chat(key);
          expect(res.status).toBe(401);
        });
        // The process's own background loops (the webhook delivery worker's tick and sweeps, lease renewals) touch the
        // webhook slot and existing accounts' slots on their own schedule; a window can catch one. A request with an
        // unknown key has no account: whatever it made of the store is outside those slots. The hand-on's reads of
        // which accounts have events (`evacc`, or every account in a sweep) are the worker's, each second, too.
        const handOn = [`${rp.prefix}evacc`, `${rp.prefix}accounts`];
        const background = (args: string[]) =>
          (args.some((a) => a.startsWith(`${rp.prefix}{`)) && !args.some((a) => a.startsWith(`${rp.prefix}h:`))) ||
          (args.length <= 4 && ['smembers', 'zrange'].includes(args[0].toLowerCase()) && handOn.includes(args[1]));
        const ours = commands.filter((args) => args.some((a) => a.startsWith(rp.prefix)) && !background(args));
        // The one command this request made of the store: a GET of the presented key's hash. Nothing else was
        // compared with anything: an unknown hash is simply absent, however much of the secret matched.
        if (ours.length !== 1) throw new Error(`key sharing ${what}: expected one lookup, got ${JSON.stringify(ours)}`);
        expect([ours[0][0].toLowerCase(), ...ours[0].slice(1)]).toEqual(['get', `${rp.prefix}h:${sha256(key)}`]);
        // Not the presented secret nor any part of it reached Redis, from anyone.
        for (const args of commands) {
          for (const a of args) {
            expectNoSecret(a, key, `a Redis command (${args[0]})`);
            expect(a).not.toContain(key.slice(0, 10));
          }
        }
      }

      // The real key: looked up the same way, by its hash, before anything else.
      const commands = await commandsDuring(async () => {
        expect((await chat(real.key)).status).toBe(200);
      });
      const ours = commands.filter((args) => args.some((a) => a.startsWith(rp.prefix)));
      expect([ours[0][0].toLowerCase(), ...ours[0].slice(1)]).toEqual(['get', `${rp.prefix}h:${sha256(real.key)}`]);
      expect(ours.filter((args) => args.some((a) => a.includes(`${rp.prefix}h:`)))).toHaveLength(1);
      for (const args of commands) for (const a of args) expectNoSecret(a, real.key, `a Redis command (${args[0]})`);
    });

    it('no key name or stored value anywhere in Redis contains a secret', async () => {
      const secrets = [
        (await createKey({ tokens: 10_000, name: 'stored' })).key,
        (await createKey({ name: 'empty', models: [MODEL] })).key,
      ];
      expect((await chat(secrets[0])).status).toBe(200);
      const r = rp.redis;
      let scanned = 0;
      for await (const names of r.scanStream({ match: '*', count: 1000 })) {
        for (const name of names as string[]) {
          let values: string[];
          switch (await r.type(name)) {
            case 'string':
              values = [(await r.get(name)) ?? ''];
              break;
            case 'hash':
              values = Object.entries(await r.hgetall(name)).flat();
              break;
            case 'set':
              values = await r.smembers(name);
              break;
            case 'zset':
              values = await r.zrange(name, 0, -1);
              break;
            case 'list':
              values = await r.lrange(name, 0, -1);
              break;
            case 'stream':
              values = (await r.xrange(name, '-', '+')).flatMap(([id, fields]) => [id, ...fields]);
              break;
            default:
              values = []; // deleted meanwhile by another test
          }
          scanned++;
          for (const secret of secrets) {
            expectNoSecret(name, secret, `the Redis key name ${name}`);
            for (const v of values) expectNoSecret(v, secret, `the Redis value at ${name}`);
          }
        }
      }
      // What the process wrote for these keys was among what was scanned.
      expect(scanned).toBeGreaterThanOrEqual(10);
      expect(await r.exists(...secrets.map((s) => `${rp.prefix}h:${sha256(s)}`))).toBe(2);
    });
  });

  describe('tenant isolation', () => {
    it('a key without tokens is refused without charging another key; each ledger and model list is its own', async () => {
      const a = await createKey({ name: 'tenant-a', models: [MODEL] });
      const b = await createKey({ name: 'tenant-b', tokens: 1_000_000 });
      const calls = upstream.calls.length;

      // A has nothing: refused, nothing forwarded, B untouched.
      for (const body of [chatBody(), chatBody({ stream: true }), chatBody({ max_tokens: 1 })]) {
        const res = await chat(a.key, body);
        expect(res.status).toBe(429);
        expect(expectOpenAIErrorShape(res.text).code).toBe('insufficient_quota');
      }
      expect(upstream.calls.length).toBe(calls);
      const ledger = async (id: string) => (await admin().get(`/admin/usage?key_id=${id}&limit=1000`)).body.data as any[];
      expect(await ledger(a.id)).toEqual([]);
      expect(await ledger(b.id)).toEqual([]);
      expect((await admin().get(`/admin/keys/${b.id}`)).body).toMatchObject({ balance: 1_000_000, reserved: 0 });

      // Each key sees its own model list.
      const models = async (key: string) => (await request(rp.proxy.url).get('/v1/models').set('authorization', `Bearer ${key}`)).body;
      expect((await models(a.key)).data.map((m: { id: string }) => m.id)).toEqual([MODEL]);
      expect((await models(b.key)).data.map((m: { id: string }) => m.id).sort()).toEqual([MODEL, OTHER].sort());
      expect((await request(rp.proxy.url).get(`/v1/models/${OTHER}`).set('authorization', `Bearer ${a.key}`)).status).toBe(404);

      // With tokens, A is still held to its models, and concurrent A and B requests each settle on their own key.
      expect((await admin().post(`/admin/keys/${a.id}/packages`, { tokens: 5_000 })).status).toBe(201);
      const forbidden = await chat(a.key, chatBody({ model: OTHER }));
      expect(forbidden.status).toBe(403);
      expect(expectOpenAIErrorShape(forbidden.text).code).toBe('model_not_allowed');
      const plan = Array.from({ length: 16 }, (_, i) => ({ owner: i % 2 === 0 ? a : b, stream: i % 4 < 2 }));
      const answers = await Promise.all(plan.map((p) => chat(p.owner.key, chatBody({ stream: p.stream, max_tokens: 20 }))));
      for (const res of answers) expect(res.status).toBe(200);
      const idsOf = (owner: { id: string }) =>
        answers.filter((_, i) => plan[i].owner === owner).map((res) => res.headers['x-request-id'] as string);

      await eventually(async () => expect((await ledger(a.id)).length + (await ledger(b.id)).length).toBe(16));
      const ledgerA = await ledger(a.id);
      const ledgerB = await ledger(b.id);
      expect(ledgerA.map((r) => r.request_id).sort()).toEqual(idsOf(a).sort());
      expect(ledgerB.map((r) => r.request_id).sort()).toEqual(idsOf(b).sort());
      for (const r of ledgerA) expect(r.key_id).toBe(a.id);
      for (const r of ledgerB) expect(r.key_id).toBe(b.id);
      const charged = (rs: any[]) => rs.reduce((sum, r) => sum + r.charged_tokens, 0);
      expect((await admin().get(`/admin/keys/${a.id}`)).body).toMatchObject({ balance: 5_000 - charged(ledgerA), reserved: 0 });
      expect((await admin().get(`/admin/keys/${b.id}`)).body).toMatchObject({ balance: 1_000_000 - charged(ledgerB), reserved: 0 });
    });
  });
});
