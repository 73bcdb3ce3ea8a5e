/** Our count of a non-streamed chat answer's output, for an answer whose upstream reported no usage. */
import { countText } from '../metering/estimate';

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
