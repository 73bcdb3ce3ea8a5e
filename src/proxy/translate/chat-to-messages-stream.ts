/**
 * A chat completions stream as a Messages stream, event by event as it arrives (nothing held but a partial line):
 * message_start on the first chunk; content blocks for reasoning (thinking), content (text) and tool calls (tool_use
 * with input_json_delta); message_delta with the stop reason and the chat usage once it comes; message_stop.
 */
import { StringDecoder } from 'node:string_decoder';
import { Transform, type TransformCallback } from 'node:stream';
import { lineTooLong, MAX_STREAM_LINE_BYTES } from '../line-cap';
import { chatUsageAsMessages, stopReason } from './chat-to-messages';

type Chunk = Record<string, unknown>;

const event = (type: string, data: Record<string, unknown>) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

/** Translates one stream; `stopSequences`: the request's, to tell a stop sequence from a natural end. */
export class ChatToMessagesStream extends Transform {
  private readonly decoder = new StringDecoder('utf8');
  /** The pieces of a line not yet ended, and their bytes (at most MAX_STREAM_LINE_BYTES: past it the stream fails). */
  private pending: string[] = [];
  private pendingBytes = 0;
  private started = false;
  /** The open block's index and kind (-1: none open). */
  private index = -1;
  private kind: 'text' | 'thinking' | 'tool' | undefined;
  /** The open tool call's chat index. */
  private toolIndex = -1;
  private finish: { reason: string; sequence: string | null } | undefined;
  private stopped = false;
  private failed = false;

  constructor(private readonly stopSequences: readonly string[] | undefined) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    // Decoded across chunks (a character split between two stays whole); only the new text is searched for line ends,
    // the pieces of a long line kept apart until it ends: linear however the upstream splits its writes.
    const text = this.decoder.write(chunk);
    let from = 0;
    let out = '';
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', from)) {
      const head = text.slice(from, nl);
      out += this.line((this.pending.length > 0 ? this.pending.join('') + head : head).trimEnd());
      this.pending = [];
      this.pendingBytes = 0;
      from = nl + 1;
    }
    if (from < text.length) {
      const rest = from === 0 ? text : text.slice(from);
      this.pending.push(rest);
      this.pendingBytes += from === 0 ? chunk.length : Buffer.byteLength(rest);
      if (this.pendingBytes > MAX_STREAM_LINE_BYTES) {
        this.pending = [];
        // What was translated before the line still goes out; the failure ends the stream after it.
        if (out.length > 0) this.push(out);
        return done(lineTooLong());
      }
    }
    done(null, out.length > 0 ? out : undefined);
  }

  override _flush(done: TransformCallback): void {
    const rest = this.pending.join('') + this.decoder.end();
    let out = rest.length > 0 ? this.line(rest.trimEnd()) : '';
    // A stream that ended without its usage chunk: its stop reason still told, its usage left to our count.
    if (this.started && !this.stopped) out += this.stop(undefined);
    done(null, out.length > 0 ? out : undefined);
  }

  private line(line: string): string {
    if (!line.startsWith('data:')) return '';
    const data = line.slice(5).trim();
    if (data === '[DONE]') return '';
    let chunk: Chunk;
    try {
      chunk = JSON.parse(data) as Chunk;
    } catch {
      return '';
    }
    if (this.failed) return '';
    if (typeof chunk.error === 'object' && chunk.error !== null) {
      // The upstream's error ends the Messages stream: nothing after it (no message_delta, no message_stop) is told.
      this.failed = true;
      this.stopped = true;
      const message = String((chunk.error as Chunk).message ?? 'The upstream stream failed.');
      return event('error', { error: { type: 'api_error', message } });
    }
    let out = this.started ? '' : this.start(chunk);
    const choice = Array.isArray(chunk.choices) ? (chunk.choices[0] as Chunk | undefined) : undefined;
    if (choice) out += this.choice(choice);
    if (typeof chunk.usage === 'object' && chunk.usage !== null && this.finish) out += this.stop(chunk.usage as Chunk);
    return out;
  }

  private start(chunk: Chunk): string {
    this.started = true;
    const message = {
      id: `msg_${String(chunk.id ?? '')}`,
      type: 'message',
      role: 'assistant',
      model: chunk.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      // The chat usage comes last: message_delta carries all of it.
      usage: { input_tokens: 0, output_tokens: 0 },
    };
    return event('message_start', { message });
  }

  private choice(choice: Chunk): string {
    let out = '';
    const delta = (choice.delta ?? {}) as Chunk;
    const reasoning = delta.reasoning ?? delta.reasoning_content;
    if (typeof reasoning === 'string' && reasoning.length > 0) {
      out += this.open('thinking', { type: 'thinking', thinking: '', signature: '' });
      out += event('content_block_delta', { index: this.index, delta: { type: 'thinking_delta', thinking: reasoning } });
    }
    if (typeof delta.content === 'string' && delta.content.length > 0) {
      out += this.open('text', { type: 'text', text: '' });
      out += event('content_block_delta', { index: this.index, delta: { type: 'text_delta', text: delta.content } });
    }
    if (Array.isArray(delta.tool_calls)) for (const call of delta.tool_calls as Chunk[]) out += this.toolCall(call);
    if (typeof choice.finish_reason === 'string') {
      out += this.close();
      this.finish = stopReason(choice.finish_reason, choice.stop_reason, this.stopSequences);
    }
    return out;
  }

  private toolCall(call: Chunk): string {
    let out = '';
    const fn = (call.function ?? {}) as Chunk;
    const chatIndex = typeof call.index === 'number' ? call.index : this.toolIndex;
    if (this.kind !== 'tool' || chatIndex !== this.toolIndex) {
      this.toolIndex = chatIndex;
      out += this.open('tool', { type: 'tool_use', id: call.id, name: fn.name, input: {} }, true);
    }
    if (typeof fn.arguments === 'string' && fn.arguments.length > 0) {
      out += event('content_block_delta', { index: this.index, delta: { type: 'input_json_delta', partial_json: fn.arguments } });
    }
    return out;
  }

  /** Opens a block of this kind unless one is open (`fresh`: a new one all the same, as for each tool call). */
  private open(kind: 'text' | 'thinking' | 'tool', block: Chunk, fresh = false): string {
    if (this.kind === kind && !fresh) return '';
    const out = this.close();
    this.index += 1;
    this.kind = kind;
    return out + event('content_block_start', { index: this.index, content_block: block });
  }

  private close(): string {
    if (this.kind === undefined) return '';
    this.kind = undefined;
    return event('content_block_stop', { index: this.index });
  }

  private stop(usage: Chunk | undefined): string {
    this.stopped = true;
    const finish = this.finish ?? { reason: 'end_turn', sequence: null };
    const data: Chunk = { delta: { stop_reason: finish.reason, stop_sequence: finish.sequence } };
    // Always a usage object (the SDKs read message_delta's); empty when the upstream sent none: no output_tokens, so
    // the tap finds no whole usage and the stream is charged our count of it, never a made-up 0.
    data.usage = usage ? chatUsageAsMessages(usage) : {};
    return this.close() + event('message_delta', data) + event('message_stop', {});
  }
}
