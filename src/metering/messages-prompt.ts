/**
 * A Messages API request's prompt: its system text, messages (text, images, tool uses and results, thinking) and tools.
 * Bound by UTF-8 bytes, counted by the tokenizer when an answer depends on it, as chat's prompt is.
 */
import { PER_IMAGE } from './estimate';
import { WalkedPrompt, type Size } from './prompt-measure';

/** Per-message framing, as chat's accounting has it. */
const PER_MESSAGE = 4;
const PRIMING = 3;
const IMAGE_BLOCKS = new Set(['image', 'document']);

interface Block {
  type: string;
  text?: unknown;
  thinking?: unknown;
}

interface Prompt {
  system?: string | readonly Block[];
  messages: readonly { content: string | readonly Block[] }[];
  tools?: readonly object[];
}

function blocksSize(blocks: string | readonly Block[], count: Size): number {
  if (typeof blocks === 'string') return count(blocks);
  let n = 0;
  for (const block of blocks) {
    if (typeof block.text === 'string') n += count(block.text);
    else if (typeof block.thinking === 'string') n += count(block.thinking);
    // An image's tokens depend on its pixels, which the bytes do not bound: a fixed price, as chat's images.
    else if (IMAGE_BLOCKS.has(block.type)) n += PER_IMAGE;
    // Tool uses, tool results and anything else: as they are written.
    else n += count(JSON.stringify(block));
  }
  return n;
}

function promptSize(req: Prompt, count: Size): number {
  let total = PRIMING;
  if (req.system !== undefined) total += PER_MESSAGE + blocksSize(req.system, count);
  for (const m of req.messages) total += PER_MESSAGE + blocksSize(m.content, count);
  if (req.tools && req.tools.length > 0) total += count(JSON.stringify(req.tools));
  return total;
}

/** A Messages prompt's measure. Throws RangeError for a body nested too deeply to serialize. */
export function messagesPrompt(req: Prompt): WalkedPrompt {
  return new WalkedPrompt((size) => promptSize(req, size));
}
