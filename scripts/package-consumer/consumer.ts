/**
 * A host app as a user of the published package writes it: typed options and hooks, tokenmeter mounted beside the
 * host's own route, one metered request against a stand-in upstream. Exits non-zero when anything is off.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createTokenmeter, MemoryStore, type Identity, type SettledRecord, type Tokenmeter, type TokenmeterOptions } from 'tokenmeter';

const upstream = createServer((req, res) => {
  let body = '';
  req.on('data', (c: Buffer) => (body += c.toString()));
  req.on('end', () => {
    const { model } = JSON.parse(body) as { model: string };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 1,
        model,
        choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 7, completion_tokens: 1, total_tokens: 8 },
      }),
    );
  });
});

async function main(): Promise<void> {
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  // The host's user has a tokenmeter account holding 1,000 tokens; the host signs its users in itself, no API keys.
  const store = new MemoryStore();
  const created = await store.createAccount({
    email: 'user@example.com',
    name: 'user-1',
    passwordHash: null,
    role: 'member',
    status: 'active',
  });
  if (created.kind !== 'created') throw new Error('account not created');
  const accountId = created.account.id;
  await store.grantPackage(accountId, { tokens: 1000, expiresAt: null });

  const settled: SettledRecord[] = [];
  const options: TokenmeterOptions = {
    upstreamUrl: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`,
    models: [{ id: 'acme/small', context_length: 4096, max_output_tokens: 256 }],
    store,
    logLevel: 'silent',
    authenticate: async (req): Promise<Identity | null> => (req.headers['x-session'] === 'user-1' ? { accountId } : null),
    onSettle: (r) => {
      settled.push(r);
    },
  };
  const meter: Tokenmeter = await createTokenmeter(options);
  const app = express();
  app.use(express.json());
  app.get('/hello', (_req, res) => {
    res.json({ hello: 'host' });
  });
  app.use('/v1', meter.openai);
  app.get('/metrics', meter.metrics);
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const res = await fetch(`${base}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-session': 'user-1' },
    body: JSON.stringify({ model: 'acme/small', messages: [{ role: 'user', content: 'hello' }] }),
  });
  const answer = (await res.json()) as { usage: { total_tokens: number } };
  const anonymous = await fetch(`${base}/v1/chat/completions`, { method: 'POST', body: '{}' });
  const hello = (await (await fetch(`${base}/hello`)).json()) as { hello: string };
  await meter.close();
  const balance = (await store.getAccount(accountId))?.balance;

  const problems = [
    res.status !== 200 && `completion status ${res.status}`,
    balance !== 1000 - answer.usage.total_tokens && `balance ${balance} after charging ${answer.usage.total_tokens}`,
    settled.length !== 1 && `onSettle called ${settled.length} times`,
    anonymous.status !== 401 && `unauthenticated status ${anonymous.status}`,
    hello.hello !== 'host' && 'the host route changed',
  ].filter(Boolean);
  server.close();
  upstream.close();
  if (problems.length > 0) throw new Error(problems.join('; '));
  console.log(`consumer: one metered request, ${answer.usage.total_tokens} tokens charged, onSettle told once`);
}

main().catch((err: Error) => {
  console.error(`consumer: FAILED: ${err.message}`);
  process.exit(1);
});
