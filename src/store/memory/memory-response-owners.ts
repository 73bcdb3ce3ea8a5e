/** The response and item owners in memory (one process only), each dropped after RESPONSE_OWNER_SECONDS. */
import {
  RESPONSE_OWNER_SECONDS,
  type ItemOwner,
  type ResponseOwner,
  type ResponseOwners,
  type StoredAnswer,
} from '../ports/response-owners';

/** An item's entry names its account and size; a response's carries its model too. */
interface Entry {
  item: ItemOwner;
  response: ResponseOwner | undefined;
  expires: number;
}

export class MemoryResponseOwners implements ResponseOwners {
  private readonly owners = new Map<string, Entry>();

  constructor(private readonly now: () => number = Date.now) {}

  async record(answer: StoredAnswer): Promise<void> {
    const now = this.now();
    const expires = now + RESPONSE_OWNER_SECONDS * 1000;
    const { accountId, model, tokens } = answer;
    // Re-set ids go last, so the map stays in expiry order for the sweep below.
    this.owners.delete(answer.responseId);
    const item = { accountId, tokens };
    this.owners.set(answer.responseId, { item, response: { accountId, model, tokens }, expires });
    for (const id of answer.itemIds) {
      this.owners.delete(id);
      this.owners.set(id, { item, response: undefined, expires });
    }
    // Expired entries leave as new ones arrive: the oldest first, a few per write.
    for (const [id, entry] of this.owners) {
      if (entry.expires > now) break;
      this.owners.delete(id);
    }
  }

  async get(responseId: string): Promise<ResponseOwner | undefined> {
    return this.live(responseId)?.response;
  }

  async items(ids: readonly string[]): Promise<(ItemOwner | undefined)[]> {
    return ids.map((id) => this.live(id)?.item);
  }

  async forget(responseId: string): Promise<void> {
    this.owners.delete(responseId);
  }

  private live(id: string): Entry | undefined {
    const entry = this.owners.get(id);
    return entry && entry.expires > this.now() ? entry : undefined;
  }
}
