/**
 * The quick start's stand-in (`npm run mock-upstream`) behind tokenmeter, with the shipped config/models.yaml, as a
 * newcomer tries it: the openai SDK, the Vercel AI SDK's default provider and LangChain each get the shape they parse
 * (JSON or stream as asked, every Responses event, text_completion, base64 embeddings of the asked dimensions), with
 * usage counted from the actual prompt, and each call is charged exactly what its usage says.
 */
import type { ChildProcess } from 'node:child_process';
import { createOpenAI } from '@ai-sdk/openai';
import { ChatOpenAI, OpenAIEmbeddings } from '@langchain/openai';
import { embed, generateText, streamText } from 'ai';
import OpenAI from 'openai';
import { ModelsFile } from '../src/catalog/models';
import { MemoryStore } from '../src/store/memory/memory-store';
import { settled, startProxy, type ProxyUnderTest } from './helpers/proxy';
import { startStandIn } from './helpers/stand-in';
import { keyWithTokens } from './helpers/stores';

jest.setTimeout(30_000);

const CHAT = 'meta/llama-3.1-8b-instruct';
const EMBED = 'nomic-ai/nomic-embed-text-v1.5';
/** `npm run mock-upstream` answers with 12 numbered words. */
const ANSWER = Array.from({ length: 12 }, (_, i) => ` word${i}`).join('');

