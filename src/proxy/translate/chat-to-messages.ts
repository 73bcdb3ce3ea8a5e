/**
 * A chat completions answer as a Messages answer: its reasoning, text and tool calls as content blocks, its finish
 * reason as a stop reason, its usage in Messages terms (the prompt less its cache reads, the cache reads apart).
 */
import { Transform, type TransformCallback } from 'node:stream';

type Obj = Record<string, unknown>;

const FINISH: Record<string, string> = { stop: 'end_turn', length: 'max_tokens', tool_calls: 'tool_use', content_filter: 'refusal' };

/**
 * The stop reason of a chat finish reason. vLLM names the stop string matched in the choice's `stop_reason`: when it
 * is one of the request's stop sequences, the answer stopped at it.
 */
export function stopReason(
  finish: string,
  matched: unknown,
  stopSequences: readonly string[] | undefined,
): { reason: string; sequence: string | null } {
  if (finish === 'stop' && typeof matched === 'string' && stopSequences?.includes(matched)) {
    return { reason: 'stop_sequence', sequence: matched };
  }
  return { reason: FINISH[finish] ?? 'end_turn', sequence: null };
}

/** A chat usage object in Messages terms; the prompt's total is unchanged (input plus cache reads). */
export function chatUsageAsMessages(usage: Obj): Obj {
  const prompt = typeof usage.prompt_tokens === 'number' ? usage.prompt_tokens : 0;
  const details = usage.prompt_tokens_details as Obj | null | undefined;
  const cached = typeof details?.cached_tokens === 'number' ? Math.min(details.cached_tokens, prompt) : 0;
  return {
    input_tokens: prompt - cached,
    output_tokens: usage.completion_tokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: cached,
  };
}

function parseArguments(args: unknown): unknown {
  if (typeof args !== 'string' || args.length === 0) return {};
  try {
    return JSON.parse(args);
  } catch {
    // A model that wrote broken JSON: its text kept, so the client sees what it said.
    return { _arguments: args };
  }
}

/** The Messages answer for a parsed chat completion. */
export function chatToMessages(answer: Obj, stopSequences: readonly string[] | undefined): Obj {
  const choice = (Array.isArray(answer.choices) ? answer.choices[0] : undefined) as Obj | undefined;
  const message = (choice?.message ?? {}) as Obj;
  const content: Obj[] = [];
  const reasoning = message.reasoning ?? message.reasoning_content;
  if (typeof reasoning === 'string' && reasoning.length > 0) content.push({ type: 'thinking', thinking: reasoning, signature: '' });
  if (typeof message.content === 'string' && message.content.length > 0) content.push({ type: 'text', text: message.content });
  if (Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls as Obj[]) {
      const fn = (call.function ?? {}) as Obj;
      content.push({ type: 'tool_use', id: call.id, name: fn.name, input: parseArguments(fn.arguments) });
    }
  }
  const finish = stopReason(String(choice?.finish_reason ?? 'stop'), choice?.stop_reason, stopSequences);
  const out: Obj = {
    id: `msg_${String(answer.id ?? '')}`,
    type: 'message',
    role: 'assistant',
    model: answer.model,
    content,
    stop_reason: finish.reason,
    stop_sequence: finish.sequence,
  };
  if (typeof answer.usage === 'object' && answer.usage !== null) out.usage = chatUsageAsMessages(answer.usage as Obj);
  return out;
}

/**
 * Holds a JSON answer to its end and writes it translated. Past `limit` bytes it stops holding and passes the bytes
 * as they are, for the relay's own size limit to refuse; an answer that is not JSON passes as it is too.
 */
export class ChatToMessagesJson extends Transform {
  private chunks: Buffer[] = [];
  private size = 0;
  private passing = false;

  constructor(
    private readonly stopSequences: readonly string[] | undefined,
    private readonly limit: number,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    if (this.passing) return done(null, chunk);
    this.chunks.push(chunk);
    this.size += chunk.length;
    if (this.size <= this.limit) return done();
    this.passing = true;
    const held = Buffer.concat(this.chunks);
    this.chunks = [];
    done(null, held);
  }

  override _flush(done: TransformCallback): void {
    if (this.passing) return done();
    const buf = Buffer.concat(this.chunks);
    let parsed: unknown;
    try {
      parsed = JSON.parse(buf.toString('utf8'));
    } catch {
      return done(null, buf);
    }
    if (typeof parsed !== 'object' || parsed === null) return done(null, buf);
    done(null, Buffer.from(JSON.stringify(chatToMessages(parsed as Obj, this.stopSequences))));
  }
}
