/**
 * Replies in vLLM's /v1/messages wire format (vllm/entrypoints/anthropic/): a JSON message, or a stream of
 * message_start (model and input usage), content_block_start/delta/stop per block (thinking with its signature_delta,
 * text, tool_use with input_json_delta), message_delta (cumulative usage) and message_stop; and count_tokens.
 * Each delta is one output token; the output stops at the request's max_tokens.
 */
import type { Behaviour, UpstreamCall } from './upstream';

export type Block =
  { type: 'thinking'; pieces: string[] } | { type: 'text'; pieces: string[] } | { type: 'tool_use'; name: string; pieces: string[] };

export interface MessagesReplyOptions {
  blocks?: Block[];
  /** input_tokens (the prompt less its cache reads and writes). Default 9. */
  inputTokens?: number;
  cacheWrite?: number;
  cacheRead?: number;
  /** `usage.server_tool_use`. */
  serverToolUse?: Record<string, number>;
  /** The model name answered with. Default: the one asked for. */
  answerAs?: string;
  /** Leave usage out of the stream's message_delta (and message_start's input), as a server that reports none. */
  noUsage?: boolean;
  /** message_delta without input_tokens, as Anthropic's older streams. */
  deltaOutputOnly?: boolean;
  /** Writes split at odd byte offsets, events across writes. */
  split?: boolean;
  /** Hold after this many delta events until the promise resolves. */
  holdAfter?: { deltas: number; until: Promise<void> };
}

export const TEXT: Block = { type: 'text', pieces: ['Hello', ' there', ', friend', '.'] };

/** The blocks cut at max_tokens: what the output holds, and its token count. */
function produced(blocks: Block[], max: number): { blocks: Block[]; tokens: number } {
  let left = max;
  const out: Block[] = [];
  for (const b of blocks) {
    if (left <= 0) break;
    const pieces = b.pieces.slice(0, left);
    left -= pieces.length;
    out.push({ ...b, pieces });
  }
  return { blocks: out, tokens: max - left };
}

function usageOf(o: MessagesReplyOptions, output: number): Record<string, unknown> {
  return {
    input_tokens: o.inputTokens ?? 9,
    output_tokens: output,
    ...(o.cacheWrite !== undefined ? { cache_creation_input_tokens: o.cacheWrite } : {}),
    ...(o.cacheRead !== undefined ? { cache_read_input_tokens: o.cacheRead } : {}),
    ...(o.serverToolUse ? { server_tool_use: o.serverToolUse } : {}),
  };
}

function contentOf(b: Block, i: number): Record<string, unknown> {
  const text = b.pieces.join('');
  if (b.type === 'thinking') return { type: 'thinking', thinking: text, signature: `sig${i}` };
  if (b.type === 'text') return { type: 'text', text };
  return { type: 'tool_use', id: `toolu_${i}`, name: b.name, input: JSON.parse(text || '{}') };
}

export function messagesReply(o: MessagesReplyOptions = {}): Behaviour {
  return async (call: UpstreamCall, _req, res) => {
    if (call.path.endsWith('/count_tokens')) {
      const body = JSON.stringify({ input_tokens: o.inputTokens ?? 9 });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      return void res.end(body);
    }
    const model = o.answerAs ?? call.body.model;
    const { blocks, tokens } = produced(o.blocks ?? [TEXT], call.body.max_tokens ?? Infinity);
    const cut = tokens < (o.blocks ?? [TEXT]).reduce((n, b) => n + b.pieces.length, 0);
    const stop = cut ? 'max_tokens' : blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
    if (!call.body.stream) {
      const body = JSON.stringify({
        id: 'msg_test',
        type: 'message',
        role: 'assistant',
        model,
        content: blocks.map(contentOf),
        stop_reason: stop,
        stop_sequence: null,
        ...(o.noUsage ? {} : { usage: usageOf(o, tokens) }),
      });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      return void res.end(body);
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const write = async (event: string, data: Record<string, unknown>) => {
      const text = `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
      if (!o.split) return void res.write(text);
      for (const at of [0, 7, Math.floor(text.length / 2)].filter((n, i, a) => a.indexOf(n) === i)) {
        const next = at === 0 ? 7 : at === 7 ? Math.floor(text.length / 2) : text.length;
        res.write(text.slice(at, Math.max(next, at)));
        await new Promise((r) => setImmediate(r));
      }
    };
    const start = { ...usageOf(o, 0) };
    await write('message_start', {
      type: 'message_start',
      message: {
        id: 'msg_test',
        type: 'message',
        role: 'assistant',
        content: [],
        model,
        stop_reason: null,
        stop_sequence: null,
        ...(o.noUsage ? {} : { usage: start }),
      },
    });
    await write('ping', { type: 'ping' });
    let deltas = 0;
    for (let i = 0; i < blocks.length; i++) {
      const b = blocks[i];
      const first =
        b.type === 'thinking'
          ? { type: 'thinking', thinking: '' }
          : b.type === 'text'
            ? { type: 'text', text: '' }
            : { type: 'tool_use', id: `toolu_${i}`, name: b.name, input: {} };
      await write('content_block_start', { type: 'content_block_start', index: i, content_block: first });
      for (const piece of b.pieces) {
        if (call.aborted) return;
        if (o.holdAfter && deltas++ === o.holdAfter.deltas) await o.holdAfter.until;
        if (call.aborted) return;
        const delta =
          b.type === 'thinking'
            ? { type: 'thinking_delta', thinking: piece }
            : b.type === 'text'
              ? { type: 'text_delta', text: piece }
              : { type: 'input_json_delta', partial_json: piece };
        await write('content_block_delta', { type: 'content_block_delta', index: i, delta });
      }
      if (b.type === 'thinking')
        await write('content_block_delta', {
          type: 'content_block_delta',
          index: i,
          delta: { type: 'signature_delta', signature: `sig${i}` },
        });
      await write('content_block_stop', { type: 'content_block_stop', index: i });
    }
    const usage = o.deltaOutputOnly ? { output_tokens: tokens } : usageOf(o, tokens);
    await write('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: stop, stop_sequence: null },
      ...(o.noUsage ? {} : { usage }),
    });
    await write('message_stop', { type: 'message_stop' });
    res.end();
  };
}

/** An Anthropic-shaped error answer (`status` 429, 529, …), with an error type. */
export function anthropicErrorReply(status: number, type: string): Behaviour {
  return (_call, _req, res) => {
    const body = JSON.stringify({ type: 'error', error: { type, message: `upstream ${type}` } });
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };
}
