/**
 * The response and item owners in Redis, compactly: no key per answer, but one hash per shard of ids and per bucket,
 * id -> owner, each hash expiring as a whole 30 days after its bucket ends. Without the archive a bucket is 10 days,
 * `<prefix>own:<shard>:<bucket>`: an id is kept 30 to 40 days and a lookup reads the 4 buckets that can hold it. With
 * the archive a bucket is a UTC day, `<prefix>own:<shard>:d<day>`: the owners shipper (ledger-archive/) copies each
 * past day into PostgreSQL, then shortens its hashes' life to the hot window, and a lookup reads only the days not
 * shipped yet or still hot (the shipped day, `{own}:sc`, is read at most every 10 s: it only moves forward, so an old
 * value means more days read, never fewer). A response's owner is JSON `{a: account, m: model, t: tokens}`, an item's
 * `<account> <tokens>` (its size beside it, a few bytes; the account id alone when recorded without a size). A hash's
 * fields and its expiry are written by one script (lua/owners/record.lua); the rest are plain commands.
 */
import type { Cluster, Redis } from 'ioredis';
import {
  type ItemOwner,
  RESPONSE_OWNER_DAYS,
  RESPONSE_OWNER_SECONDS,
  type ResponseOwner,
  type ResponseOwners,
  type StoredAnswer,
} from '../ports/response-owners';
import type { OwnerRow } from '../ports/owner-ship-source';
import { defineScripts } from './define-scripts';
import { luaScript } from './lua-scripts';

export const DAY_MS = 24 * 3600 * 1000;
const BUCKET_MS = 10 * DAY_MS;
/** The 10-day buckets an id recorded within RESPONSE_OWNER_SECONDS can be in: the current one and those before it. */
const BUCKETS = Math.ceil((RESPONSE_OWNER_SECONDS * 1000) / BUCKET_MS) + 1;
/** Hashes per bucket: a bucket's ids spread over cluster nodes rather than one key holding them all. */
export const SHARDS = 16;
const SHIPPED_READ_MS = 10_000;
/** Ids and owners (two values each) written by one call of the record script. */
const SCRIPT_VALUES = 2_000;

/** FNV-1a of the id, to its shard. */
export function shardOf(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return (h >>> 0) % SHARDS;
}

/** A day bucket's hash of one shard. */
export const dayKey = (prefix: string, shard: number, day: number): string => `${prefix}own:${shard}:d${day}`;
/** The owners shipper's lease and shipped day (one slot: its scripts touch both). */
export const shipKeys = (prefix: string) => ({ lease: `${prefix}{own}:sl`, shipped: `${prefix}{own}:sc` });

type Stored = { a: string; m: string; t: number | null };

/** An item's hash field: its account, and its size after a space (account ids have none). */
function itemValue(v: string): ItemOwner {
  const at = v.indexOf(' ');
  return at === -1 ? { accountId: v, tokens: undefined } : { accountId: v.slice(0, at), tokens: Number(v.slice(at + 1)) };
}

/** A hash field's owner: a response's JSON, or an item's account and size. */
function ownerOf(v: string): ItemOwner {
  if (!v.startsWith('{')) return itemValue(v);
  const s = JSON.parse(v) as Stored;
  return { accountId: s.a, tokens: s.t ?? undefined };
}

/** A hash field as the shipper ships it: a response's JSON, or an item's account and size (model null). */
export function ownerRow(id: string, day: number, value: string): OwnerRow {
  if (!value.startsWith('{')) {
    const item = itemValue(value);
    return { id, day, accountId: item.accountId, model: null, tokens: item.tokens ?? null };
  }
  const v = JSON.parse(value) as Stored;
  return { id, day, accountId: v.a, model: v.m, tokens: v.t };
}

export interface RedisResponseOwnersOptions {
  /** Default `tm:`. */
  prefix?: string;
  now?: () => number;
  /** With the archive: day buckets, kept in Redis `hotMs` past their day once shipped. Unset: 10-day buckets. */
  archived?: { hotMs: number };
}

export class RedisResponseOwners implements ResponseOwners {
  private readonly prefix: string;
  private readonly now: () => number;
  private readonly archived: { hotMs: number } | undefined;
  private shipped: { day: Promise<number>; at: number } | undefined;
  private readonly scripts;

  constructor(
    private readonly redis: Redis | Cluster,
    options: RedisResponseOwnersOptions = {},
  ) {
    this.prefix = options.prefix ?? 'tm:';
    this.now = options.now ?? Date.now;
    this.archived = options.archived;
    this.scripts = defineScripts(redis, { record: luaScript('owners/record.lua') });
  }

