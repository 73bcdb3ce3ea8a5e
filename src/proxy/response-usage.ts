/** The output texts of a non-streamed chat answer, for our count when its upstream reported no usage. */

/** Every choice's text, reasoning and tool-call arguments. */
export function completionTexts(choices: unknown): string[] {
  const texts: string[] = [];
  if (!Array.isArray(choices)) return texts;
  for (const choice of choices) {
    const msg = (choice as { message?: { content?: unknown; tool_calls?: unknown; reasoning?: unknown; reasoning_content?: unknown } })
      ?.message;
    if (typeof msg?.content === 'string') texts.push(msg.content);
    // vLLM's reasoning: `reasoning` now, `reasoning_content` before (both, with the same text, while clients move over).
    if (typeof msg?.reasoning === 'string') texts.push(msg.reasoning);
    else if (typeof msg?.reasoning_content === 'string') texts.push(msg.reasoning_content);
    if (Array.isArray(msg?.tool_calls)) {
      for (const call of msg.tool_calls) {
        const args = (call as { function?: { arguments?: unknown } })?.function?.arguments;
        if (typeof args === 'string') texts.push(args);
      }
    }
  }
  return texts;
}
