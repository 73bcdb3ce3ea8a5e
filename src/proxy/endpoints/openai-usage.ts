/**
 * Usage as the chat-shaped endpoints report it (`prompt_tokens`, `completion_tokens`: chat, completions, embeddings),
 * and the pieces of their streams' dialect they share: a `choices: []` usage chunk, a `data:` error event.
 */
import type { Usage } from '../usage';
import { withDetails } from '../usage-details';
import { midStreamErrorEvent } from '../upstream-errors';

function count(v: unknown): v is number {
  return Number.isSafeInteger(v) && (v as number) >= 0;
}

/**
 * `{prompt_tokens, completion_tokens}` when both are whole non-negative numbers (`completion_tokens` optional when
 * `output` is false), with the cached and reasoning tokens the details report (usage-details.ts).
 */
export function promptCompletionUsage(usage: unknown, output = true): Usage | undefined {
  if (typeof usage !== 'object' || usage === null) return undefined;
  const { prompt_tokens: p, completion_tokens: c } = usage as { prompt_tokens?: unknown; completion_tokens?: unknown };
  if (!count(p)) return undefined;
  if (!output) return withDetails({ promptTokens: p, completionTokens: count(c) ? c : 0 }, usage as Record<string, unknown>);
  return count(c) ? withDetails({ promptTokens: p, completionTokens: c }, usage as Record<string, unknown>) : undefined;
}

/** `{input_tokens, output_tokens}` (the Responses API's) when both are whole non-negative numbers, with their details. */
export function inputOutputUsage(usage: unknown): Usage | undefined {
  if (typeof usage !== 'object' || usage === null) return undefined;
  const { input_tokens: i, output_tokens: o } = usage as { input_tokens?: unknown; output_tokens?: unknown };
  return count(i) && count(o) ? withDetails({ promptTokens: i, completionTokens: o }, usage as Record<string, unknown>) : undefined;
}

/** A chat-shaped chunk's usage. */
export const chunkUsage = (event: Record<string, unknown>): Usage | undefined => promptCompletionUsage(event.usage);

/** A chunk with `choices: []` carries nothing but its usage. */
export const choicesEmpty = (event: Record<string, unknown>): boolean => Array.isArray(event.choices) && event.choices.length === 0;

/** The usage object of a usage-only chunk (`choices: []`): the stream's whole usage. */
export const usageChunkUsage = (event: Record<string, unknown>): Record<string, unknown> | undefined =>
  choicesEmpty(event) ? usageObject(event.usage) : undefined;

/** `usage` when it is an object. */
export function usageObject(usage: unknown): Record<string, unknown> | undefined {
  return typeof usage === 'object' && usage !== null && !Array.isArray(usage) ? (usage as Record<string, unknown>) : undefined;
}

export { midStreamErrorEvent as dataErrorEvent };
