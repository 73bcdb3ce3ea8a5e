/** The usage of a non-streamed answer: the upstream's own report when it is sound, else our count of its text. */
import { countText } from '../metering/estimate';
import type { Usage } from './sse-tap';

/** The upstream's `usage`, when both counts are whole non-negative numbers; undefined otherwise. */
export function reportedUsage(usage: { prompt_tokens?: unknown; completion_tokens?: unknown } | undefined): Usage | undefined {
  const p = usage?.prompt_tokens;
  const c = usage?.completion_tokens;
  if (!Number.isSafeInteger(p) || !Number.isSafeInteger(c) || (p as number) < 0 || (c as number) < 0) return undefined;
  return { promptTokens: p as number, completionTokens: c as number };
}

/** Our count of a non-streamed response's completion: every choice's text and tool-call arguments. */
export function completionTextTokens(choices: unknown): number {
  if (!Array.isArray(choices)) return 0;
  let n = 0;
  for (const choice of choices) {
    const msg = (choice as { message?: { content?: unknown; tool_calls?: unknown; reasoning_content?: unknown } })?.message;
    if (typeof msg?.content === 'string') n += countText(msg.content);
    if (typeof msg?.reasoning_content === 'string') n += countText(msg.reasoning_content);
    if (Array.isArray(msg?.tool_calls)) {
      for (const call of msg.tool_calls) {
        const args = (call as { function?: { arguments?: unknown } })?.function?.arguments;
        if (typeof args === 'string') n += countText(args);
      }
    }
  }
  return n;
}
