/**
 * A fast OpenAI-compatible upstream, run as its own process: chat completions as JSON or as SSE, answering with
 * numbered words; embeddings (a vector of EMBED_DIMENSIONS floats per input) and Responses streams, as vLLM answers
 * them. The benchmark's model server, and the quick start's stand-in (`npm run mock-upstream`, on :8000).
 * Its port is MOCK_PORT, never PORT: PORT is the proxy's, and one shell often sets both.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import './gc-on-signal';
import { EMBED_DIMENSIONS } from './workload';

/** Content chunks per stream (and words per JSON answer) when the request names no `max_tokens`. */
const DEFAULT_CHUNKS = 50;
/** Most words in one answer, however large max_tokens is (MOCK_MAX_WORDS; the quick start keeps answers short). */
const MAX_WORDS = Number(process.env.MOCK_MAX_WORDS ?? 10_000);
/** Prompt tokens the mock reports; the proxy charges what the upstream reports. */
const PROMPT_TOKENS = 120;
/** Where it listens (MOCK_PORT; 0: any free port, printed on the ready line). */
const LISTEN_PORT = Number(process.env.MOCK_PORT ?? 8000);

interface MockRequest {
  model?: unknown;
  input?: unknown;
  max_output_tokens?: unknown;
  max_tokens?: unknown;
  stream?: unknown;
  stream_options?: { include_usage?: unknown } | null;
}