  async record(answer: StoredAnswer): Promise<void> {
    const size = this.archived ? DAY_MS : BUCKET_MS;
    const bucket = Math.floor(this.now() / size);
    // Long enough that nothing unshipped is ever dropped; the shipper shortens it once PostgreSQL has the day.
    const expireAt = ((bucket + 1) * size) / 1000 + RESPONSE_OWNER_SECONDS;
    const key = (id: string) => (this.archived ? dayKey(this.prefix, shardOf(id), bucket) : this.key(id, bucket));
    const fields = new Map<string, string[]>();
    const add = (id: string, value: string) => {
      const k = key(id);
      const list = fields.get(k);
      if (list) list.push(id, value);
      else fields.set(k, [id, value]);
    };
    const stored: Stored = { a: answer.accountId, m: answer.model, t: answer.tokens ?? null };
    add(answer.responseId, JSON.stringify(stored));
    const item = answer.tokens === undefined ? answer.accountId : `${answer.accountId} ${answer.tokens}`;
    for (const id of answer.itemIds) add(id, item);
    // One script per hash (one slot each), its fields and expiry together: a hash never lives on without its expiry.
    // Lua's unpack takes under 8,000 values (Redis 7): a long list goes in several calls.
    const calls: Promise<unknown>[] = [];
    for (const [k, list] of fields)
      for (let at = 0; at < list.length; at += SCRIPT_VALUES)
        calls.push(this.scripts.record([k], [JSON.stringify({ expire_at: expireAt, fields: list.slice(at, at + SCRIPT_VALUES) })]));
    await Promise.all(calls);
  }

  async get(responseId: string): Promise<ResponseOwner | undefined> {
    const value = (await this.lookup(responseId)) ?? (await this.redis.get(this.legacyKey(responseId)));
    if (value === null || !value.startsWith('{')) return undefined;
    const v = JSON.parse(value) as Stored;
    return { accountId: v.a, model: v.m, tokens: v.t ?? undefined };
  }

  async items(ids: readonly string[]): Promise<(ItemOwner | undefined)[]> {
    const values = await Promise.all(ids.map((id) => this.lookup(id)));
    return values.map((v) => (v === null ? undefined : ownerOf(v)));
  }

  async forget(responseId: string): Promise<void> {
    const keys = this.keys(responseId, this.today() - RESPONSE_OWNER_DAYS);
    await Promise.all([...keys.map((k) => this.redis.hdel(k, responseId)), this.redis.del(this.legacyKey(responseId))]);
  }

  /** The id's owner in the newest bucket that has it, or null. */
  private async lookup(id: string): Promise<string | null> {
    const keys = this.keys(id, this.archived ? await this.firstDay(this.archived.hotMs) : 0);
    const values = await Promise.all(keys.map((k) => this.redis.hget(k, id)));
    return values.find((v) => v !== null) ?? null;
  }

  /**
   * The hashes that can hold the id, newest first: with the archive, its days from `fromDay` on, then the 10-day
   * buckets written before the archive was on (until they expire).
   */
  private keys(id: string, fromDay: number): string[] {
    const shard = shardOf(id);
    const keys: string[] = [];
    if (this.archived) for (let day = this.today(); day >= fromDay; day--) keys.push(dayKey(this.prefix, shard, day));
    const bucket = Math.floor(this.now() / BUCKET_MS);
    for (let i = 0; i < BUCKETS; i++) keys.push(this.key(id, bucket - i));
    return keys;
  }

  /** The oldest day a lookup reads in Redis: the first not shipped, or the first still hot, whichever is older. */
  private async firstDay(hotMs: number): Promise<number> {
    const hot = Math.floor((this.now() - hotMs) / DAY_MS);
    return Math.max(this.today() - RESPONSE_OWNER_DAYS, Math.min((await this.shippedDay()) + 1, hot));
  }

  /** The shipped day (-Infinity: none), read again at most every SHIPPED_READ_MS. */
  private shippedDay(): Promise<number> {
    const now = this.now();
    if (!this.shipped || now - this.shipped.at > SHIPPED_READ_MS) {
      const day = this.redis.get(shipKeys(this.prefix).shipped).then((v) => (v === null ? -Infinity : Number(v)));
      // A failed read is not kept: the next lookup reads again.
      day.catch(() => {
        if (this.shipped?.day === day) this.shipped = undefined;
      });
      this.shipped = { day, at: now };
    }
    return this.shipped.day;
  }

  private today(): number {
    return Math.floor(this.now() / DAY_MS);
  }

  private key(id: string, bucket: number): string {
    return `${this.prefix}own:${shardOf(id)}:${bucket}`;
  }

  /** Where owners were kept before buckets (one 30-day key per response): read until they expire. */
  private legacyKey(responseId: string): string {
    return `${this.prefix}resp:${responseId}`;
  }
}
