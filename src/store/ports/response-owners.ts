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

/** An answer the upstream stored: its response id and the ids of its output items, all the account's. */
export interface StoredAnswer extends ResponseOwner {
  responseId: string;
  itemIds: readonly string[];
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
   * The account each id (a response's or an item's) was recorded for, in order; undefined for one never recorded;
   * null for one whose owner could not be told (an archive that did not answer): the caller refuses it.
   */
  accounts(ids: readonly string[]): Promise<(string | undefined | null)[]>;
  /** Forgets a deleted response (its items stay the account's: they are no one else's either way). */
  forget(responseId: string): Promise<void>;
}
