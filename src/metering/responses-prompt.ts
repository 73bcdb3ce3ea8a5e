/**
 * A Responses API request's prompt: instructions, input items (messages, images, function calls and their outputs),
 * tools, and the conversation a `previous_response_id` carries. Bound by UTF-8 bytes, counted by the tokenizer when an
 * answer depends on it, as chat's prompt is.
 */
import { PER_IMAGE } from './estimate';
import { floorOf, replay, textsOf, type PromptMeasure, type Size } from './prompt-measure';

/** Per-message framing, as chat's accounting has it. */
const PER_ITEM = 4;
const PRIMING = 3;
const IMAGE_PARTS = new Set(['input_image', 'image_url']);

interface Input {
  instructions?: string | null;
  input: string | readonly { role?: string; content?: string | readonly { type: string; text?: unknown }[] }[];
  tools?: readonly object[] | null;
  /** A stored prompt's variables: put into its template, so part of the prompt (the template's own size is reserved apart). */
  prompt?: { variables?: Record<string, string | { type: string; text?: unknown }> | null } | null;
}

/** A content part's tokens: its text, an image's flat estimate, or anything else by its JSON. */
function partSize(part: { type: string; text?: unknown }, count: Size): number {
  if (typeof part.text === 'string') return count(part.text);
  return IMAGE_PARTS.has(part.type) ? PER_IMAGE : count(JSON.stringify(part));
}

function promptSize(req: Input, carried: number, count: Size): number {
  let total = PRIMING + carried;
  if (req.instructions) total += PER_ITEM + count(req.instructions);
  if (typeof req.input === 'string') total += PER_ITEM + count(req.input);
  else {
    for (const item of req.input) {
      total += PER_ITEM;
      const content = item.content;
      if (item.role === undefined) total += count(JSON.stringify(item));
      else if (typeof content === 'string') total += count(content);
      else if (Array.isArray(content)) {
        for (const part of content) total += partSize(part, count);
      }
    }
  }
  if (req.tools && req.tools.length > 0) total += count(JSON.stringify(req.tools));
  const variables = req.prompt?.variables;
  if (variables)
    for (const name in variables) {
      const value = variables[name];
      total += typeof value === 'string' ? count(value) : partSize(value, count);
    }
  return total;
}

export class ResponsesPromptSize implements PromptMeasure {
  tokens = 0;
  longest: number | undefined;
  exact = false;

  /**
   * `carried`: the tokens of the conversation a previous response holds. `referenced`: what the items given by id can
   * hold (caller-ids.ts), reserved but left out of the window the proxy checks: a bound, not a count (the upstream
   * checks its window itself). Throws RangeError for a body too deep.
   */
  constructor(
    private readonly req: Input,
    private readonly carried: number,
    private readonly referenced = 0,
  ) {
    this.window(promptSize(req, carried, (text) => Buffer.byteLength(text)));
  }

  private window(tokens: number): void {
    this.tokens = tokens + this.referenced;
    if (this.referenced > 0) this.longest = tokens;
  }

  floor(limit: number): number {
    return floorOf((size) => promptSize(this.req, this.carried, size), limit);
  }

  texts(): string[] {
    return textsOf((size) => promptSize(this.req, this.carried, size));
  }

  counted(counts: readonly number[]): void {
    this.window(promptSize(this.req, this.carried, replay(counts)));
    this.exact = true;
  }
}
