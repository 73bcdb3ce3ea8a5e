/**
 * The Vercel AI SDK's default OpenAI provider (`openai(model)` calls /v1/responses, `openai.embedding(model)` calls
 * /v1/embeddings) and LangChain's OpenAIEmbeddings, pointed at the proxy with a key: they work unchanged, and the usage
 * they report is what the store charged.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { ChatOpenAI, OpenAIEmbeddings } from '@langchain/openai';
import { embed, embedMany, generateText, streamText } from 'ai';
import { TOKENS_PER_TEXT } from '../helpers/endpoint-replies';
import { keyWithTokens, makeStore, type StoreUnderTest } from '../helpers/stores';
import { startUpstream, words, type TestUpstream } from '../helpers/upstream';
import { settled, startProxy, MODEL, type ProxyUnderTest } from '../helpers/proxy';

const EMBED = 'acme/model-1';

describe('the Vercel AI SDK and LangChain', () => {
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

  it('generateText through the default provider (/v1/responses): the text, and usage equal to the charge', async () => {
    const key = await keyWithTokens(s.store, 10_000);
    const openai = createOpenAI({ apiKey: key.secret, baseURL: proxy.baseURL });
    const result = await generateText({ model: openai(MODEL), prompt: 'Say hello.' });
    expect(upstream.calls.at(-1)!.path).toBe('/v1/responses');
    expect(result.text).toBe(words(5).join(''));
    expect(result.usage).toMatchObject({ inputTokens: 9, outputTokens: 5 });
    expect(await spent(key, 10_000)).toBe(result.usage.totalTokens);
  });

  it('streamText through the default provider: the streamed text, and usage equal to the charge', async () => {
    const key = await keyWithTokens(s.store, 10_000);
    const openai = createOpenAI({ apiKey: key.secret, baseURL: proxy.baseURL });
    const result = streamText({ model: openai(MODEL), prompt: 'Say hello.' });
    let text = '';
    for await (const delta of result.textStream) text += delta;
    const usage = await result.usage;
    expect(upstream.calls.at(-1)!.body.stream).toBe(true);
    expect(text).toBe(words(5).join(''));
    expect(usage).toMatchObject({ inputTokens: 9, outputTokens: 5 });
    expect(await spent(key, 10_000)).toBe(usage.totalTokens);
  });

  it('embed and embedMany: the vectors, and usage equal to the charge', async () => {
    const key = await keyWithTokens(s.store, 10_000);
    const openai = createOpenAI({ apiKey: key.secret, baseURL: proxy.baseURL });
    const one = await embed({ model: openai.embedding(EMBED), value: 'sunny day at the beach' });
    expect(one.embedding).toHaveLength(8);
    expect(one.usage.tokens).toBe(TOKENS_PER_TEXT);
    const many = await embedMany({ model: openai.embedding(EMBED), values: ['a', 'b', 'c'] });
    expect(many.embeddings).toHaveLength(3);
    expect(many.usage.tokens).toBe(3 * TOKENS_PER_TEXT);
    expect(await spent(key, 10_000)).toBe(4 * TOKENS_PER_TEXT);
  });

  it('the chat and completion providers, plain and streamed (their usage chunk carrying the charge): text and usage', async () => {
    const key = await keyWithTokens(s.store, 10_000);
    const openai = createOpenAI({ apiKey: key.secret, baseURL: proxy.baseURL });
    for (const model of [openai.chat(MODEL), openai.completion(MODEL)]) {
      const plain = await generateText({ model, prompt: 'Say hello.' });
      expect(plain.text).toBe(words(5).join(''));
      expect(plain.usage).toMatchObject({ outputTokens: 5 });
      const streamed = streamText({ model, prompt: 'Say hello.' });
      let text = '';
      for await (const delta of streamed.textStream) text += delta;
      expect(text).toBe(words(5).join(''));
      expect(await streamed.usage).toMatchObject({ outputTokens: 5 });
      expect(upstream.calls.at(-1)!.body.stream_options).toEqual({ include_usage: true });
    }
    await settled(proxy);
    expect(await s.store.usage({ keyId: key.id, limit: 10 })).toHaveLength(4);
  });

  it("LangChain's ChatOpenAI, invoked and streamed with usage (which carries the charge): text and usage", async () => {
    const key = await keyWithTokens(s.store, 10_000);
    const chat = new ChatOpenAI({ model: MODEL, apiKey: key.secret, configuration: { baseURL: proxy.baseURL }, streamUsage: true });
    const answer = await chat.invoke('Say hello.');
    expect(answer.content).toBe(words(5).join(''));
    expect(answer.usage_metadata).toMatchObject({ input_tokens: 9, output_tokens: 5 });
    let text = '';
    let usage: unknown;
    for await (const chunk of await chat.stream('Say hello.')) {
      text += String(chunk.content);
      if (chunk.usage_metadata) usage = chunk.usage_metadata;
    }
    expect(text).toBe(words(5).join(''));
    expect(usage).toMatchObject({ input_tokens: 9, output_tokens: 5 });
    expect(upstream.calls.at(-1)!.body.stream_options).toEqual({ include_usage: true });
    expect(await spent(key, 10_000)).toBe(2 * (9 + 5));
  });

  it("LangChain's OpenAIEmbeddings: documents and a query embedded, each charged", async () => {
    const key = await keyWithTokens(s.store, 10_000);
    const embeddings = new OpenAIEmbeddings({ model: EMBED, apiKey: key.secret, configuration: { baseURL: proxy.baseURL } });
    const docs = await embeddings.embedDocuments(['first document', 'second document']);
    const query = await embeddings.embedQuery('a question');
    expect(docs).toHaveLength(2);
    expect(docs[0]).toHaveLength(8);
    expect(query).toHaveLength(8);
    expect(await spent(key, 10_000)).toBe(3 * TOKENS_PER_TEXT);
  });
});
