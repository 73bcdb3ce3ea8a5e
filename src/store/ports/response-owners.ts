/**
 * Whose stored responses and items are whose: the Responses API keeps state upstream (a response, and the items of
 * its output), shared by every account behind the proxy's one upstream key. Owners are recorded when the upstream
 * says it stored an answer; only that account may name those ids again. A small port of its own, with a memory and a
 * Redis implementation pinned by one contract test.
 */

export interface ResponseOwner {
  accountId: string;
  /** The model (catalog id) that answered: its upstream holds the response. */
  model: string;
  /** The conversation's tokens so far (input and output), when the upstream reported them. */
  tokens: number | undefined;
}

/**
 * An answer the upstream stored: its response id and the ids of its items (its output's, or its input's once listed),
 * all the account's. Each item is recorded with `tokens` as its size: the answer's own (its input and output) bound any
 * one of its items, so a reference to it is reserved at no less than the upstream can bill for it.
 */
export interface StoredAnswer extends ResponseOwner {
  responseId: string;
  itemIds: readonly string[];
}

/** The account an id was recorded for, and the tokens it can put in a prompt (undefined: recorded without a size). */
export interface ItemOwner {
  accountId: string;
  tokens: number | undefined;
}

/** How long an owner is kept at least: as long as OpenAI keeps a stored response (30 days). */
export const RESPONSE_OWNER_SECONDS = 30 * 24 * 3600;
/** The same in days: with the archive, owners are read from the day buckets (and rows) of the last 30 days and today. */
export const RESPONSE_OWNER_DAYS = RESPONSE_OWNER_SECONDS / 86_400;

export interface ResponseOwners {
  record(answer: StoredAnswer): Promise<void>;
  /** Undefined when no response of that id was stored through this proxy (or it was deleted, or it expired). */
  get(responseId: string): Promise<ResponseOwner | undefined>;
  /**
   * Whose each id (a response's or an item's) is, and its size, in order; undefined for one never recorded; null for
   * one whose owner could not be told (an archive that did not answer): the caller refuses it.
   */
  items(ids: readonly string[]): Promise<(ItemOwner | undefined | null)[]>;
  /** Forgets a deleted response (its items stay the account's: they are no one else's either way). */
  forget(responseId: string): Promise<void>;
}
