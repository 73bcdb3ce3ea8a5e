/**
 * The response and item owners in Redis, compactly: no key per answer, but one hash per shard of ids and per 10-day
 * bucket, `<prefix>own:<shard>:<bucket>`, id -> owner, expiring as a whole 30 days after its bucket ends. So an id is
 * kept 30 to 40 days, and a lookup reads the 4 buckets that can hold it. A response's owner is JSON
 * `{a: account, m: model, t: tokens}`, an item's the account id alone. Plain commands: nothing here checks and changes.
 */
import type { Cluster, Redis } from 'ioredis';
import { RESPONSE_OWNER_SECONDS, type ResponseOwner, type ResponseOwners, type StoredAnswer } from '../ports/response-owners';

const BUCKET_SECONDS = 10 * 24 * 3600;
/** The buckets an id recorded within RESPONSE_OWNER_SECONDS can be in: the current one and those before it. */
const BUCKETS = Math.ceil(RESPONSE_OWNER_SECONDS / BUCKET_SECONDS) + 1;
/** Hashes per bucket: a bucket's ids spread over cluster nodes rather than one key holding them all. */
const SHARDS = 16;

/** FNV-1a of the id, to its shard. */
function shardOf(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return (h >>> 0) % SHARDS;
}

type Stored = { a: string; m: string; t: number | null };

export class RedisResponseOwners implements ResponseOwners {
  private readonly prefix: string;
  private readonly now: () => number;

  constructor(
    private readonly redis: Redis | Cluster,
    options: { prefix?: string; now?: () => number } = {},
  ) {
    this.prefix = options.prefix ?? 'tm:';
    this.now = options.now ?? Date.now;
  }

  async record(answer: StoredAnswer): Promise<void> {
    const bucket = this.bucket();
    const expireAt = (bucket + 1) * BUCKET_SECONDS + RESPONSE_OWNER_SECONDS;
    const fields = new Map<string, string[]>();
    const add = (id: string, value: string) => {
      const key = this.key(id, bucket);
      const list = fields.get(key) ?? [];
      list.push(id, value);
      fields.set(key, list);
    };
    const stored: Stored = { a: answer.accountId, m: answer.model, t: answer.tokens ?? null };
    add(answer.responseId, JSON.stringify(stored));
    for (const id of answer.itemIds) add(id, answer.accountId);
    // One MULTI per hash (one slot each): a hash never lives on without its expiry.
    await Promise.all(
      [...fields].map(([key, list]) =>
        this.redis
          .multi()
          .hset(key, ...list)
          .expireat(key, expireAt)
          .exec(),
      ),
    );
  }

  async get(responseId: string): Promise<ResponseOwner | undefined> {
    const value = (await this.lookup(responseId)) ?? (await this.redis.get(this.legacyKey(responseId)));
    if (value === null || !value.startsWith('{')) return undefined;
    const v = JSON.parse(value) as Stored;
    return { accountId: v.a, model: v.m, tokens: v.t ?? undefined };
  }

  async accounts(ids: readonly string[]): Promise<(string | undefined)[]> {
    const values = await Promise.all(ids.map((id) => this.lookup(id)));
    return values.map((v) => (v === null ? undefined : v.startsWith('{') ? (JSON.parse(v) as Stored).a : v));
  }

  async forget(responseId: string): Promise<void> {
    const bucket = this.bucket();
    await Promise.all([
      ...Array.from({ length: BUCKETS }, (_, i) => this.redis.hdel(this.key(responseId, bucket - i), responseId)),
      this.redis.del(this.legacyKey(responseId)),
    ]);
  }

  /** The id's owner in the newest bucket that has it, or null. */
  private async lookup(id: string): Promise<string | null> {
    const bucket = this.bucket();
    const values = await Promise.all(Array.from({ length: BUCKETS }, (_, i) => this.redis.hget(this.key(id, bucket - i), id)));
    return values.find((v) => v !== null) ?? null;
  }

  private bucket(): number {
    return Math.floor(this.now() / 1000 / BUCKET_SECONDS);
  }

  private key(id: string, bucket: number): string {
    return `${this.prefix}own:${shardOf(id)}:${bucket}`;
  }

  /** Where owners were kept before buckets (one 30-day key per response): read until they expire. */
  private legacyKey(responseId: string): string {
    return `${this.prefix}resp:${responseId}`;
  }
}
