/**
 * A /v1/messages request as a chat completions request, for a model whose upstream speaks only chat (`messages_via:
 * chat`). One pass over the messages and their blocks. What does not map is listed in docs/claude-style-clients.md.
 */
import type { MessagesRequest } from '../../requests/messages-request';

type Block = Record<string, unknown>;
type ChatMessage = Record<string, unknown>;

/** A block list's (or a string's) text, the text blocks joined by blank lines. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const texts: string[] = [];
  for (const b of content as Block[]) if (b?.type === 'text' && typeof b.text === 'string') texts.push(b.text);
  return texts.join('\n\n');
}

/** An image block as a chat image part: base64 as a data URL, a URL as it is. */
function imagePart(block: Block): Block | undefined {
  const source = block.source as Block | undefined;
  if (source?.type === 'base64')
    return { type: 'image_url', image_url: { url: `data:${String(source.media_type)};base64,${String(source.data)}` } };
  if (source?.type === 'url') return { type: 'image_url', image_url: { url: source.url } };
  return undefined;
}

/** A user turn: its tool results first (as tool messages, answering the assistant's calls), then its text and images. */
function userTurn(content: Block[], out: ChatMessage[]): void {
  const parts: Block[] = [];
  for (const block of content) {
    if (block.type === 'tool_result') {
      out.push({ role: 'tool', tool_call_id: block.tool_use_id, content: textOf(block.content) });
    } else if (block.type === 'text') parts.push({ type: 'text', text: block.text });
    else if (block.type === 'image') {
      const part = imagePart(block);
      if (part) parts.push(part);
    }
  }
  if (parts.length > 0) out.push({ role: 'user', content: parts });
}

/** An assistant turn: its text as content, its tool_use blocks as tool_calls (thinking is not sent back). */
function assistantTurn(content: Block[], out: ChatMessage[]): void {
  const texts: string[] = [];
  const calls: Block[] = [];
  for (const block of content) {
    if (block.type === 'text' && typeof block.text === 'string') texts.push(block.text);
    else if (block.type === 'tool_use') {
      calls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } });
    }
  }
  const message: ChatMessage = { role: 'assistant', content: texts.length > 0 ? texts.join('') : null };
  if (calls.length > 0) message.tool_calls = calls;
  out.push(message);
}

function chatMessages(request: MessagesRequest): ChatMessage[] {
  const out: ChatMessage[] = [];
  if (request.system !== undefined) out.push({ role: 'system', content: textOf(request.system) });
  for (const m of request.messages) {
    if (typeof m.content === 'string') out.push({ role: m.role, content: m.content });
    else if (m.role === 'user') userTurn(m.content, out);
    else assistantTurn(m.content, out);
  }
  return out;
}

function chatToolChoice(choice: NonNullable<MessagesRequest['tool_choice']>): unknown {
  switch (choice.type) {
    case 'any':
      return 'required';
    case 'tool':
      return { type: 'function', function: { name: (choice as Block).name } };
    default:
      return choice.type;
  }
}

/** The chat body (before the output cap is written): the upstream's model name, the stream asked to carry its usage. */
export function messagesToChat(request: MessagesRequest, upstreamModel: string): Record<string, unknown> {
  const body: Record<string, unknown> = { model: upstreamModel, messages: chatMessages(request), max_tokens: request.max_tokens };
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.top_p !== undefined) body.top_p = request.top_p;
  if (request.top_k !== undefined) body.top_k = request.top_k;
  if (request.stop_sequences !== undefined) body.stop = request.stop_sequences;
  if (request.tools) {
    body.tools = request.tools.map((t) => ({
      type: 'function',
      function: { name: t.name, description: (t as Block).description, parameters: (t as Block).input_schema },
    }));
  }
  if (request.tool_choice) {
    body.tool_choice = chatToolChoice(request.tool_choice);
    if ((request.tool_choice as Block).disable_parallel_tool_use === true) body.parallel_tool_calls = false;
  }
  if (typeof request.metadata?.user_id === 'string') body.user = request.metadata.user_id;
  if (request.stream === true) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}
