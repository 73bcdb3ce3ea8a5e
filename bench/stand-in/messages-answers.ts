/**
 * The stand-in's Anthropic Messages API and rerank/score, as vLLM writes them: a `message` JSON answer, or a stream of
 * message_start (the prompt's usage), one text block of numbered words, message_delta (cumulative usage) and
 * message_stop; count_tokens' `{input_tokens}`; rerank's results with `usage.total_tokens`, score's data with
 * `usage.prompt_tokens`.
 */

export interface MessagesAnswer {
  model: string;
  words: number;
  promptTokens: number;
  /** max_tokens cut the answer short. */
  cut: boolean;
}

const wordsOf = (n: number) => Array.from({ length: n }, (_, i) => ` word${i}`);
const event = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

export function messagesJson(a: MessagesAnswer): string {
  return JSON.stringify({
    id: 'msg_standin',
    type: 'message',
    role: 'assistant',
    model: a.model,
    content: [{ type: 'text', text: wordsOf(a.words).join('') }],
    stop_reason: a.cut ? 'max_tokens' : 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: a.promptTokens, output_tokens: a.words },
  });
}

export function messagesStream(a: MessagesAnswer): string[] {
  const message = {
    id: 'msg_standin',
    type: 'message',
    role: 'assistant',
    content: [],
    model: a.model,
    stop_reason: null,
    stop_sequence: null,
  };
  const events = [
    event('message_start', { message: { ...message, usage: { input_tokens: a.promptTokens, output_tokens: 0 } } }),
    event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
  ];
  for (const word of wordsOf(a.words)) events.push(event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: word } }));
  events.push(
    event('content_block_stop', { index: 0 }),
    event('message_delta', {
      delta: { stop_reason: a.cut ? 'max_tokens' : 'end_turn', stop_sequence: null },
      usage: { input_tokens: a.promptTokens, output_tokens: a.words },
    }),
    event('message_stop', {}),
  );
  return events;
}

export const countTokensJson = (promptTokens: number) => JSON.stringify({ input_tokens: promptTokens });

/** Rerank's answer: every document scored, best first (`top_n` of them), with `usage.total_tokens` alone as vLLM's. */
export function rerankJson(model: string, documents: unknown[], topN: unknown, promptTokens: number): string {
  const results = documents.map((document, index) => ({
    index,
    document: { text: typeof document === 'string' ? document : (document as { text?: unknown })?.text },
    relevance_score: 1 / (index + 1),
  }));
  const n = typeof topN === 'number' && topN > 0 ? topN : results.length;
  return JSON.stringify({ id: 'rerank-standin', model, usage: { total_tokens: promptTokens }, results: results.slice(0, n) });
}

/** Score's answer: one score per pair. */
export function scoreJson(model: string, pairs: number, promptTokens: number): string {
  const data = Array.from({ length: pairs }, (_, index) => ({ index, object: 'score', score: 1 / (index + 1) }));
  return JSON.stringify({
    id: 'score-standin',
    object: 'list',
    created: 1700000000,
    model,
    data,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  });
}
