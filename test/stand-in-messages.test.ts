/**
 * The stand-in (`npm run mock-upstream`) speaks Anthropic's Messages API and rerank/score as vLLM does: the Anthropic
 * SDK's create, stream and countTokens, and a rerank, each through tokenmeter charged exactly the usage it reports.
 */
import type { ChildProcess } from 'node:child_process';
import Anthropic from '@anthropic-ai/sdk';
import request from 'supertest';
import { MemoryStore } from '../src/store/memory/memory-store';
import { settled, startProxy, type ProxyUnderTest } from './helpers/proxy';
import { startStandIn } from './helpers/stand-in';
import { keyWithTokens } from './helpers/stores';

jest.setTimeout(30_000);

const CODER = 'acme/coder';
const RERANKER = 'acme/reranker';

describe('the stand-in speaks /v1/messages and rerank', () => {
  let standIn: ChildProcess;
  let proxy: ProxyUnderTest;
  const store = new MemoryStore();
  beforeAll(async () => {
    const started = startStandIn({ MOCK_PORT: '0' });
    standIn = started.child;
    const upstreamUrl = `http://127.0.0.1:${await started.port}/v1`;
    const models = [
      { id: CODER, endpoints: ['messages' as const] },
      { id: RERANKER, endpoints: ['rerank' as const, 'score' as const], max_output_tokens: undefined },
    ];
    proxy = await startProxy({ store, upstreamUrl, models });
  });
  afterAll(async () => {
    await proxy?.close();
    standIn?.kill('SIGKILL');
  });

  const spent = async (key: { id: string }) => {
    await settled(proxy);
    return 100_000 - (await store.getKey(key.id))!.balance;
  };

  it('messages.create, messages.stream() and countTokens', async () => {
    const key = await keyWithTokens(store, 100_000);
    const client = new Anthropic({ apiKey: key.secret, baseURL: proxy.url, maxRetries: 0 });
    const body = { model: CODER, max_tokens: 12, messages: [{ role: 'user' as const, content: 'Hello' }] };
    const json = await client.messages.create(body);
    expect(json.model).toBe(CODER);
    expect(json.usage.output_tokens).toBe(12);
    expect(json.stop_reason).toBe('max_tokens');
    const streamed = await client.messages.stream(body).finalMessage();
    expect(streamed.content).toEqual(json.content);
    const { input_tokens } = await client.messages.countTokens({ model: CODER, messages: body.messages });
    expect(input_tokens).toBe(json.usage.input_tokens);
    expect(await spent(key)).toBe(2 * (json.usage.input_tokens + 12));
  });

  it('rerank, charged its total_tokens', async () => {
    const key = await keyWithTokens(store, 100_000);
    const res = await request(proxy.url)
      .post('/v1/rerank')
      .set('authorization', `Bearer ${key.secret}`)
      .send({ model: RERANKER, query: 'capital', documents: ['Paris', 'Berlin'], top_n: 1 })
      .expect(200);
    expect(res.body.results).toHaveLength(1);
    expect(await spent(key)).toBe(res.body.usage.total_tokens);
  });
});
