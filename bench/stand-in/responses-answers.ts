/**
 * The stand-in's Responses API: a `response` object as JSON, or its typed event stream (`event:`/`data:` pairs with a
 * `sequence_number`, no [DONE]) with every event the openai SDK's `responses.stream()` and the AI SDK read: created,
 * in_progress, output_item.added, content_part.added, output_text.delta…, output_text.done, content_part.done,
 * output_item.done, completed. Response ids are fresh per response: the proxy records which account owns each one.
 */
import { randomBytes } from 'node:crypto';

export interface ResponsesAnswer {
  model: string;
  words: number;
  promptTokens: number;
  /** The request's body: the response object repeats its settings (instructions, max_output_tokens…). */
  request: Record<string, unknown>;
}

const CREATED = 1700000000;

function responseObject(a: ResponsesAnswer, id: string, status: string, output: object[], usage: object | null) {
  const r = a.request;
  return {
    id,
    object: 'response',
    created_at: CREATED,
    status,
    background: false,
    error: null,
    incomplete_details: null,
    instructions: r.instructions ?? null,
    max_output_tokens: r.max_output_tokens ?? null,
    metadata: r.metadata ?? {},
    model: a.model,
    output,
    parallel_tool_calls: true,
    previous_response_id: r.previous_response_id ?? null,
    reasoning: { effort: null, summary: null },
    service_tier: 'auto',
    store: r.store ?? true,
    temperature: r.temperature ?? 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: r.top_p ?? 1,
    truncation: 'disabled',
    usage,
    user: null,
  };
}

const usageOf = (a: ResponsesAnswer) => ({
  input_tokens: a.promptTokens,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: a.words,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: a.promptTokens + a.words,
});

function parts(a: ResponsesAnswer) {
  const id = `resp_${randomBytes(12).toString('hex')}`;
  const itemId = `msg_${randomBytes(12).toString('hex')}`;
  const words = Array.from({ length: a.words }, (_, i) => ` word${i}`);
  const text = words.join('');
  const part = { type: 'output_text', text, annotations: [], logprobs: [] };
  const message = { id: itemId, type: 'message', status: 'completed', role: 'assistant', content: [part] };
  return { id, itemId, words, text, part, message };
}

/** The JSON answer to a request without `stream: true`. */
export function responsesJson(a: ResponsesAnswer): string {
  const { id, message } = parts(a);
  return JSON.stringify(responseObject(a, id, 'completed', [message], usageOf(a)));
}

/** A stand-in for the response id in the remembered events, the length of a real one. */
const PLACEHOLDER = `resp_${'0'.repeat(24)}`;
/** Streams built per request body (`key`): the bench sends one body thousands of times, and the mock must cost little. */
const streams = new Map<string, string[]>();

/** The events of a streamed answer, in order: remembered per `key`, with a fresh response id each time. */
export function responsesStream(a: ResponsesAnswer, key: string): string[] {
  let events = streams.get(key);
  if (!events) {
    if (streams.size >= 256) streams.clear();
    events = buildStream(a);
    streams.set(key, events);
  }
  const id = `resp_${randomBytes(12).toString('hex')}`;
  // Only the first two events and the last carry the response (and so its id).
  const last = events.length - 1;
  return events.map((e, i) => (i < 2 || i === last ? e.replace(PLACEHOLDER, id) : e));
}

function buildStream(a: ResponsesAnswer): string[] {
  const { itemId, words, text, part, message } = parts(a);
  const id = PLACEHOLDER;
  let sequence = 0;
  const event = (type: string, fields: object) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...fields })}\n\n`;
  const at = { item_id: itemId, output_index: 0, content_index: 0 };
  const started = responseObject(a, id, 'in_progress', [], null);
  const events = [
    event('response.created', { response: started }),
    event('response.in_progress', { response: started }),
    event('response.output_item.added', { output_index: 0, item: { ...message, status: 'in_progress', content: [] } }),
    event('response.content_part.added', { ...at, part: { ...part, text: '' } }),
  ];
  for (const delta of words) events.push(event('response.output_text.delta', { ...at, delta, logprobs: [] }));
  events.push(
    event('response.output_text.done', { ...at, text, logprobs: [] }),
    event('response.content_part.done', { ...at, part }),
    event('response.output_item.done', { output_index: 0, item: message }),
    event('response.completed', { response: responseObject(a, id, 'completed', [message], usageOf(a)) }),
  );
  return events;
}
