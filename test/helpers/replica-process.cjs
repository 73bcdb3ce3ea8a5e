/**
 * A model server replica as its own process, so a test can SIGKILL it: answers chat completions as vLLM does, JSON
 * (after `REPLICA_DELAY_MS`) or SSE (one token every `REPLICA_DELAY_MS / 5`), usage prompt 9 and one per token.
 * Listens on `PORT` (0: any) and prints `listening <port>`.
 */
'use strict';
const { createServer } = require('node:http');

const delay = Number(process.env.REPLICA_DELAY_MS || '50');
const tokens = ['w0 ', 'w1 ', 'w2 ', 'w3 ', 'w4 '];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const chunk = (model, delta, finish) =>
  JSON.stringify({
    id: 'chatcmpl-r',
    object: 'chat.completion.chunk',
    created: 1700000000,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });

const server = createServer((req, res) => {
  if (req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'application/json' });
    return res.end('{}');
  }
  const parts = [];
  req.on('data', (c) => parts.push(c));
  req.on('end', async () => {
    const body = JSON.parse(Buffer.concat(parts).toString('utf8'));
    const usage = { prompt_tokens: 9, completion_tokens: tokens.length, total_tokens: 9 + tokens.length };
    if (!body.stream) {
      await sleep(delay);
      const text = JSON.stringify({
        id: 'chatcmpl-r',
        object: 'chat.completion',
        created: 1700000000,
        model: body.model,
        choices: [{ index: 0, message: { role: 'assistant', content: tokens.join('') }, finish_reason: 'stop' }],
        usage,
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      return res.end(text);
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const write = (data) => res.write(`data: ${data}\n\n`);
    write(chunk(body.model, { role: 'assistant', content: '' }, null));
    for (const t of tokens) {
      await sleep(delay / 5);
      write(chunk(body.model, { content: t }, null));
    }
    write(chunk(body.model, {}, 'stop'));
    if (body.stream_options && body.stream_options.include_usage) {
      write(
        JSON.stringify({ id: 'chatcmpl-r', object: 'chat.completion.chunk', created: 1700000000, model: body.model, choices: [], usage }),
      );
    }
    write('[DONE]');
    res.end();
  });
});
server.listen(Number(process.env.PORT || '0'), '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
