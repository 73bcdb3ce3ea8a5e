/**
 * Token counts made here rather than by the upstream: the prompt estimate behind every reservation, and the usage of
 * responses whose upstream reported none. gpt-tokenizer's o200k_base stands in for the model's own tokenizer.
 */
import type { ChatMessage, ChatRequest } from '../requests/chat-request';
import { floorOf, replay, textsOf, type PromptMeasure, type Size } from './prompt-measure';
import { countInPieces } from './token-pieces';

type Tokenizer = typeof import('gpt-tokenizer/encoding/o200k_base');

/**
 * gpt-tokenizer's o200k tables: loading them takes 150-300 ms of one thread, so the process loads them at start
 * (`loadTokenizer`, from openTokenmeter and the count worker), before it serves anyone. The require cache makes this
 * once per process (and per jest module registry); a caller that never loaded them still gets them on first use.
 */
let tokenizer: Tokenizer | undefined;
/** Text that spells a special token (`<|endoftext|>`) is counted as the text it is, not refused. */
const AS_TEXT = { disallowedSpecial: new Set<string>() };
function countPiece(piece: string): number {
  return (tokenizer as Tokenizer).countTokens(piece, AS_TEXT);
}

/** Loads the tokenizer's tables now (once): a process does so at start, not on its first count. */
export function loadTokenizer(): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded when the process starts serving, see above
  tokenizer ??= require('gpt-tokenizer/encoding/o200k_base') as Tokenizer;
}

/** Per-message framing overhead, and the reply's priming (OpenAI's published accounting). */
const PER_MESSAGE = 4;
const REPLY_PRIMING = 3;
/** A fixed charge per image part: the common 512×512 high-detail price. */
export const PER_IMAGE = 765;

/** A count given up at its deadline. */
export class OverBudget extends Error {}

/**
 * Our tokenizer's count of `text`, in time linear in its length (see token-pieces). With a `deadline` (a Date.now()
 * time), throws OverBudget when one of its pieces would start past it.
 */
export function countText(text: string, deadline?: number): number {
  if (text.length === 0) return 0;
  loadTokenizer();
  if (deadline === undefined) return countInPieces(text, countPiece);
  return countInPieces(text, (piece) => {
    if (Date.now() > deadline) throw new OverBudget();
    return countPiece(piece);
  });
}

/** Our tokenizer's count of a request's prompt. */
export function estimatePromptTokens(req: ChatRequest): number {
  return promptSize(req, countText);
}

/**
 * An upper bound of estimatePromptTokens, for next to nothing: the same walk, counting UTF-8 bytes instead of tokens
 * (no token is shorter than a byte). Real tokenizers obey the same rule, so it also bounds the upstream's own count.
 */
export function promptTokenBound(req: ChatRequest): number {
  return promptSize(req, utf8Bytes);
}

function utf8Bytes(text: string): number {
  return Buffer.byteLength(text);
}

function promptSize(req: ChatRequest, count: Size): number {
  let total = REPLY_PRIMING;
  for (const m of req.messages) total += PER_MESSAGE + messageSize(m, count);
  if (req.tools && req.tools.length > 0) total += count(JSON.stringify(req.tools));
  return total;
}

function messageSize(m: ChatMessage, count: Size): number {
  let n = m.name ? count(m.name) + 1 : 0;
  const content = m.content;
  if (typeof content === 'string') {
    n += count(content);
  } else if (Array.isArray(content)) {
    for (const part of content) {
      if (part.type === 'text' && typeof part.text === 'string') n += count(part.text);
      else if (part.type === 'image_url' || part.type === 'input_image') n += PER_IMAGE;
      else n += count(JSON.stringify(part));
    }
  }
  const calls = (m as { tool_calls?: unknown }).tool_calls;
  if (calls !== undefined) n += count(JSON.stringify(calls));
  return n;
}

/**
 * A chat prompt's size for one request: the byte bound at first, replaced by the tokenizer's count when an answer
 * depends on it (near the context limit, a tight balance, or no usage reported by the upstream).
 */
export class PromptSize implements PromptMeasure {
  tokens: number;
  exact = false;

  /** Throws RangeError for a body nested too deeply to serialize. */
  constructor(private readonly req: ChatRequest) {
    this.tokens = promptTokenBound(req);
  }

  floor(limit: number): number {
    return floorOf((size) => promptSize(this.req, size), limit);
  }

  texts(): string[] {
    return textsOf((size) => promptSize(this.req, size));
  }

  counted(counts: readonly number[]): void {
    this.tokens = promptSize(this.req, replay(counts));
    this.exact = true;
  }
}