describe('the stand-in through tokenmeter, with the shipped models file', () => {
  let standIn: ChildProcess;
  let proxy: ProxyUnderTest;
  let origin: string;
  const store = new MemoryStore();
  beforeAll(async () => {
    const started = startStandIn({ MOCK_PORT: '0' });
    standIn = started.child;
    origin = `http://127.0.0.1:${await started.port}`;
    const upstreamUrl = `${origin}/v1`;
    const modelsFile = new ModelsFile('config/models.yaml', { upstreamUrl, upstreamApiKey: undefined, env: {} });
    proxy = await startProxy({ store, upstreamUrl, modelsFile });
  });
  afterAll(async () => {
    await proxy?.close();
    standIn?.kill('SIGKILL');
  });

  /** A key of its own per test, so what it was charged is its balance's drop. */
  const funded = () => keyWithTokens(store, 100_000);
  const spent = async (key: { id: string }) => {
    await settled(proxy);
    return 100_000 - (await store.getKey(key.id))!.balance;
  };
  const sdk = (key: { secret: string }) => new OpenAI({ apiKey: key.secret, baseURL: proxy.baseURL, maxRetries: 0 });

  it("answers a pool's health checks as vLLM does: GET /health, and GET /v1/models listing the models file's upstream names", async () => {
    expect((await fetch(`${origin}/health`)).status).toBe(200);
    const models = (await (await fetch(`${origin}/v1/models`)).json()) as { object: string; data: { id: string }[] };
    expect(models.object).toBe('list');
    expect(models.data.map((m) => m.id)).toEqual(['meta-llama/Llama-3.1-8B-Instruct', 'Qwen/Qwen2.5-7B-Instruct', EMBED]);
  });

  describe('the openai SDK', () => {
    it('chat completions, JSON and streamed, with usage counted from the prompt', async () => {
      const key = await funded();
      const client = sdk(key);
      const short = await client.chat.completions.create({ model: CHAT, messages: [{ role: 'user', content: 'Hello' }] });
      expect(short.choices[0].message.content).toBe(ANSWER);
      // "Hello" is one token, with the message's framing: a handful, not a fixed figure.
      expect(short.usage!.prompt_tokens).toBeLessThan(12);
      const long = await client.chat.completions.create({ model: CHAT, messages: [{ role: 'user', content: 'Hello '.repeat(50) }] });
      expect(long.usage!.prompt_tokens).toBeGreaterThan(short.usage!.prompt_tokens + 40);
      const stream = await client.chat.completions.create({
        model: CHAT,
        messages: [{ role: 'user', content: 'Hello' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = '';
      let usage: OpenAI.CompletionUsage | undefined | null;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta.content ?? '';
        usage ??= chunk.usage;
      }
      expect(text).toBe(ANSWER);
      expect(usage).toMatchObject({ prompt_tokens: short.usage!.prompt_tokens, completion_tokens: 12 });
      expect(await spent(key)).toBe(short.usage!.total_tokens + long.usage!.total_tokens + usage!.total_tokens);
    });

    it('legacy completions as text_completion', async () => {
      const key = await funded();
      const done = await sdk(key).completions.create({ model: CHAT, prompt: 'Once upon a time', max_tokens: 5 });
      expect(done.object).toBe('text_completion');
      expect(done.choices[0]).toMatchObject({ text: ' word0 word1 word2 word3 word4', finish_reason: 'length' });
      expect(done.usage).toMatchObject({ prompt_tokens: 4, completion_tokens: 5 });
      expect(await spent(key)).toBe(done.usage!.total_tokens);
    });

    it('embeddings in base64 (its default) decode to the same vectors as floats, with the dimensions asked for', async () => {
      const key = await funded();
      const client = sdk(key);
      const asBase64 = await client.embeddings.create({ model: EMBED, input: ['first text', 'second'] });
      const asFloats = await client.embeddings.create({ model: EMBED, input: ['first text', 'second'], encoding_format: 'float' });
      expect(asBase64.data.map((d) => d.embedding.length)).toEqual([768, 768]);
      expect(asBase64.data[1].embedding[0]).toBeCloseTo(asFloats.data[1].embedding[0], 6);
      expect(asBase64.data[0].embedding).not.toEqual(asBase64.data[1].embedding);
      const shorter = await client.embeddings.create({ model: EMBED, input: 'first text', dimensions: 256 });
      expect(shorter.data[0].embedding).toHaveLength(256);
      expect(asBase64.usage).toMatchObject({ prompt_tokens: 3, total_tokens: 3 });
      expect(await spent(key)).toBe(3 + 3 + shorter.usage.total_tokens);
    });

    it('Responses: JSON when not streamed, every event when streamed, and responses.stream()', async () => {
      const key = await funded();
      const client = sdk(key);
      const json = await client.responses.create({ model: CHAT, input: 'Hello' });
      expect(json.output_text).toBe(ANSWER);
      expect(json.status).toBe('completed');

      const types: string[] = [];
      const sequence: number[] = [];
      let completed: OpenAI.Responses.Response | undefined;
      for await (const event of await client.responses.create({ model: CHAT, input: 'Hello', stream: true })) {
        types.push(event.type);
        sequence.push(event.sequence_number);
        if (event.type === 'response.completed') completed = event.response;
      }
      expect([...new Set(types)]).toEqual([
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
        'response.output_text.delta',
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ]);
      expect(sequence).toEqual(sequence.map((_, i) => i));

      const helper = client.responses.stream({ model: CHAT, input: 'Hello' });
      let deltas = '';
      helper.on('response.output_text.delta', (e) => (deltas += e.delta));
      const final = await helper.finalResponse();
      expect(final.output_text).toBe(ANSWER);
      expect(deltas).toBe(ANSWER);
      // Each response its own id, as the proxy records whose each one is.
      expect(new Set([json.id, completed!.id, final.id]).size).toBe(3);
      const usages = [json.usage!, completed!.usage!, final.usage!];
      expect(usages[2]).toMatchObject({ input_tokens: usages[0].input_tokens, output_tokens: 12 });
      expect(await spent(key)).toBe(usages.reduce((sum, u) => sum + u.total_tokens, 0));
    });
  });

  describe('the Vercel AI SDK’s default provider', () => {
    it('generateText and streamText with openai(model) (the Responses API), and embed', async () => {
      const key = await funded();
      const openai = createOpenAI({ apiKey: key.secret, baseURL: proxy.baseURL });
      const generated = await generateText({ model: openai(CHAT), prompt: 'Hello', maxRetries: 0 });
      expect(generated.text).toBe(ANSWER);
      const streamed = streamText({ model: openai(CHAT), prompt: 'Hello', maxRetries: 0 });
      let text = '';
      for await (const delta of streamed.textStream) text += delta;
      expect(text).toBe(ANSWER);
      const usage = await streamed.usage;
      const embedded = await embed({ model: openai.embedding(EMBED), value: 'sunny day at the beach', maxRetries: 0 });
      expect(embedded.embedding).toHaveLength(768);
      expect(generated.usage.outputTokens).toBe(12);
      expect(await spent(key)).toBe(generated.usage.totalTokens! + usage.totalTokens! + embedded.usage.tokens);
    });
  });

  describe('LangChain', () => {
    const options = (key: { secret: string }) => ({ apiKey: key.secret, configuration: { baseURL: proxy.baseURL }, maxRetries: 0 });

    it('invoke and stream on chat completions, and invoke with useResponsesApi', async () => {
      const key = await funded();
      const chat = new ChatOpenAI({ model: CHAT, ...options(key) });
      const answer = await chat.invoke('Hello');
      expect(answer.content).toBe(ANSWER);
      let text = '';
      let streamedTokens = 0;
      for await (const chunk of await chat.stream('Hello')) {
        text += String(chunk.content);
        streamedTokens += chunk.usage_metadata?.total_tokens ?? 0;
      }
      expect(text).toBe(ANSWER);
      const responses = new ChatOpenAI({ model: CHAT, useResponsesApi: true, ...options(key) });
      const viaResponses = await responses.invoke('Hello');
      expect(viaResponses.text).toBe(ANSWER);
      const tokens = [answer, viaResponses].map((m) => m.usage_metadata!.total_tokens);
      expect(streamedTokens).toBe(tokens[0]);
      expect(await spent(key)).toBe(tokens[0] + streamedTokens + tokens[1]);
    });

    it('OpenAIEmbeddings: documents and a query, 768 floats each', async () => {
      const key = await funded();
      const embeddings = new OpenAIEmbeddings({ model: EMBED, ...options(key) });
      const docs = await embeddings.embedDocuments(['first document', 'second document']);
      const query = await embeddings.embedQuery('a question');
      expect(docs.map((d) => d.length)).toEqual([768, 768]);
      expect(query).toHaveLength(768);
      expect(query.every((x) => Number.isFinite(x) && Math.abs(x) <= 1)).toBe(true);
      // Two documents of two tokens and a query of two: what the ledger holds.
      const ledger = await store.usage({ keyId: key.id, limit: 10 });
      expect(ledger.map((r) => r.promptTokens)).toEqual([4, 2]);
      expect(await spent(key)).toBe(6);
    });
  });
});
