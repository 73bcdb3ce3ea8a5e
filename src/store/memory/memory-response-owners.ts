/** The response owners in memory (one process only), each dropped after RESPONSE_OWNER_SECONDS. */
import { RESPONSE_OWNER_SECONDS, type ResponseOwner, type ResponseOwners } from '../ports/response-owners';

export class MemoryResponseOwners implements ResponseOwners {
  private readonly owners = new Map<string, { owner: ResponseOwner; expires: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  async record(responseId: string, owner: ResponseOwner): Promise<void> {
    this.owners.set(responseId, { owner, expires: this.now() + RESPONSE_OWNER_SECONDS * 1000 });
    // Expired entries leave as new ones arrive: the oldest first, a few per write.
    for (const [id, entry] of this.owners) {
      if (entry.expires > this.now()) break;
      this.owners.delete(id);
    }
  }

  async get(responseId: string): Promise<ResponseOwner | undefined> {
    const entry = this.owners.get(responseId);
    return entry && entry.expires > this.now() ? entry.owner : undefined;
  }

  async forget(responseId: string): Promise<void> {
    this.owners.delete(responseId);
  }
}
