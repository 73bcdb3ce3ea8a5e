/**
 * A test upstream's /v1/responses and /v1/chat/completions as OpenAI answers them with hosted tools: `web_search_call`,
 * `file_search_call`, `code_interpreter_call` output items (as many as asked, never more than `max_tool_calls`), a
 * message citing its sources, and in a stream each call's `response.output_item.added`/`.done` events before the text.
 */
import type { Behaviour } from './upstream';

let answers = 0;

/** The item each call of a hosted tool appears as, with the fields OpenAI gives it. */
function callItem(kind: string, n: number, request: Record<string, any>): Record<string, unknown> {
  const id = `${kind.slice(0, 2)}_${answers}_${n}`;
  if (kind === 'file_search_call') return { id, type: kind, status: 'completed', queries: ['tokenmeter'], results: null };
  if (kind === 'code_interpreter_call') {
    const container = request.tools?.find((t: any) => t.type === 'code_interpreter')?.container;
    return {
      id,
      type: kind,
      status: 'completed',
      code: 'print(1)',
      container_id: typeof container === 'string' ? container : 'cntr_auto',
      outputs: null,
    };
  }
  return { id, type: kind, status: 'completed', action: { type: 'search', query: 'tokenmeter' } };
}

/**
 * Answers with `calls` (output item types) before its message, cut to the request's `max_tool_calls`; usage 100 in and
 * 10 out. `usage: false` leaves usage out.
 */
export function hostedToolReply(calls: string[], options: { usage?: boolean } = {}): Behaviour {
  return (call, _req, res) => {
    const b = call.body;
    const id = `resp_tools${++answers}`;
    const made = calls.slice(0, b.max_tool_calls ?? calls.length).map((kind, n) => callItem(kind, n, b));
    const text = 'Found it.';
    const annotations = [{ type: 'url_citation', start_index: 0, end_index: 5, url: 'https://example.com/', title: 'Example' }];
    const message = {
      id: `msg_${id}`,
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text, annotations, logprobs: [] }],
    };
    const usage = options.usage === false ? null : { input_tokens: 100, output_tokens: 10, total_tokens: 110 };
    const response = (status: string, output: object[], u: object | null) => ({
      id,
      object: 'response',
      created_at: 1700000000,
      model: b.model,
      status,
      output,
      max_tool_calls: b.max_tool_calls ?? null,
      store: b.store !== false,
      tools: b.tools ?? [],
      usage: u,
    });
    const final = response('completed', [...made, message], usage);
    const body = (data: object) => JSON.stringify(data);
    if (!b.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(body(final));
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    let seq = 0;
    const event = (type: string, fields: object) =>
      res.write(`event: ${type}\ndata: ${body({ type, sequence_number: seq++, ...fields })}\n\n`);
    event('response.created', { response: response('in_progress', [], null) });
    made.forEach((item, i) => {
      event('response.output_item.added', { output_index: i, item: { ...item, status: 'in_progress' } });
      const kind = String(item.type).replace(/_call$/, '');
      event(`response.${kind}_call.in_progress`, { output_index: i, item_id: item.id });
      event(`response.${kind}_call.completed`, { output_index: i, item_id: item.id });
      event('response.output_item.done', { output_index: i, item });
    });
    const at = { item_id: message.id, output_index: made.length, content_index: 0 };
    event('response.output_item.added', { output_index: made.length, item: { ...message, status: 'in_progress', content: [] } });
    event('response.output_text.delta', { ...at, delta: text, logprobs: [] });
    event('response.output_text.annotation.added', { ...at, annotation_index: 0, annotation: annotations[0] });
    event('response.output_text.done', { ...at, text, logprobs: [] });
    event('response.output_item.done', { output_index: made.length, item: message });
    event('response.completed', { response: final });
    res.end();
  };
}

/** A search model's chat answer (`web_search_options`): its message cites a source in `annotations`. */
export const searchChatReply: Behaviour = (call, _req, res) => {
  const annotations = [
    { type: 'url_citation', url_citation: { start_index: 0, end_index: 5, url: 'https://example.com/', title: 'Example' } },
  ];
  const answer = {
    id: 'chatcmpl-search',
    object: 'chat.completion',
    created: 1700000000,
    model: call.body.model,
    choices: [{ index: 0, message: { role: 'assistant', content: 'Found it.', annotations }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
  };
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(answer));
};
