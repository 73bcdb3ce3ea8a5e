/**
 * Whose stored responses are whose: the Responses API keeps state upstream (`previous_response_id`, GET and DELETE of
 * a response), shared by every account behind the proxy's one upstream key. The owner is recorded when a response is
 * answered; only that account may name it again. A small port of its own, with a memory and a Redis implementation.
 */

export interface ResponseOwner {
  accountId: string;
  /** The model (catalog id) that answered: its upstream holds the response. */
  model: string;
  /** The conversation's tokens so far (input and output), when the upstream reported them. */
  tokens: number | undefined;
}

/** How long an owner is kept: as long as OpenAI keeps a stored response (30 days). */
export const RESPONSE_OWNER_SECONDS = 30 * 24 * 3600;

export interface ResponseOwners {
  record(responseId: string, owner: ResponseOwner): Promise<void>;
  /** Undefined when no response of that id was answered through this proxy (or it was deleted, or it expired). */
  get(responseId: string): Promise<ResponseOwner | undefined>;
  forget(responseId: string): Promise<void>;
}
