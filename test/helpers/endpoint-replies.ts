/**
 * The test upstream's answers on the other endpoints, as vLLM writes them: /completions (its `choices: []` usage chunk
 * when asked), /embeddings (floats or base64, in vLLM's key order or OpenAI's, written in small pieces), /responses
 * (a JSON response, or its typed event stream without [DONE]), and the stored responses' GET/DELETE/input_items.
 */
import type { ServerResponse } from 'node:http';
import { words, type Behaviour, type UpstreamCall } from './upstream';

/** Prompt tokens the test upstream reports per prompt or input (token arrays: their length). */
export const TOKENS_PER_TEXT = 4;

const tokensOf = (item: unknown): number => (Array.isArray(item) ? item.length : TOKENS_PER_TEXT);
const batch = (v: unknown): unknown[] =>
  typeof v === 'string' ? [v] : Array.isArray(v) && typeof v[0] === 'number' ? [v] : (v as unknown[]);

function sse(res: ServerResponse): (line: string) => void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  return (line) => res.write(line);
}

function json(res: ServerResponse, body: unknown, status = 200): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * /v1/completions like vLLM: `best_of` generated per prompt (and counted), `n` returned. `promptTokens` and
 * `usageExtra` replace the usage's prompt count and add to it (`prompt_tokens_details`, …).
 */
export function completionsReply(
  options: { tokens?: string[]; usage?: boolean; promptTokens?: number; usageExtra?: Record<string, unknown> } = {},
): Behaviour {
  return (call, _req, res) => {
    const b = call.body;
    const tokens = (options.tokens ?? words(5)).slice(0, b.max_tokens ?? 16);
    const prompts = batch(b.prompt);
    const n = b.n ?? 1;
    const generated = prompts.length * Math.max(n, b.best_of ?? 1);
    const usage = {
      prompt_tokens: options.promptTokens ?? prompts.reduce((s: number, p) => s + tokensOf(p), 0),
      total_tokens: 0,
      completion_tokens: generated * tokens.length,
      ...options.usageExtra,
    };
    usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
    const head = { id: 'cmpl-test', object: 'text_completion', created: 1700000000, model: b.model };
    const indexes = Array.from({ length: prompts.length * n }, (_, i) => i);
    if (!b.stream) {
      const text = (b.echo ? String(prompts[0]) : '') + tokens.join('');
      const choices = indexes.map((index) => ({ index, text, logprobs: null, finish_reason: 'length', stop_reason: null }));
      return json(res, { ...head, choices, ...(options.usage === false ? {} : { usage }) });
    }
    const write = sse(res);
    const withUsage = b.stream_options?.include_usage === true && options.usage !== false;
    for (const t of tokens) {
      for (const index of indexes) {
        const choice = { index, text: t, logprobs: null, finish_reason: null, stop_reason: null };
        write(`data: ${JSON.stringify({ ...head, choices: [choice], ...(withUsage ? { usage: null } : {}) })}\n\n`);
      }
    }
    if (withUsage) write(`data: ${JSON.stringify({ ...head, choices: [], usage })}\n\n`);
    write('data: [DONE]\n\n');
    res.end();
  };
}

/** /v1/embeddings like vLLM (or in OpenAI's key order: model and usage after data), written in `pieceSize` pieces. */
export function embeddingsReply(
  options: { order?: 'vllm' | 'openai'; dimensions?: number; pieceSize?: number; usage?: boolean } = {},
): Behaviour {
  return async (call, _req, res) => {
    const b = call.body;
    const inputs = batch(b.input);
    const dims = b.dimensions ?? options.dimensions ?? 8;
    const data = inputs.map((_, index) => {
      const floats = Array.from({ length: dims }, (_, i) => Math.round(Math.sin(index + i) * 1e6) / 1e6);
      const embedding = b.encoding_format === 'base64' ? Buffer.from(new Float32Array(floats).buffer).toString('base64') : floats;
      return { index, object: 'embedding', embedding };
    });
    const prompt = inputs.reduce((s: number, p) => s + tokensOf(p), 0);
    const usage =
      options.usage === false
        ? undefined
        : { prompt_tokens: prompt, total_tokens: prompt, completion_tokens: 0, prompt_tokens_details: null };
    const body =
      options.order === 'openai'
        ? { object: 'list', data, model: b.model, usage }
        : { id: 'embd-test', object: 'list', created: 1700000000, model: b.model, data, usage };
    const text = JSON.stringify(body);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    const piece = options.pieceSize ?? text.length;
    for (let i = 0; i < text.length; i += piece) {
      res.write(text.slice(i, i + piece));
      await new Promise((r) => setImmediate(r));
    }
    res.end();
  };
}

