/** The official openai package on the other endpoints: completions, embeddings and responses, plain and streamed. */
import OpenAI from 'openai';
import { TOKENS_PER_TEXT } from '../helpers/endpoint-replies';
import { makeStore, keyWithTokens, type StoreUnderTest } from '../helpers/stores';
import { startUpstream, words, type TestUpstream } from '../helpers/upstream';
import { startProxy, settled, MODEL, type ProxyUnderTest } from '../helpers/proxy';

const EMBED = 'acme/model-1';

describe('the official openai SDK on completions, embeddings and responses', () => {
  let s: StoreUnderTest;
  let upstream: TestUpstream;
  let proxy: ProxyUnderTest;

  beforeAll(async () => {
    s = await makeStore('redis');
    upstream = await startUpstream();
    proxy = await startProxy({ store: s.store, upstreamUrl: upstream.url, models: [{}, { endpoints: ['embeddings'] }] });
  });
  afterAll(async () => {
    await proxy.close();
    await upstream.close();
    await s.close();
  });

  const spent = async (key: { id: string }, from: number) => {
    await settled(proxy);
    return from - (await s.store.getKey(key.id))!.balance;
  };

  it('completions.create: the text, the client model id, and usage equal to the charge', async () => {
    const key = await keyWithTokens(s.store, 10_000);
    const client = new OpenAI({ apiKey: key.secret, baseURL: proxy.baseURL });
    const completion = await client.completions.create({ model: MODEL, prompt: 'Say hello', max_tokens: 20 });
    expect(completion.model).toBe(MODEL);
    expect(completion.choices[0].text).toBe(words(5).join(''));
    expect(completion.usage).toMatchObject({ prompt_tokens: TOKENS_PER_TEXT, completion_tokens: 5 });
    expect(await spent(key, 10_000)).toBe(completion.usage!.total_tokens);
  });

  it('completions.create streamed: the text, and the usage it asked for equal to the charge', async () => {
    const key = await keyWithTokens(s.store, 10_000);
    const client = new OpenAI({ apiKey: key.secret, baseURL: proxy.baseURL });
    const stream = await client.completions.create({
      model: MODEL,
      prompt: 'Say hello',
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      expect(chunk.model).toBe(MODEL);
      text += chunk.choices[0]?.text ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(words(5).join(''));
    expect(usage).toMatchObject({ prompt_tokens: TOKENS_PER_TEXT, completion_tokens: 5 });
    expect(await spent(key, 10_000)).toBe(usage!.total_tokens);
  });

  it('embeddings.create (base64 on the wire, as the SDK asks): vectors decoded, usage equal to the charge', async () => {
    const key = await keyWithTokens(s.store, 10_000);
    const client = new OpenAI({ apiKey: key.secret, baseURL: proxy.baseURL });
    const res = await client.embeddings.create({ model: EMBED, input: ['first text', 'second text'] });
    expect(upstream.calls.at(-1)!.body.encoding_format).toBe('base64');
    expect(res.model).toBe(EMBED);
    expect(res.data).toHaveLength(2);
    expect(res.data[0].embedding).toHaveLength(8);
    expect(typeof res.data[0].embedding[0]).toBe('number');
    expect(res.usage.prompt_tokens).toBe(2 * TOKENS_PER_TEXT);
    expect(await spent(key, 10_000)).toBe(res.usage.prompt_tokens);
  });

  it('responses.create: the output text, the client model id, and usage equal to the charge', async () => {
    const key = await keyWithTokens(s.store, 10_000);
    const client = new OpenAI({ apiKey: key.secret, baseURL: proxy.baseURL });
    const response = await client.responses.create({ model: MODEL, input: 'Say hello', instructions: 'Be brief.' });
    expect(response.model).toBe(MODEL);
    expect(response.output_text).toBe(words(5).join(''));
    expect(response.usage).toMatchObject({ input_tokens: 9, output_tokens: 5 });
    expect(await spent(key, 10_000)).toBe(response.usage!.total_tokens);
  });

  it('responses.create streamed: the deltas, the final response, and its usage equal to the charge', async () => {
    const key = await keyWithTokens(s.store, 10_000);
    const client = new OpenAI({ apiKey: key.secret, baseURL: proxy.baseURL });
    const stream = await client.responses.create({ model: MODEL, input: [{ role: 'user', content: 'Say hello' }], stream: true });
    let text = '';
    let final: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.created') expect(event.response.model).toBe(MODEL);
      if (event.type === 'response.completed') final = event.response;
    }
    expect(text).toBe(words(5).join(''));
    expect(final?.model).toBe(MODEL);
    expect(await spent(key, 10_000)).toBe(final!.usage!.total_tokens);
  });
});
