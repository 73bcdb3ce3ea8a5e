/**
 * Token counts made here rather than by the upstream: the prompt estimate behind every reservation, and the usage of
 * responses whose upstream reported none. gpt-tokenizer's o200k_base stands in for the model's own tokenizer.
 */
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import type { ChatMessage, ChatRequest } from './chat-request';

/** Per-message framing overhead, and the reply's priming (OpenAI's published accounting). */
const PER_MESSAGE = 4;
const REPLY_PRIMING = 3;
/** A fixed charge per image part: the common 512×512 high-detail price. */
const PER_IMAGE = 765;

export function countText(text: string): number {
  return text.length === 0 ? 0 : countTokens(text);
}

export function estimatePromptTokens(req: ChatRequest): number {
  let total = REPLY_PRIMING;
  for (const m of req.messages) total += PER_MESSAGE + messageTokens(m);
  if (req.tools && req.tools.length > 0) total += countText(JSON.stringify(req.tools));
  return total;
}

function messageTokens(m: ChatMessage): number {
  let n = m.name ? countText(m.name) + 1 : 0;
  const content = m.content;
  if (typeof content === 'string') {
    n += countText(content);
  } else if (Array.isArray(content)) {
    for (const part of content) {
      if (part.type === 'text' && typeof part.text === 'string') n += countText(part.text);
      else if (part.type === 'image_url' || part.type === 'input_image') n += PER_IMAGE;
      else n += countText(JSON.stringify(part));
    }
  }
  const calls = (m as { tool_calls?: unknown }).tool_calls;
  if (calls !== undefined) n += countText(JSON.stringify(calls));
  return n;
}
