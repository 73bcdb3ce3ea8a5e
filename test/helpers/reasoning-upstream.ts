/**
 * A test upstream's answer from a reasoning model, as current servers stream it: chat as vLLM writes it (`delta.reasoning`
 * with the older `reasoning_content` beside it, the same text), completions' `text`, and the Responses API's typed events
 * as OpenAI writes them (reasoning summary deltas, then the output text). The usage reports far more completion tokens
 * than the text shows (hidden reasoning), and comes `usageDelayMs` after the last content: the window a client that
 * hangs up at `finish_reason` or `response.output_text.done` aims for.
 */
import type { ServerResponse } from 'node:http';
import type { Behaviour, UpstreamCall } from './upstream';

export const REASONING_PIECES = ['Let me think. ', 'The user greets me; ', 'a short greeting back ', 'is the kind answer.'];
export const CONTENT_PIECES = ['Hello', ' there', ', friend!'];
/** What the usage reports: 5,000 hidden reasoning tokens among 5,050 completion tokens. */
export const REASONING_TOKENS = 5_000;
export const COMPLETION_TOKENS = 5_050;
export const PROMPT_TOKENS = 10;

export interface ReasoningOptions {
  /** Between two events (so that a client can leave between them). Default 2. */
  gapMs?: number;
  /** Between the last content event and the usage. Default 20. */
  usageDelayMs?: number;
  /** `never`: the stream ends without usage; `stall`: it sends nothing after its content, and never ends. */
  usage?: 'send' | 'never' | 'stall';
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Streams a reasoning model's answer on chat, completions or responses, by the call's path. */
export function reasoningReply(options: ReasoningOptions = {}): Behaviour {
  return async (call, _req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const events = call.path.startsWith('/v1/responses')
      ? responsesEvents(call)
      : call.path.startsWith('/v1/completions')
        ? completionsEvents(call)
        : chatEvents(call);
    await play(res, call, events, options);
  };
}

/** The events before the usage, and the usage's own (undefined when the client asked for none and gets none). */
interface Events {
  content: string[];
  usage: string[];
}

async function play(res: ServerResponse, call: UpstreamCall, events: Events, options: ReasoningOptions): Promise<void> {
  for (const event of events.content) {
    if (call.aborted) return;
    res.write(event);
    await sleep(options.gapMs ?? 2);
  }
  if (options.usage === 'stall') return new Promise<void>((resolve) => res.once('close', () => resolve()));
  await sleep(options.usageDelayMs ?? 20);
  if (call.aborted) return;
  if (options.usage !== 'never') for (const event of events.usage) res.write(event);
  res.end();
}

const data = (body: unknown) => `data: ${JSON.stringify(body)}\n\n`;

function chatEvents(call: UpstreamCall): Events {
  const head = { id: 'chatcmpl-r', object: 'chat.completion.chunk', created: 1700000000, model: call.body.model };
  const chunk = (delta: object, finish: string | null = null) =>
    data({ ...head, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
  const content = [
    chunk({ role: 'assistant', content: '' }),
    ...REASONING_PIECES.map((t) => chunk({ reasoning: t, reasoning_content: t })),
    ...CONTENT_PIECES.map((t) => chunk({ content: t })),
    chunk({}, 'stop'),
  ];
  const usage = {
    prompt_tokens: PROMPT_TOKENS,
    completion_tokens: COMPLETION_TOKENS,
    total_tokens: PROMPT_TOKENS + COMPLETION_TOKENS,
    completion_tokens_details: { reasoning_tokens: REASONING_TOKENS },
  };
  const asked = call.body.stream_options?.include_usage === true;
  return { content, usage: [...(asked ? [data({ ...head, choices: [], usage })] : []), 'data: [DONE]\n\n'] };
}

function completionsEvents(call: UpstreamCall): Events {
  const head = { id: 'cmpl-r', object: 'text_completion', created: 1700000000, model: call.body.model };
  const choice = (text: string, finish: string | null = null) =>
    data({ ...head, choices: [{ index: 0, text, logprobs: null, finish_reason: finish, stop_reason: null }] });
  const content = [...[...REASONING_PIECES, ...CONTENT_PIECES].map((t) => choice(t)), choice('', 'stop')];
  const usage = { prompt_tokens: PROMPT_TOKENS, completion_tokens: COMPLETION_TOKENS, total_tokens: PROMPT_TOKENS + COMPLETION_TOKENS };
  const asked = call.body.stream_options?.include_usage === true;
  return { content, usage: [...(asked ? [data({ ...head, choices: [], usage })] : []), 'data: [DONE]\n\n'] };
}

function responsesEvents(call: UpstreamCall): Events {
  let seq = 0;
  const event = (type: string, fields: object) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...fields })}\n\n`;
  const response = (status: string, usage: object | null, output: object[]) => ({
    id: 'resp_r',
    object: 'response',
    created_at: 1700000000,
    status,
    model: call.body.model,
    output,
    usage,
  });
  const summary = REASONING_PIECES.join('');
  const text = CONTENT_PIECES.join('');
  const reasoningItem = { id: 'rs_r', type: 'reasoning', summary: [{ type: 'summary_text', text: summary }] };
  const messageItem = {
    id: 'msg_r',
    type: 'message',
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text, annotations: [] }],
  };
  const r = { item_id: 'rs_r', output_index: 0, summary_index: 0 };
  const m = { item_id: 'msg_r', output_index: 1, content_index: 0 };
  const content = [
    event('response.created', { response: response('in_progress', null, []) }),
    event('response.in_progress', { response: response('in_progress', null, []) }),
    event('response.output_item.added', { output_index: 0, item: { id: 'rs_r', type: 'reasoning', summary: [] } }),
    event('response.reasoning_summary_part.added', { ...r, part: { type: 'summary_text', text: '' } }),
    ...REASONING_PIECES.map((delta) => event('response.reasoning_summary_text.delta', { ...r, delta })),
    event('response.reasoning_summary_text.done', { ...r, text: summary }),
    event('response.output_item.done', { output_index: 0, item: reasoningItem }),
    event('response.output_item.added', { output_index: 1, item: { ...messageItem, status: 'in_progress', content: [] } }),
    ...CONTENT_PIECES.map((delta) => event('response.output_text.delta', { ...m, delta, logprobs: [] })),
    event('response.output_text.done', { ...m, text, logprobs: [] }),
  ];
  const usage = {
    input_tokens: PROMPT_TOKENS,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: COMPLETION_TOKENS,
    output_tokens_details: { reasoning_tokens: REASONING_TOKENS },
    total_tokens: PROMPT_TOKENS + COMPLETION_TOKENS,
  };
  return {
    content,
    usage: [
      event('response.content_part.done', { ...m, part: messageItem.content[0] }),
      event('response.output_item.done', { output_index: 1, item: messageItem }),
      event('response.completed', { response: response('completed', usage, [reasoningItem, messageItem]) }),
    ],
  };
}