const chunk = (model: string, choices: unknown[], usage?: unknown) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1700000000, model, choices, ...(usage ? { usage } : {}) })}\n\n`;

/** Every SSE event of one stream, built once per (model, length, usage) and reused: the mock must cost next to nothing. */
const streams = new Map<string, string[]>();
function streamEvents(model: string, n: number, includeUsage: boolean): string[] {
  const key = `${model}\n${n}\n${includeUsage}`;
  let events = streams.get(key);
  if (!events) {
    events = [chunk(model, [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }])];
    for (let i = 0; i < n; i++) events.push(chunk(model, [{ index: 0, delta: { content: ` word${i}` }, finish_reason: null }]));
    events.push(chunk(model, [{ index: 0, delta: {}, finish_reason: 'stop' }]));
    const usage = { prompt_tokens: PROMPT_TOKENS, completion_tokens: n, total_tokens: PROMPT_TOKENS + n };
    if (includeUsage) events.push(chunk(model, [], usage));
    events.push('data: [DONE]\n\n');
    streams.set(key, events);
  }
  return events;
}

function completion(model: string, n: number): string {
  const content = Array.from({ length: n }, (_, i) => ` word${i}`).join('');
  return JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: 1700000000,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { prompt_tokens: PROMPT_TOKENS, completion_tokens: n, total_tokens: PROMPT_TOKENS + n },
  });
}

/** Without a delay every event is written in one corked batch; with one, an event per `delayMs` (a paced model). */
function sendStream(res: ServerResponse, events: string[], delayMs: number): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  if (delayMs <= 0) {
    res.cork();
    for (const e of events) res.write(e);
    res.uncork();
    res.end();
    return;
  }
  let i = 0;
  const timer = setInterval(() => {
    res.write(events[i++]);
    if (i === events.length) {
      clearInterval(timer);
      res.end();
    }
  }, delayMs);
  res.once('close', () => clearInterval(timer));
}

/** An embeddings answer for `count` inputs, in vLLM's key order, built once per (model, count). */
const embeddings = new Map<string, string>();
function embeddingsAnswer(model: string, count: number): string {
  const key = `${model}\n${count}`;
  let text = embeddings.get(key);
  if (!text) {
    const vector = Array.from({ length: EMBED_DIMENSIONS }, (_, i) => Math.round(Math.sin(i) * 1e6) / 1e6);
    const data = Array.from({ length: count }, (_, index) => ({ index, object: 'embedding', embedding: vector }));
    const usage = { prompt_tokens: count * 20, total_tokens: count * 20, completion_tokens: 0, prompt_tokens_details: null };
    text = JSON.stringify({ id: 'embd-bench', object: 'list', created: 1700000000, model, data, usage });
    embeddings.set(key, text);
  }
  return text;
}

/** Every event of one Responses stream (typed `event:` lines, no [DONE]), built once per (model, length). */
const responseStreams = new Map<string, string[]>();
function responseEvents(model: string, n: number): string[] {
  const key = `${model}\n${n}`;
  let events = responseStreams.get(key);
  if (!events) {
    let seq = 0;
    const event = (type: string, fields: object) =>
      `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...fields })}\n\n`;
    const response = (status: string, usage: object | null, output: object[]) => ({
      id: 'resp_bench',
      object: 'response',
      created_at: 1700000000,
      model,
      status,
      output,
      usage,
      tools: [],
      error: null,
    });
    const words = Array.from({ length: n }, (_, i) => ` word${i}`);
    const item = { item_id: 'msg_bench', output_index: 0, content_index: 0 };
    const message = {
      id: 'msg_bench',
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: words.join(''), annotations: [] }],
    };
    events = [event('response.created', { response: response('in_progress', null, []) })];
    events.push(event('response.output_item.added', { output_index: 0, item: { ...message, status: 'in_progress', content: [] } }));
    for (const delta of words) events.push(event('response.output_text.delta', { ...item, delta, logprobs: [] }));
    events.push(event('response.output_item.done', { output_index: 0, item: message }));
    const usage = { input_tokens: PROMPT_TOKENS, output_tokens: n, total_tokens: PROMPT_TOKENS + n };
    events.push(event('response.completed', { response: response('completed', usage, [message]) }));
    responseStreams.set(key, events);
  }
  return events;
}

let webhookStats = { events: 0, lastMs: 0 };

/** Counts the usage.settled events of one delivery (a CloudEvents batch holds several) without parsing it. */
function receiveWebhook(req: IncomingMessage, res: ServerResponse): void {
  const parts: Buffer[] = [];
  req.on('data', (c: Buffer) => parts.push(c));
  req.on('end', () => {
    const body = Buffer.concat(parts).toString('utf8');
    for (let i = body.indexOf('"specversion"'); i !== -1; i = body.indexOf('"specversion"', i + 1)) webhookStats.events += 1;
    webhookStats.lastMs = Date.now();
    res.writeHead(204).end();
  });
}

const server = createServer((req, res) => {
  // The bench's webhook receiver (BENCH_WEBHOOK_URL): takes each delivery at once, counting its events (a batch's
  // too); /webhook-stats tells the count and the last arrival (DELETE: and starts again from 0).
  if (req.url === '/webhook') return void receiveWebhook(req, res);
  if (req.url === '/webhook-stats') {
    const text = JSON.stringify(webhookStats);
    if (req.method === 'DELETE') webhookStats = { events: 0, lastMs: 0 };
    return void res.writeHead(200, { 'content-type': 'application/json' }).end(text);
  }
  const parts: Buffer[] = [];
  req.on('data', (c: Buffer) => parts.push(c));
  req.on('end', () => {
    let body: MockRequest;
    try {
      body = JSON.parse(Buffer.concat(parts).toString('utf8')) as MockRequest;
    } catch {
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":{"message":"bad json"}}');
      return;
    }
    const model = typeof body.model === 'string' ? body.model : 'unknown';
    if (req.url === '/v1/embeddings') {
      const text = embeddingsAnswer(model, Array.isArray(body.input) ? body.input.length : 1);
      return res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
    }
    if (req.url === '/v1/responses') {
      const words = typeof body.max_output_tokens === 'number' ? Math.min(body.max_output_tokens, MAX_WORDS) : DEFAULT_CHUNKS;
      return sendStream(res, responseEvents(model, words), Number(req.headers['x-mock-chunk-delay-ms'] ?? 0));
    }
    const n = typeof body.max_tokens === 'number' && body.max_tokens > 0 ? Math.min(body.max_tokens, MAX_WORDS) : DEFAULT_CHUNKS;
    if (body.stream === true) {
      const delayMs = Number(req.headers['x-mock-chunk-delay-ms'] ?? 0);
      return sendStream(res, streamEvents(model, n, body.stream_options?.include_usage === true), delayMs);
    }
    const text = completion(model, n);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
  });
});
server.keepAliveTimeout = 65_000;
server.listen(LISTEN_PORT, '127.0.0.1', () => {
  const address = server.address();
  console.log(JSON.stringify({ ready: true, port: typeof address === 'object' && address ? address.port : 0 }));
});
