/**
 * Webhooks across real proxy processes on one redis-server: two processes serve and deliver (one of them from its
 * delivery thread), each event reaches the
 * receiver once; a process killed with SIGKILL mid-delivery has the event redelivered, same id, after a restart;
 * usage.settled events sum to the ledger and to /metrics.
 */
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { verifyWebhook } from '../../src/events/signature';
import { eventually } from '../helpers/eventually';
import { writeModelsFile } from '../helpers/models-file';
import { runCli, startProxyProcess, type ProxyProcess } from '../helpers/processes';
import { chatBody } from '../helpers/proxy';
import { testRedisUrl } from '../helpers/stores';
import { startUpstream, type TestUpstream } from '../helpers/upstream';
import { startReceiver, type WebhookReceiver } from '../helpers/webhook-receiver';

jest.setTimeout(60_000);

const ADMIN = 'admin-token-for-webhook-processes';

/** The sum of tokenmeter_charged_tokens_total over its series, in one process's /metrics text. */
function chargedOnMetrics(text: string): number {
  return text
    .split('\n')
    .filter((l) => l.startsWith('tokenmeter_charged_tokens_total{'))
    .reduce((total, l) => total + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

describe('webhooks across processes', () => {
  let upstream: TestUpstream;
  let receiver: WebhookReceiver;
  let env: Record<string, string>;
  const procs: ProxyProcess[] = [];

  beforeAll(async () => {
    upstream = await startUpstream();
    receiver = await startReceiver();
    env = {
      ADMIN_TOKEN: ADMIN,
      REDIS_URL: testRedisUrl(),
      REDIS_PREFIX: `wh${randomBytes(3).toString('hex')}:`,
      UPSTREAM_URL: upstream.url,
      MODELS_FILE: writeModelsFile(),
      // A short receiver timeout, so a dead holder's endpoint lease (timeout + 5 s) frees soon.
      WEBHOOK_TIMEOUT_MS: '1000',
    };
    // One process delivers in its event loop, the other from its delivery thread (the built dist/, as run in production).
    procs.push(await startProxyProcess(env), await startProxyProcess({ ...env, WEBHOOK_DELIVERY_THREAD: 'true' }));
  });

  afterAll(async () => {
    for (const p of procs) await p.stop('SIGKILL');
    await receiver.close();
    await upstream.close();
  });

  const cli = (...args: string[]) => runCli(args, { TOKENMETER_URL: procs[0].url, TOKENMETER_ADMIN_TOKEN: ADMIN });

  test('two processes: each event once, signed, and usage.settled sums to the ledger and to /metrics to the token', async () => {
    const created = await cli('webhooks', 'create', receiver.url, '--events', '*,usage.settled', '--json');
    expect(created.code).toBe(0);
    const endpoint = JSON.parse(created.stdout) as { id: string; secret: string };
    expect(endpoint.secret).toMatch(/^whsec_/);
    const listed = await cli('webhooks', 'list', '--json');
    expect(listed.stdout).not.toContain(endpoint.secret); // shown once, never listed

    // Each process learns what the endpoints want on its next tick: a key made before then has no event, so
    // keys are made until one's key.created arrives.
    const keys: { id: string; key: string }[] = [];
    await eventually(async () => {
      const k = JSON.parse((await cli('keys', 'create', '--tokens', '100000', '--json')).stdout) as { id: string; key: string };
      keys.push(k);
      await eventually(
        async () => expect(receiver.received.some((r) => r.event.type === 'key.created' && r.event.data.key_id === k.id)).toBe(true),
        1_500,
      );
    }, 20_000);
    const key = keys[keys.length - 1];
    // The other process learns them on its own tick, however late a busy machine makes it: keys are made through it
    // too until one's key.created arrives, so usage settled on either is an event.
    await eventually(
      async () => {
        const made = await request(procs[1].url).post('/admin/keys').set('authorization', `Bearer ${ADMIN}`).send({ tokens: 1 });
        await eventually(
          async () =>
            expect(receiver.received.some((r) => r.event.type === 'key.created' && r.event.data.key_id === made.body.id)).toBe(true),
          1_500,
          "the second process's key.created",
        );
      },
      20_000,
      'the second process to know the endpoint',
    );
    for (let i = 0; i < 6; i++) {
      await request(procs[i % 2].url)
        .post('/v1/chat/completions')
        .set('authorization', `Bearer ${key.key}`)
        .send(chatBody())
        .expect(200);
    }
    const ledger = JSON.parse((await cli('usage', '--key-id', key.id, '--json')).stdout) as {
      request_id: string;
      charged_tokens: number;
    }[];
    expect(ledger).toHaveLength(6);
    const settled = await eventually(async () => {
      const got = receiver.received.filter((r) => r.event.type === 'usage.settled' && r.event.data.key_id === key.id);
      expect(got).toHaveLength(6);
      return got;
    }, 15_000);
    expect(new Set(settled.map((r) => r.event.id))).toEqual(new Set(ledger.map((u) => u.request_id)));
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
    const eventSum = sum(settled.map((r) => r.event.data.charged_tokens as number));
    expect(eventSum).toBe(sum(ledger.map((u) => u.charged_tokens)));
    // And to /metrics: these six are the only metered requests either process has served.
    const metered = await Promise.all(procs.map(async (p) => chargedOnMetrics((await request(p.url).get('/metrics').expect(200)).text)));
    expect(sum(metered)).toBe(eventSum);
    for (const r of receiver.received) expect(verifyWebhook(r.body, r.signature, endpoint.secret).valid).toBe(true);

    // The export without webhooks: the same CloudEvents, the same sums, in each format.
    const exported = await cli('usage', 'export', '--format', 'cloudevents');
    expect(exported.code).toBe(0);
    const lines = exported.stdout.trim().split('\n');
    const mine = lines.map((l) => JSON.parse(l) as { id: string; data: { key_id: string } }).filter((e) => e.data.key_id === key.id);
    expect(mine.map((e) => JSON.stringify(e)).sort()).toEqual(settled.map((r) => r.body).sort());
    const csv = (await cli('usage', 'export', '--format', 'csv')).stdout.trim().split('\n');
    expect(csv[0]).toBe(
      'created,account_id,key_id,request_id,model,prompt_tokens,completion_tokens,charged_tokens,estimated,stream,status',
    );
    expect(csv.filter((l) => l.includes(key.id))).toHaveLength(6);
    const ndjson = (await cli('usage', 'export', '--format', 'ndjson', '--since', '0')).stdout.trim().split('\n');
    expect(
      sum(
        ndjson
          .map((l) => JSON.parse(l) as { key_id: string; charged_tokens: number })
          .filter((u) => u.key_id === key.id)
          .map((u) => u.charged_tokens),
      ),
    ).toBe(sum(ledger.map((u) => u.charged_tokens)));
    expect((await cli('usage', 'export', '--format', 'xml')).code).not.toBe(0);
    const ids = receiver.received.map((r) => r.event.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  test('a process killed mid-delivery: the event is delivered after a restart, with the same id', async () => {
    const held = new Promise<string>((resolve) => (receiver.hold = resolve));
    await cli('keys', 'create', '--tokens', '10', '--json'); // account.created, then key.created
    const body = await held; // the first of them, unanswered: its delivery is under way
    const id = (JSON.parse(body) as { id: string }).id;
    // Whichever process holds the delivery, both go down hard; then one starts again.
    for (const p of procs.splice(0)) await p.stop('SIGKILL');
    receiver.hold = undefined;
    procs.push(await startProxyProcess(env));
    const redelivered = await eventually(async () => {
      const r = receiver.received.find((x) => x.event.id === id);
      expect(r).toBeDefined();
      return r!;
    }, 30_000);
    expect(redelivered.body).toBe(body);
  });
});
