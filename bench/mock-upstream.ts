/**
 * The stand-in model server, run as its own process: the quick start's upstream (`npm run mock-upstream`, on :8000)
 * and the benchmark's. It speaks each endpoint as vLLM and OpenAI do (see stand-in/): chat completions and Responses
 * as JSON or as a stream, as asked; `text_completion` for /v1/completions; embeddings as floats or base64 with the
 * requested dimensions; Anthropic's /v1/messages (JSON, stream, count_tokens) and rerank/score as vLLM does. Answers
 * are numbered words; usage counts the actual prompt. Cheap by design: the bench measures the proxy in front of it.
 * `GET /health` and `GET /v1/models` answer as vLLM's do (a pool's health checks ask them): the models are the
 * upstream names of the models file (MODELS_FILE, else config/models.yaml). Its port is MOCK_PORT, never PORT: PORT
 * is the proxy's, and one shell often sets both.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import { parse } from 'yaml';
import './gc-on-signal';
import { embeddingsJson } from './stand-in/embeddings-answer';
import { batchOf, promptTokens } from './stand-in/prompt-usage';
import { countTokensJson, messagesJson, messagesStream, rerankJson, scoreJson } from './stand-in/messages-answers';
import { responsesJson, responsesStream } from './stand-in/responses-answers';
import { textJson, textStream } from './stand-in/text-answers';
import { EMBED_DIMENSIONS } from './workload';

/** Content chunks per stream (and words per JSON answer) when the request names no `max_tokens`. */
const DEFAULT_CHUNKS = 50;
/** Most words in one answer, however large max_tokens is (MOCK_MAX_WORDS; the quick start keeps answers short). */
const MAX_WORDS = Number(process.env.MOCK_MAX_WORDS ?? 10_000);
/** Where it listens (MOCK_PORT; 0: any free port, printed on the ready line). */
const LISTEN_PORT = Number(process.env.MOCK_PORT ?? 8000);
/** Most dimensions an embeddings request may ask for (text-embedding-3-large's 3072, with room). */
const MAX_DIMENSIONS = 8192;

type Body = Record<string, unknown>;

/** vLLM's /v1/models body: the upstream model names of the models file the proxy beside it reads. */
function modelsList(): string {
  const file = process.env.MODELS_FILE ?? join(__dirname, '..', 'config', 'models.yaml');
  const models = (parse(readFileSync(file, 'utf8')) as { models?: { id: string; upstream_model?: string }[] }).models ?? [];
  const ids = [...new Set(models.map((m) => m.upstream_model ?? m.id))];
  const created = Math.floor(Date.now() / 1000);
  return JSON.stringify({
    object: 'list',
    data: ids.map((id) => ({ id, object: 'model', created, owned_by: 'vllm', root: id, parent: null })),
  });
}
const MODELS_JSON = modelsList();

/** Without a delay every event is written in one corked batch; with one (the bench's pacing header), an event per `delayMs`. */
function sendStream(res: ServerResponse, events: string[], delayMs: number): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  if (!(delayMs > 0)) {
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

function sendJson(res: ServerResponse, text: string, status = 200): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
}

function sendError(res: ServerResponse, status: number, message: string, param: string | null = null): void {
  const type = status === 404 ? 'NotFoundError' : 'BadRequestError';
  sendJson(res, JSON.stringify({ error: { message, type, param, code: status } }), status);
}

/** Words to answer with: the request's limit (`limitField`), else DEFAULT_CHUNKS, never past MAX_WORDS. */
function wordCount(limit: unknown): number {
  const asked = typeof limit === 'number' && limit > 0 ? limit : DEFAULT_CHUNKS;
  return Math.min(asked, MAX_WORDS);
}

const limitOf = (v: unknown) => (typeof v === 'number' && v > 0 ? v : undefined);

function answer(path: string, raw: string, body: Body, res: ServerResponse, delayMs: number): void {
  const model = typeof body.model === 'string' ? body.model : 'unknown';
  const prompt = () => promptTokens(path, raw, body);
  const stream = body.stream === true;
  if (path === '/v1/chat/completions' || path === '/v1/completions') {
    const limit = limitOf(path === '/v1/completions' ? body.max_tokens : (body.max_completion_tokens ?? body.max_tokens));
    const a = {
      endpoint: path === '/v1/completions' ? 'completions' : 'chat',
      model,
      words: wordCount(limit),
      promptTokens: prompt(),
    } as const;
    if (!stream) return sendJson(res, textJson(a, limit));
    const includeUsage = (body.stream_options as { include_usage?: unknown } | null | undefined)?.include_usage === true;
    return sendStream(res, textStream(a, includeUsage, limit), delayMs);
  }
  if (path === '/v1/responses') {
    const a = { model, words: wordCount(limitOf(body.max_output_tokens)), promptTokens: prompt(), request: body };
    return stream ? sendStream(res, responsesStream(a, `${a.words}\n${a.promptTokens}\n${raw}`), delayMs) : sendJson(res, responsesJson(a));
  }
  if (path === '/v1/messages/count_tokens') return sendJson(res, countTokensJson(prompt()));
  if (path === '/v1/messages') {
    const limit = limitOf(body.max_tokens);
    const words = wordCount(limit);
    const a = { model, words, promptTokens: prompt(), cut: limit !== undefined && words >= limit };
    return stream ? sendStream(res, messagesStream(a), delayMs) : sendJson(res, messagesJson(a));
  }
  if (path === '/v1/rerank' || path === '/rerank' || path === '/v2/rerank') {
    if (!Array.isArray(body.documents)) return sendError(res, 400, 'documents must be an array', 'documents');
    return sendJson(res, rerankJson(model, body.documents, body.top_n, prompt()));
  }
  if (path === '/v1/score' || path === '/score') {
    const pairs = Array.isArray(body.text_2) ? body.text_2.length : 1;
    return sendJson(res, scoreJson(model, pairs, prompt()));
  }
  if (path === '/v1/embeddings') {
    const dimensions = body.dimensions ?? EMBED_DIMENSIONS;
    if (typeof dimensions !== 'number' || !Number.isInteger(dimensions) || dimensions < 1 || dimensions > MAX_DIMENSIONS)
      return sendError(res, 400, `dimensions must be a whole number from 1 to ${MAX_DIMENSIONS}`, 'dimensions');
    const format = body.encoding_format ?? 'float';
    if (format !== 'float' && format !== 'base64')
      return sendError(res, 400, 'encoding_format must be "float" or "base64"', 'encoding_format');
    const a = { model, inputs: batchOf(body.input).length, dimensions, base64: format === 'base64', promptTokens: prompt() };
    return sendJson(res, embeddingsJson(a));
  }
  sendError(res, 404, `no route ${path}`);
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
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET' && path === '/health') return void res.writeHead(200).end();
    if (req.method === 'GET' && path === '/v1/models') return sendJson(res, MODELS_JSON);
    if (req.method !== 'POST') return sendError(res, 404, `no route ${req.method} ${path}`);
    const raw = Buffer.concat(parts).toString('utf8');
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      return sendError(res, 400, 'the body is not valid JSON');
    }
    if (!body || typeof body !== 'object' || Array.isArray(body)) return sendError(res, 400, 'the body must be a JSON object');
    answer(path, raw, body as Body, res, Number(req.headers['x-mock-chunk-delay-ms'] ?? 0));
  });
});
server.keepAliveTimeout = 65_000;
server.listen(LISTEN_PORT, '127.0.0.1', () => {
  const address = server.address();
  console.log(JSON.stringify({ ready: true, port: typeof address === 'object' && address ? address.port : 0 }));
});
