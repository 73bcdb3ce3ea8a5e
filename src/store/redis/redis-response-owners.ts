/** The response owners in Redis: one small key per response, `<prefix>resp:<id>`, expiring with the response. */
import type { Cluster, Redis } from 'ioredis';
import { RESPONSE_OWNER_SECONDS, type ResponseOwner, type ResponseOwners } from '../ports/response-owners';

export class RedisResponseOwners implements ResponseOwners {
  private readonly prefix: string;

  constructor(
    private readonly redis: Redis | Cluster,
    options: { prefix?: string } = {},
  ) {
    this.prefix = `${options.prefix ?? 'tm:'}resp:`;
  }

  async record(responseId: string, owner: ResponseOwner): Promise<void> {
    const value = JSON.stringify({ a: owner.accountId, m: owner.model, t: owner.tokens ?? null });
    await this.redis.set(this.prefix + responseId, value, 'EX', RESPONSE_OWNER_SECONDS);
  }

  async get(responseId: string): Promise<ResponseOwner | undefined> {
    const value = await this.redis.get(this.prefix + responseId);
    if (value === null) return undefined;
    const v = JSON.parse(value) as { a: string; m: string; t: number | null };
    return { accountId: v.a, model: v.m, tokens: v.t ?? undefined };
  }

  async forget(responseId: string): Promise<void> {
    await this.redis.del(this.prefix + responseId);
  }
}
