/**
 * Token usage as the meter counts it, whichever endpoint reported it (prompt/input and completion/output tokens), with
 * what it says beyond the two.
 */
export interface Usage {
  promptTokens: number;
  completionTokens: number;
  /** Of the prompt tokens, those the upstream reported as cached (usage-details.ts); absent: none. */
  cachedTokens?: number;
  /** Of the prompt tokens, those the upstream wrote to its cache (Anthropic's `cache_creation_input_tokens`); absent: none. */
  cacheWriteTokens?: number;
  /** Of the completion tokens, those the upstream reported as reasoning; absent: none. */
  reasoningTokens?: number;
  /** The hosted tool calls the answer reports, by output item type (hosted-tools.ts); absent: the answer did not say. */
  hostedCalls?: string[];
}
