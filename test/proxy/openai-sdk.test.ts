/** The official openai package, pointed at the proxy's /v1 with a key, gets completions and streams metered right. */
import OpenAI from 'openai';
import { makeStore, keyWithTokens, type StoreUnderTest } from '../helpers/stores';
import { startUpstream, words, PROMPT_TOKENS, type TestUpstream } from '../helpers/upstream';
import { startProxy, settled, MODEL, type ProxyUnderTest } from '../helpers/proxy';

describe('the official openai SDK', () => {
  let s: StoreUnderTest;
  let upstream: TestUpstream;
  let proxy: ProxyUnderTest;

  beforeAll(async () => {
    s = await makeStore('redis');
    upstream = await startUpstream();
    proxy = await startProxy({ store: s.store, upstreamUrl: upstream.url });
  });
  afterAll(async () => {
    await proxy.close();
    await upstream.close();
    await s.close();
  });

  it('gets a completion whose usage is what the store charged', async () => {
    const key = await keyWithTokens(s.store, 10_000);
    const client = new OpenAI({ apiKey: key.secret, baseURL: proxy.baseURL });
    const completion = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Say hello.' }],
      temperature: 0.2,
    });
    expect(completion.model).toBe(MODEL);
    expect(completion.choices[0].message.content).toBe(words(5).join(''));
    await settled(proxy);
    const state = await s.store.getKey(key.id);
    expect(10_000 - state!.balance).toBe(completion.usage!.total_tokens);
  });

  it('gets a stream, with the usage it asked for equal to what the store charged', async () => {
    const key = await keyWithTokens(s.store, 10_000);
    const client = new OpenAI({ apiKey: key.secret, baseURL: proxy.baseURL });
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'Say hello.' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      expect(chunk.model).toBe(MODEL);
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(words(5).join(''));
    const charged = PROMPT_TOKENS + 5;
    expect(usage).toEqual({
      prompt_tokens: PROMPT_TOKENS,
      completion_tokens: 5,
      total_tokens: charged,
      tokenmeter_charged_tokens: charged,
      tokenmeter_balance_tokens: 10_000 - charged,
    });
    await settled(proxy);
    expect(10_000 - (await s.store.getKey(key.id))!.balance).toBe(usage!.total_tokens);
  });

  it('sees a refused key as an AuthenticationError and an empty balance as a 429 it does not retry', async () => {
    const bad = new OpenAI({ apiKey: 'sk-wrong', baseURL: proxy.baseURL });
    await expect(bad.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }] })).rejects.toBeInstanceOf(
      OpenAI.AuthenticationError,
    );

    const poor = await keyWithTokens(s.store, 3);
    const before = upstream.calls.length;
    const client = new OpenAI({ apiKey: poor.secret, baseURL: proxy.baseURL, maxRetries: 2 });
    const err = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect((err as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('insufficient_quota');
    expect(upstream.calls.length).toBe(before);
  });
});