/** What the upstream stored of the responses it made: by id, with the input it was given. */
export const storedResponses = new Map<string, { response: Record<string, unknown>; input: unknown }>();
let responseCount = 0;

function responseObject(call: UpstreamCall, id: string, text: string, status: string, usage: object | null, outputDone: boolean) {
  const b = call.body;
  const message = {
    id: `msg_${id}`,
    type: 'message',
    role: 'assistant',
    status: outputDone ? 'completed' : 'in_progress',
    content: outputDone ? [{ type: 'output_text', text, annotations: [], logprobs: [] }] : [],
  };
  return {
    id,
    object: 'response',
    created_at: 1700000000,
    model: b.model,
    status,
    background: false,
    error: null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: b.instructions ?? null,
    max_output_tokens: b.max_output_tokens ?? null,
    metadata: {},
    output: outputDone ? [message] : [],
    parallel_tool_calls: true,
    previous_response_id: b.previous_response_id ?? null,
    reasoning: null,
    service_tier: 'auto',
    temperature: b.temperature ?? 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    truncation: 'disabled',
    usage,
    user: null,
  };
}

/**
 * /v1/responses like vLLM: a JSON response, or `event:`/`data:` pairs ending at response.completed (or .incomplete).
 * `cachedTokens` and `reasoningTokens` go in the usage's details (0 unless given).
 */
export function responsesReply(
  options: { tokens?: string[]; usage?: boolean; inputTokens?: number; cachedTokens?: number; reasoningTokens?: number } = {},
): Behaviour {
  return (call, _req, res) => {
    const b = call.body;
    const all = options.tokens ?? words(5);
    const tokens = all.slice(0, b.max_output_tokens ?? Infinity);
    const status = tokens.length < all.length ? 'incomplete' : 'completed';
    const id = `resp_test${++responseCount}`;
    const inputTokens = options.inputTokens ?? 9 + (b.previous_response_id ? 20 : 0);
    const usage =
      options.usage === false
        ? null
        : {
            input_tokens: inputTokens,
            input_tokens_details: { cached_tokens: options.cachedTokens ?? 0 },
            output_tokens: tokens.length,
            output_tokens_details: { reasoning_tokens: options.reasoningTokens ?? 0 },
            total_tokens: inputTokens + tokens.length,
          };
    const text = tokens.join('');
    const final = responseObject(call, id, text, status, usage, true);
    storedResponses.set(id, { response: final, input: b.input });
    if (!b.stream) return json(res, final);
    const write = sse(res);
    let seq = 0;
    const event = (type: string, fields: object) =>
      write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...fields })}\n\n`);
    const item = { item_id: `msg_${id}`, output_index: 0 };
    event('response.created', { response: responseObject(call, id, '', 'in_progress', null, false) });
    event('response.in_progress', { response: responseObject(call, id, '', 'in_progress', null, false) });
    event('response.output_item.added', {
      output_index: 0,
      item: { id: `msg_${id}`, type: 'message', role: 'assistant', status: 'in_progress', content: [] },
    });
    event('response.content_part.added', { ...item, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
    for (const t of tokens) event('response.output_text.delta', { ...item, content_index: 0, delta: t, logprobs: [] });
    event('response.output_text.done', { ...item, content_index: 0, text, logprobs: [] });
    event('response.content_part.done', { ...item, content_index: 0, part: { type: 'output_text', text, annotations: [] } });
    event('response.output_item.done', { output_index: 0, item: (final.output as object[])[0] });
    event(`response.${status}`, { response: final });
    res.end();
  };
}

/** GET/DELETE /v1/responses/{id} and GET /v1/responses/{id}/input_items, from what `responsesReply` stored. */
export const storedResponseReply: Behaviour = (call, req, res) => {
  const m = /^\/v1\/responses\/([^/?]+)(\/input_items)?/.exec(call.path);
  const stored = m ? storedResponses.get(m[1]) : undefined;
  if (!m || !stored)
    return json(res, { error: { message: 'Response not found', type: 'invalid_request_error', param: null, code: null } }, 404);
  if (req.method === 'DELETE') {
    storedResponses.delete(m[1]);
    return json(res, { id: m[1], object: 'response', deleted: true });
  }
  if (m[2]) {
    const input =
      typeof stored.input === 'string'
        ? [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: stored.input }] }]
        : stored.input;
    return json(res, { object: 'list', data: input, first_id: null, last_id: null, has_more: false });
  }
  json(res, stored.response);
};
