/**
 * The stand-in's chat completions and legacy completions, as vLLM writes them: JSON (`chat.completion`,
 * `text_completion`) or SSE chunks ending in `[DONE]`, with a `choices: []` usage chunk when the client asks for one.
 * Each answer is `n` numbered words (` word0 word1 …`), counted as `n` completion tokens.
 */

const CREATED = 1700000000;

export type TextEndpoint = 'chat' | 'completions';

export interface TextAnswer {
  endpoint: TextEndpoint;
  model: string;
  /** Words generated (the completion tokens). */
  words: number;
  promptTokens: number;
}

const usageOf = (a: TextAnswer) => ({
  prompt_tokens: a.promptTokens,
  total_tokens: a.promptTokens + a.words,
  completion_tokens: a.words,
  prompt_tokens_details: null,
});

const head = (a: TextAnswer, streamed: boolean) =>
  a.endpoint === 'chat'
    ? { id: 'chatcmpl-standin', object: streamed ? 'chat.completion.chunk' : 'chat.completion', created: CREATED, model: a.model }
    : { id: 'cmpl-standin', object: 'text_completion', created: CREATED, model: a.model };

const wordsOf = (n: number) => Array.from({ length: n }, (_, i) => ` word${i}`);
/** Stop at max_tokens reads as `length`, as a model cut short reports it. */
const finish = (a: TextAnswer, limit: number | undefined) => (limit !== undefined && a.words >= limit ? 'length' : 'stop');

/** The JSON answer. */
export function textJson(a: TextAnswer, limit?: number): string {
  const text = wordsOf(a.words).join('');
  const finish_reason = finish(a, limit);
  const choice =
    a.endpoint === 'chat'
      ? { index: 0, message: { role: 'assistant', content: text, tool_calls: [] }, logprobs: null, finish_reason, stop_reason: null }
      : { index: 0, text, logprobs: null, finish_reason, stop_reason: null };
  return JSON.stringify({ ...head(a, false), choices: [choice], usage: usageOf(a) });
}

/** Every SSE event of the streamed answer, built once per answer and reused: the mock must cost next to nothing. */
const streams = new Map<string, string[]>();
export function textStream(a: TextAnswer, includeUsage: boolean, limit?: number): string[] {
  const key = `${a.endpoint}\n${a.model}\n${a.words}\n${a.promptTokens}\n${includeUsage}\n${limit}`;
  let events = streams.get(key);
  if (events) return events;
  const h = head(a, true);
  // vLLM writes `usage: null` on each chunk of a stream that asked for usage.
  const chunk = (choices: unknown[], usage?: unknown) =>
    `data: ${JSON.stringify({ ...h, choices, ...(includeUsage ? { usage: usage ?? null } : {}) })}\n\n`;
  const piece = (text: string, finish_reason: string | null) =>
    a.endpoint === 'chat'
      ? {
          index: 0,
          delta: text === '' && finish_reason === null ? { role: 'assistant', content: '' } : finish_reason ? {} : { content: text },
          logprobs: null,
          finish_reason,
        }
      : { index: 0, text, logprobs: null, finish_reason, stop_reason: null };
  events = a.endpoint === 'chat' ? [chunk([piece('', null)])] : [];
  for (const word of wordsOf(a.words)) events.push(chunk([piece(word, null)]));
  events.push(chunk([piece('', finish(a, limit))]));
  if (includeUsage) events.push(chunk([], usageOf(a)));
  events.push('data: [DONE]\n\n');
  if (streams.size > 1024) streams.clear();
  streams.set(key, events);
  return events;
}
