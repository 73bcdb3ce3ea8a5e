/**
 * What an upstream's usage says beyond its two counts: the prompt tokens it served from its cache (charged at the
 * model's cached-input weight) and the completion tokens it spent reasoning (recorded; charged as output).
 */
import type { Usage } from './usage';

type Details = { cached_tokens?: unknown; reasoning_tokens?: unknown } | undefined;

const count = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

/**
 * Of `prompt` tokens, those reported cached: `prompt_tokens_details.cached_tokens` (OpenAI's chat and completions),
 * `input_tokens_details.cached_tokens` (the Responses API) or `prompt_cache_hit_tokens` (DeepSeek); 0 when none is a
 * whole number; never more than the prompt.
 */
export function cachedTokens(usage: Record<string, unknown>, prompt: number): number {
  const reported = [
    (usage.prompt_tokens_details as Details)?.cached_tokens,
    (usage.input_tokens_details as Details)?.cached_tokens,
    usage.prompt_cache_hit_tokens,
  ].find(count);
  return Math.min(reported ?? 0, prompt);
}

/**
 * Of `completion` tokens, those reported as reasoning: `completion_tokens_details.reasoning_tokens` (chat,
 * completions) or `output_tokens_details.reasoning_tokens` (responses); 0 when neither is; never more than the output.
 */
export function reasoningTokens(usage: Record<string, unknown>, completion: number): number {
  const reported = [
    (usage.completion_tokens_details as Details)?.reasoning_tokens,
    (usage.output_tokens_details as Details)?.reasoning_tokens,
  ].find(count);
  return Math.min(reported ?? 0, completion);
}

/** The usage with the cached and reasoning tokens its upstream object reports (each left out when 0). */
export function withDetails(u: Usage, usage: Record<string, unknown>): Usage {
  const cached = cachedTokens(usage, u.promptTokens);
  const reasoning = reasoningTokens(usage, u.completionTokens);
  if (cached > 0) u.cachedTokens = cached;
  if (reasoning > 0) u.reasoningTokens = reasoning;
  return u;
}
