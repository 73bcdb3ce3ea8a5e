/** The shared session store on Redis (or Redis Cluster): sessions under their account's hash tag, one script each. */
import type Redis from 'ioredis';
import type { Cluster } from 'ioredis';
import { luaScript } from './lua-scripts';
import { defineScripts } from './define-scripts';
import type { AttemptResult, NewSession, SessionRecord } from '../records/session';
import type { SessionStore } from '../ports/session-store';

export interface RedisSessionStoreOptions {
  /** Prefix of every key we write. Default `tm:`. */
  prefix?: string;
}

export class RedisSessionStore implements SessionStore {
  private readonly prefix: string;
  private readonly run;

  constructor(
    private readonly redis: Redis | Cluster,
    options: RedisSessionStoreOptions = {},
  ) {
    this.prefix = options.prefix ?? 'tm:';
    this.run = defineScripts(redis, {
      tmSessionCreate: luaScript('sessions/session-create.lua'),
      tmSessionTouch: luaScript('sessions/session-touch.lua'),
      tmSessionDelete: luaScript('sessions/session-delete.lua'),
      tmSessionDeleteAll: luaScript('sessions/session-delete-all.lua'),
      tmSessionKeepOnly: luaScript('sessions/session-keep-only.lua'),
      tmAttemptTake: luaScript('sessions/attempt-take.lua'),
      tmAttemptRefund: luaScript('sessions/attempt-refund.lua'),
    });
  }

  private sessionKey(accountId: string, hash: string): string {
    return `${this.prefix}{${accountId}}:ss:${hash}`;
  }
  private setKey(accountId: string): string {
    return `${this.prefix}{${accountId}}:ss`;
  }
  private bucketKey(bucket: string): string {
    return `${this.prefix}lf:${bucket}`;
  }

  async createSession(input: NewSession): Promise<void> {
    await this.run.tmSessionCreate(
      [this.sessionKey(input.accountId, input.hash), this.setKey(input.accountId)],
      [input.hash, input.idleMs, input.stamp, input.maxMs ?? ''],
    );
  }

  async touchSession(accountId: string, hash: string, idleMs: number, maxMs?: number): Promise<SessionRecord | undefined> {
    const reply = await this.run.tmSessionTouch([this.sessionKey(accountId, hash), this.setKey(accountId)], [idleMs, maxMs ?? '', hash]);
    if (reply === null) return undefined;
    const [created, lastSeen, stamp] = reply as [string, string, string | null];
    return { accountId, created: Number(created), lastSeen: Number(lastSeen), stamp: stamp ?? '' };
  }

  /** One read of one key: the session's key expires with its idle time, so a key still there is a live session. */
  async readSession(accountId: string, hash: string, maxMs?: number): Promise<SessionRecord | undefined> {
    const key = this.sessionKey(accountId, hash);
    const [created, lastSeen, stamp, createdMs] = await this.redis.hmget(key, 'created', 'last_seen', 'stamp', 'created_ms');
    if (created === null) return undefined;
    // Read-only, so this process's clock judges the lifetime (TOUCH, which ends the session, uses the server's).
    const started = createdMs !== null ? Number(createdMs) : Number(created) * 1000;
    if (maxMs !== undefined && started + maxMs <= Date.now()) return undefined;
    return { accountId, created: Number(created), lastSeen: Number(lastSeen), stamp: stamp ?? '' };
  }

  async deleteSession(accountId: string, hash: string): Promise<boolean> {
    return Number(await this.run.tmSessionDelete([this.sessionKey(accountId, hash), this.setKey(accountId)], [hash])) === 1;
  }

  async deleteAccountSessions(accountId: string): Promise<number> {
    return Number(await this.run.tmSessionDeleteAll([this.setKey(accountId)], [this.sessionKey(accountId, '')]));
  }

  async keepOnlySession(accountId: string, hash: string, stamp: string): Promise<number> {
    const keys = [this.setKey(accountId), this.sessionKey(accountId, hash)];
    return Number(await this.run.tmSessionKeepOnly(keys, [hash, this.sessionKey(accountId, ''), stamp]));
  }

  async takeAttempt(bucket: string, windowMs: number, max: number): Promise<AttemptResult> {
    const [counted, ttl] = (await this.run.tmAttemptTake([this.bucketKey(bucket)], [windowMs, max])) as [number, number?];
    return counted === 1 ? { allowed: true } : { allowed: false, retryAfterMs: Number(ttl) };
  }

  async refundAttempt(bucket: string): Promise<void> {
    await this.run.tmAttemptRefund([this.bucketKey(bucket)], []);
  }

  async clearAttempts(bucket: string): Promise<void> {
    await this.redis.del(this.bucketKey(bucket));
  }

  /** The connection is shared with the main store, which closes it. */
  async close(): Promise<void> {}
}
