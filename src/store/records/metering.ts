/** The metering path's requests and answers: reserving, settling, and the usage ledger records settlement writes. */
import type { BudgetRefusal } from '../../limits/budget';
import type { LevelUse, LimitRefusal } from '../../limits/limits';
import type { UnixSeconds } from './common';

export interface ReserveRequest {
  accountId: string;
  /** The key the request came with; null when the host app charges its account directly (no key, no cap). */
  keyId: string | null;
  requestId: string;
  model: string;
  /** Tokens charged for the prompt, already weighted. */
  fixed: number;
  /** Tokens charged per completion token the request may produce (output weight × choices). */
  unit: number;
  /** Completion tokens wanted per choice (max_tokens or the model's default). */
  allowance: number;
  /**
   * The allowance is the model's default, not the client's max_tokens: a key's or account's tpm may lower it (to what
   * the limit could ever admit), as the balance does, rather than refuse the request as too large.
   */
  defaultAllowance?: boolean;
  leaseMs: number;
}

export type InvalidKeyReason = 'not_found' | 'revoked' | 'expired';

export type ReserveResult =
  | {
      kind: 'reserved';
      /** completion tokens per choice the balance covers (≤ allowance) */
      allowance: number;
      amount: number;
      /** The use of the key's and the account's limits, for those that have any (absent when neither has). */
      limitUse?: LevelUse[];
    }
  /** A key or account limit refused the request; nothing was reserved or counted. */
  | { kind: 'rate_limited'; refusal: LimitRefusal }
  /** The key's or the account's budget for the period cannot cover the request; nothing was reserved or counted. */
  | { kind: 'budget_exceeded'; refusal: BudgetRefusal }
  /** `limitedBy`: whether the account's balance or the key's cap is what falls short. */
  | { kind: 'insufficient_quota'; available: number; limitedBy: 'account' | 'key' }
  | { kind: 'invalid_key'; reason: InvalidKeyReason }
  | { kind: 'account_disabled' }
  | { kind: 'account_not_found' }
  | { kind: 'model_not_allowed' };

export interface Settlement {
  accountId: string;
  /** Null for a request charged to its account without a key. */
  keyId: string | null;
  requestId: string;
  model: string;
  /** The endpoint the request used (`chat`, `completions`, `embeddings`, `responses`). Default `chat`. */
  endpoint?: string;
  promptTokens: number;
  completionTokens: number;
  /** Of the prompt tokens, those the upstream reported as cached (charged at the model's cached-input weight). Absent: 0. */
  cachedTokens?: number;
  /** Of the completion tokens, those the upstream reported as reasoning (charged as output). Absent: 0. */
  reasoningTokens?: number;
  /** Hosted tool calls the answer reported (or the reserved ones when it reported none to read). Absent: 0. */
  toolCalls?: number;
  /** Of the charged tokens, those for the hosted tool calls (per call, unweighted). Absent: 0. */
  toolTokens?: number;
  chargedTokens: number;
  /** True when the counts come from our tokenizer rather than the upstream's usage. */
  estimated: boolean;
  stream: boolean;
  /** The HTTP status the client got. */
  status: number;
}

/** A ledger record: the settlement as stored, with when and where in the account's ledger. */
export interface UsageRecord extends Settlement {
  /** Records from before endpoints say `chat`. */
  endpoint: string;
  cachedTokens: number;
  reasoningTokens: number;
  created: UnixSeconds;
  /** Position in the account's ledger: pass it back as `after` (with the account or key) to read on incrementally. */
  cursor: string;
}

export interface UsageQuery {
  accountId?: string;
  /** Only this key's records (its account's ledger, filtered). */
  keyId?: string;
  model?: string;
  since?: UnixSeconds;
  until?: UnixSeconds;
  /** Only records after this cursor (a position in one account's ledger), oldest first: the first `limit` of them. */
  after?: string;
  /** Only records strictly before this cursor: without `after`, the newest `limit` of them (to page back in time). */
  before?: string;
  /** Most records returned: without `after`, the newest `limit`, still oldest first. */
  limit: number;
}

/**
 * `settled`, with the account's balance after the charge as its views show it (unexpired package remainders, less
 * debt and open reservations; negative in debt), which the answer then shows; a host's store may leave it out.
 * `duplicate`: the request was already charged, nothing changed.
 */
export type SettleResult = { kind: 'settled'; balance?: number } | { kind: 'duplicate' };

/**
 * Settled-request markers are kept this long, so a settle retried within it (after a lost reply, or replayed from
 * the journal after a restart) is recognised as a duplicate. One small key per request: a day bounds the memory.
 */
export const SETTLE_DEDUP_SECONDS = 24 * 3600;

/**
 * How far a request id's time (a UUIDv7's, from the proxy's clock) may be ahead of the store's clock: a settlement
 * without its reservation looks for its marker from that time less this, not through the whole window. An hour
 * covers any clock that NTP keeps; it costs one more bucket read.
 */
export const SETTLE_CLOCK_SKEW_SECONDS = 3600;
