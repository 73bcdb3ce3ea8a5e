/**
 * Webhooks across two real proxy processes on one redis-server, as an operator meets them: an endpoint created on one
 * receives the events caused on the other 1 ms after POST /admin/webhooks answered; a refusing receiver's backlog
 * (queue length, oldest age, last error) shows on GET /admin/webhooks/:id and on /metrics.
 */
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { eventually } from '../helpers/eventually';
import { writeModelsFile } from '../helpers/models-file';
import { startProxyProcess, type ProxyProcess } from '../helpers/processes';
import { testRedisUrl } from '../helpers/stores';
import { startUpstream, type TestUpstream } from '../helpers/upstream';
import { startReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

jest.setTimeout(60_000);

const ADMIN = 'admin-token-for-webhook-start';

describe('webhooks on two processes: when an endpoint starts receiving, and its backlog', () => {
  let upstream: TestUpstream;
  let receiver: WebhookReceiver;
  let refusing: WebhookReceiver;
  const procs: ProxyProcess[] = [];

  beforeAll(async () => {
    upstream = await startUpstream();
    receiver = await startReceiver();
    refusing = await startReceiver();
    const env = {
      ADMIN_TOKEN: ADMIN,
      REDIS_URL: testRedisUrl(),
      REDIS_PREFIX: `ws${randomBytes(3).toString('hex')}:`,
      UPSTREAM_URL: upstream.url,
      MODELS_FILE: writeModelsFile(),
    };
    procs.push(await startProxyProcess(env), await startProxyProcess(env));
  });

  afterAll(async () => {
    for (const p of procs) await p.stop('SIGKILL');
    await receiver.close();
    await refusing.close();
    await upstream.close();
  });

  const admin = (p: ProxyProcess) => ({
    post: (path: string, body: object) => request(p.url).post(path).set('authorization', `Bearer ${ADMIN}`).send(body),
    get: (path: string) => request(p.url).get(path).set('authorization', `Bearer ${ADMIN}`),
  });

  test('key.created caused on the other process 1 ms after POST /admin/webhooks answered is delivered', async () => {
    const [a, b] = procs;
    await admin(a)
      .post('/admin/webhooks', { url: receiver.url, events: ['key.created'] })
      .expect(201);
    await new Promise((r) => setTimeout(r, 1));
    const keys: string[] = [];
    for (let i = 0; i < 3; i++) keys.push(((await admin(b).post('/admin/keys', { tokens: 10 }).expect(201)).body as { id: string }).id);
    await eventually(async () =>
      expect(receiver.received.filter((r) => r.event.type === 'key.created').map((r) => r.event.data.key_id)).toEqual(keys),
    );
  });

  test("a refusing receiver's backlog: its queue, oldest age and last error on GET /admin/webhooks/:id and /metrics", async () => {
    const [a, b] = procs;
    refusing.answer = 500;
    const created = await admin(a)
      .post('/admin/webhooks', { url: refusing.url, events: ['key.created'] })
      .expect(201);
    const id = (created.body as { id: string }).id;
    await admin(b).post('/admin/keys', { tokens: 10 }).expect(201);
    const shown = await eventually(async () => {
      const r = await admin(b).get(`/admin/webhooks/${id}`).expect(200);
      expect(r.body.backlog).toMatchObject({ pending: 1, last_error: { status: 500, error: 'HTTP 500' } });
      return r.body as { backlog: { oldest_age_seconds: number } };
    });
    expect(shown.backlog.oldest_age_seconds).toBeGreaterThanOrEqual(0);
    for (const p of procs) {
      await eventually(async () => {
        const text = (await request(p.url).get('/metrics').expect(200)).text;
        expect(text).toContain(`tokenmeter_webhook_backlog{endpoint="${id}"} 1`);
        expect(text).toMatch(new RegExp(`tokenmeter_webhook_oldest_seconds\\{endpoint="${id}"\\} \\d`));
      });
    }
    await admin(a).get('/admin/webhooks/we_none').expect(404);
  });
});
