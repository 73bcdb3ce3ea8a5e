/**
 * Usage as the chat-shaped endpoints report it (`prompt_tokens`, `completion_tokens`: chat, completions, embeddings),
 * and the pieces of their streams' dialect they share: a `choices: []` usage chunk, a `data:` error event.
 */
import type { Usage } from '../usage';
import { midStreamErrorEvent } from '../upstream-errors';

function count(v: unknown): v is number {
  return Number.isSafeInteger(v) && (v as number) >= 0;
}

/** `{prompt_tokens, completion_tokens}` when both are whole non-negative numbers (`completion_tokens` optional when `output` is false). */
export function promptCompletionUsage(usage: unknown, output = true): Usage | undefined {
  if (typeof usage !== 'object' || usage === null) return undefined;
  const { prompt_tokens: p, completion_tokens: c } = usage as { prompt_tokens?: unknown; completion_tokens?: unknown };
  if (!count(p)) return undefined;
  if (!output) return { promptTokens: p, completionTokens: count(c) ? c : 0 };
  return count(c) ? { promptTokens: p, completionTokens: c } : undefined;
}

/** `{input_tokens, output_tokens}` (the Responses API's) when both are whole non-negative numbers. */
export function inputOutputUsage(usage: unknown): Usage | undefined {
  if (typeof usage !== 'object' || usage === null) return undefined;
  const { input_tokens: i, output_tokens: o } = usage as { input_tokens?: unknown; output_tokens?: unknown };
  return count(i) && count(o) ? { promptTokens: i, completionTokens: o } : undefined;
}

/** A chat-shaped chunk's usage. */
export const chunkUsage = (event: Record<string, unknown>): Usage | undefined => promptCompletionUsage(event.usage);

/** A chunk with `choices: []` carries nothing but its usage. */
export const choicesEmpty = (event: Record<string, unknown>): boolean => Array.isArray(event.choices) && event.choices.length === 0;

export { midStreamErrorEvent as dataErrorEvent };
