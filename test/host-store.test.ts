/**
 * A host's own metering store: an object implementing only the metering and key-lookup ports (a ServingStore), as a
 * host whose balances live in its own system writes it, serving metered requests end to end through createTokenmeter.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import request from 'supertest';
import {
  ConfigError,
  createTokenmeter,
  generateKey,
  type KeyAccess,
  type KeyRef,
  type ReserveRequest,
  type ReserveResult,
  type ServingStore,
  type Settlement,
  type SettleResult,
  type Tokenmeter,
} from '../src/index';
import { createLogger } from '../src/observability/logger';
import { eventually } from './helpers/eventually';
import { chatBody, MODEL, UPSTREAM_MODEL } from './helpers/proxy';
import { startUpstream, type TestUpstream } from './helpers/upstream';

/** The host's billing, in memory: one balance per account, one key per secret hash, a ledger of settlements. */
class HostBilling implements ServingStore {
  readonly balances = new Map<string, number>();
  readonly ledger: Settlement[] = [];
  readonly held = new Map<string, number>();
  private readonly keys = new Map<string, KeyAccess & { hash: string }>();

  addKey(accountId: string, tokens: number, models: string[] | null = null): string {
    const { secret, hash } = generateKey();
    const id = `hk_${this.keys.size + 1}`;
    this.keys.set(id, { id, accountId, hash, revokedAt: null, expiresAt: null, models });
    this.balances.set(accountId, tokens);
    return secret;
  }

  async findKeyId(hash: string): Promise<KeyRef | undefined> {
    const key = [...this.keys.values()].find((k) => k.hash === hash);
    return key && { keyId: key.id, accountId: key.accountId };
  }

  async getKey(keyId: string): Promise<KeyAccess | undefined> {
    return this.keys.get(keyId);
  }

  async reserve(r: ReserveRequest): Promise<ReserveResult> {
    const balance = this.balances.get(r.accountId);
    if (balance === undefined) return { kind: 'account_not_found' };
    const available = balance - [...this.held.values()].reduce((a, b) => a + b, 0);
    if (available < r.fixed + r.unit) return { kind: 'insufficient_quota', available, limitedBy: 'account' };
    const allowance = Math.min(r.allowance, Math.floor((available - r.fixed) / r.unit));
    const amount = Math.ceil(r.fixed + allowance * r.unit);
    this.held.set(r.requestId, amount);
    return { kind: 'reserved', allowance, amount };
  }

  async renew(_accountId: string, requestId: string): Promise<boolean> {
    return this.held.has(requestId);
  }

  async release(_accountId: string, requestId: string): Promise<void> {
    this.held.delete(requestId);
  }

  async settle(s: Settlement): Promise<SettleResult> {
    if (this.ledger.some((r) => r.requestId === s.requestId)) return { kind: 'duplicate' };
    this.held.delete(s.requestId);
    this.balances.set(s.accountId, (this.balances.get(s.accountId) ?? 0) - s.chargedTokens);
    this.ledger.push(s);
    return { kind: 'settled', balance: this.balances.get(s.accountId) };
  }

  async ping(): Promise<void> {}
}

const MODELS = [
  { id: MODEL, upstream_model: UPSTREAM_MODEL, context_length: 8192, max_output_tokens: 1024 },
  { id: 'acme/limited', upstream_model: UPSTREAM_MODEL, context_length: 8192, max_output_tokens: 1024, limits: { rpm: 1 } },
];

describe("a host's own metering store (metering and key lookup alone)", () => {
  let upstream: TestUpstream;
  let billing: HostBilling;
  let meter: Tokenmeter<ServingStore>;
  let app: express.Express;

  beforeAll(async () => {
    upstream = await startUpstream();
    billing = new HostBilling();
    meter = await createTokenmeter({
      upstreamUrl: upstream.url,
      models: MODELS,
      store: billing,
      journalFile: join(mkdtempSync(join(tmpdir(), 'tm-host-store-')), 'journal'),
      logger: createLogger('silent'),
    });
    app = express();
    app.use('/v1', meter.openai);
    app.use('/admin', meter.admin);
    app.use('/console', meter.console);
    app.use('/webhooks', meter.webhooks);
    app.use(meter.health);
    app.use((_req, res) => {
      res.status(404).json({ host: 'not found' });
    });
  });
  afterAll(async () => {
    await meter.close();
    await upstream.close();
  });

  it('serves a completion on a key it finds, reserving and settling in it exactly what the upstream used', async () => {
    const secret = billing.addKey('acct_1', 10_000);
    const res = await request(app).post('/v1/chat/completions').set('authorization', `Bearer ${secret}`).send(chatBody()).expect(200);
    const [record] = await eventually(async () => {
      const mine = billing.ledger.filter((r) => r.accountId === 'acct_1');
      expect(mine).toHaveLength(1);
      return mine;
    });
    expect(record).toMatchObject({ keyId: 'hk_1', model: MODEL, status: 200, estimated: false, stream: false });
    expect(record.chargedTokens).toBe(res.body.usage.total_tokens);
    expect(billing.balances.get('acct_1')).toBe(10_000 - res.body.usage.total_tokens);
    expect(billing.held.size).toBe(0);
  });

  it("lists the models a key may use from the key lookup's record, and refuses a key it does not find", async () => {
    const secret = billing.addKey('acct_models', 1_000, [MODEL]);
    const res = await request(app).get('/v1/models').set('authorization', `Bearer ${secret}`).expect(200);
    expect(res.body.data.map((m: { id: string }) => m.id)).toEqual([MODEL]);
    const unknown = await request(app).get('/v1/models').set('authorization', `Bearer ${generateKey().secret}`).expect(401);
    expect(unknown.body.error.code).toBe('invalid_api_key');
  });

  it('passes every admin, console and webhook request on to the host, and answers readiness from the store', async () => {
    for (const path of ['/admin/accounts', '/console/api/session', '/console/', '/webhooks/stripe']) {
      expect((await request(app).get(path)).body).toEqual({ host: 'not found' });
    }
    expect((await request(app).get('/readyz').expect(200)).body.status).toBe('ready');
  });

  it("holds a model's own limits in this process, refusing past them with nothing reserved in the host's store", async () => {
    const secret = billing.addKey('acct_limited', 10_000);
    const call = () =>
      request(app)
        .post('/v1/chat/completions')
        .set('authorization', `Bearer ${secret}`)
        .send(chatBody({ model: 'acme/limited' }));
    await call().expect(200);
    const refused = await call().expect(429);
    expect(refused.body.error.code).toBe('rate_limit_exceeded');
    await eventually(async () => expect(billing.ledger.filter((r) => r.accountId === 'acct_limited')).toHaveLength(1));
    expect(billing.held.size).toBe(0);
  });

  it('refuses, at start, the options only the whole store can serve', async () => {
    for (const extra of [{ adminToken: 'a'.repeat(16) }, { stripeSecretKey: 'sk_test_x', stripeWebhookSecret: 'whsec_x' }]) {
      const started = createTokenmeter({ models: MODELS, store: new HostBilling(), logger: createLogger('silent'), ...extra });
      await expect(started).rejects.toThrow(ConfigError);
      await expect(started).rejects.toMatchObject({ option: Object.keys(extra)[0] });
    }
  });
});
