/** The basics the store's records share: time, token packages and usage totals. */
/** Unix seconds. */
export type UnixSeconds = number;

export interface TokenPackage {
  id: string;
  tokens: number;
  remaining: number;
  expiresAt: UnixSeconds | null;
  created: UnixSeconds;
}

export interface UsageTotals {
  requests: number;
  promptTokens: number;
  completionTokens: number;
  /** Of the prompt tokens, those reported as cached. */
  cachedTokens: number;
  /** Of the completion tokens, those reported as reasoning. */
  reasoningTokens: number;
  chargedTokens: number;
}
