/** A chat-only upstream that answers with one tool call, as vLLM does (JSON, or SSE with a line split across writes). */
import type { Behaviour } from './upstream';

/** A vLLM-shaped chat answer calling one tool (JSON, or SSE with its arguments in two pieces). */
export const toolReply: Behaviour = (call, _req, res) => {
  const head = { id: 'chatcmpl-t', created: 1700000000, model: call.body.model };
  const usage = { prompt_tokens: 20, completion_tokens: 7, total_tokens: 27 };
  const fn = (args: string, name?: string) => ({
    index: 0,
    ...(name ? { id: 'call_1', type: 'function' } : {}),
    function: { ...(name ? { name } : {}), arguments: args },
  });
  if (!call.body.stream) {
    const message = {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } }],
    };
    res.writeHead(200, { 'content-type': 'application/json' });
    return void res.end(
      JSON.stringify({ ...head, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: 'tool_calls' }], usage }),
    );
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (delta: object, finish: string | null = null) =>
    `data: ${JSON.stringify({ ...head, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  res.write(chunk({ role: 'assistant', content: 'Let me look.' }));
  res.write(chunk({ tool_calls: [fn('', 'get_weather')] }));
  // A chunk split mid-line: the translation holds the partial line, nothing else.
  const split = chunk({ tool_calls: [fn('{"city":')] }) + chunk({ tool_calls: [fn(' "Paris"}')] });
  res.write(split.slice(0, 40));
  res.write(split.slice(40));
  res.write(chunk({}, 'tool_calls'));
  res.write(`data: ${JSON.stringify({ ...head, choices: [], usage })}\n\ndata: [DONE]\n\n`);
  res.end();
};
