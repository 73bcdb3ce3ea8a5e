/**
 * The Redis store's API keys: creating, updating, reading, listing and revoking them, and the lookup indexes (secret
 * hash and key id to account) that live outside the accounts' slots. A part of RedisStore (redis-store.ts), writing its
 * events through the outbox.
 */
import { budgetStatus, encodeBudget } from '../../limits/budget';
import { encodeLimits } from '../../limits/limits';
import { newId } from '../ids';
import { keyCreatedData, keyRevokedData } from '../records/events';
import type { KeyStore } from '../ports/key-store';
import type { CreateKeyResult, KeyPatch, KeyRecord, KeyRef, KeyState, NewKey } from '../records/key';
import { luaScript, luaWithEvents } from './lua-scripts';
import { defineScripts } from './define-scripts';
import type { RedisOutbox } from './redis-outbox';
import type { RedisShared } from './redis-shared';
import { pairs, parseKeyRecord, parseKeyRef, parseKeyState, tuple } from './redis-records';

export class RedisKeys implements KeyStore {
  private readonly keyScripts;

  constructor(
    private readonly shared: RedisShared,
    private readonly outbox: RedisOutbox,
  ) {
    this.keyScripts = defineScripts(shared.redis, {
      tmCreateKey: luaScript('accounts/create-key.lua'),
      tmCreateKeyEv: luaWithEvents('accounts/create-key.lua', { after: 'events/after-create-key.lua' }),
      tmRevokeEv: luaWithEvents('accounts/revoke.lua', { before: 'events/before-revoke.lua', after: 'events/after-revoke.lua' }),
      tmUpdateAccount: luaScript('accounts/update-account.lua'),
      tmKeyState: luaScript('accounts/key-state.lua'),
      tmRevoke: luaScript('accounts/revoke.lua'),
    });
  }

  async createKey(accountId: string, input: NewKey): Promise<CreateKeyResult> {
    const id = newId('key');
    const created = Math.floor(Date.now() / 1000);
    const limit = input.limitTokens ?? null;
    const fields = {
      hash: input.hash,
      name: input.name,
      prefix: input.prefix,
      created,
      expires_at: input.expiresAt ?? 0,
      revoked: 0,
      models: input.models ? `\n${input.models.join('\n')}\n` : '',
      limit: limit ?? '',
      spent: 0,
      reserved: 0,
      last_used: '',
      rl: encodeLimits(input.limits),
      bg: encodeBudget(input.budget),
    };
    const made = await this.outbox.withEvents(
      this.keyScripts.tmCreateKey,
      this.keyScripts.tmCreateKeyEv,
      accountId,
      [this.shared.keys.slot(accountId, 'a'), this.shared.keys.slot(accountId, `k:${id}`), this.shared.keys.slot(accountId, 'keys')],
      { id, max_keys: input.maxKeys ?? -1, fields: Object.entries(fields).flat().map(String) },
      this.outbox.wanted('key.created')
        ? {
            key: {
              id: newId('evt'),
              data: keyCreatedData({ id, accountId, name: input.name, prefix: input.prefix, expiresAt: input.expiresAt }),
            },
          }
        : undefined,
    );
    if (Number(made) === 0) return { kind: 'account_not_found' };
    if (Number(made) === -1) return { kind: 'key_limit', maxKeys: input.maxKeys as number };
    // The lookup indexes live outside the account's slot; written last, so a half-made key is never reachable.
    await this.shared.redis.hset(this.shared.keys.global('ka'), id, accountId);
    await this.shared.redis.set(this.shared.keys.global(`h:${input.hash}`), `${id} ${accountId}`, 'NX');
    const key: KeyRecord = {
      id,
      accountId,
      name: input.name,
      prefix: input.prefix,
      created,
      expiresAt: input.expiresAt,
      revokedAt: null,
      models: input.models,
      limitTokens: limit,
      spentTokens: 0,
      lastUsed: null,
      limits: input.limits ?? null,
      budget: input.budget ? budgetStatus(input.budget, undefined, this.shared.now()) : null,
    };
    return { kind: 'created', key };
  }

  async updateKey(keyId: string, patch: KeyPatch): Promise<KeyRecord | undefined> {
    const accountId = await this.accountOfKey(keyId);
    if (accountId === undefined) return undefined;
    const fields: string[] = [];
    if (patch.limits !== undefined) fields.push('rl', encodeLimits(patch.limits));
    if (patch.budget !== undefined) fields.push('bg', encodeBudget(patch.budget));
    // UPDATE_ACCOUNT sets fields of a hash that exists, whichever hash of the slot it is given.
    const flat = tuple(
      await this.keyScripts.tmUpdateAccount([this.shared.keys.slot(accountId, `k:${keyId}`)], [JSON.stringify({ fields })]),
      'UPDATE_ACCOUNT',
    ) as string[];
    return flat.length === 0 ? undefined : parseKeyRecord(keyId, accountId, pairs(flat), this.shared.now());
  }

  async findKeyId(hash: string): Promise<KeyRef | undefined> {
    const value = await this.shared.redis.get(this.shared.keys.global(`h:${hash}`));
    return value === null ? undefined : parseKeyRef(value);
  }

  /** The account a key belongs to (the `ka` index); undefined for an unknown key. */
  async accountOfKey(keyId: string): Promise<string | undefined> {
    return (await this.shared.redis.hget(this.shared.keys.global('ka'), keyId)) ?? undefined;
  }

  async getKey(keyId: string): Promise<KeyState | undefined> {
    const accountId = await this.accountOfKey(keyId);
    if (accountId === undefined) return undefined;
    const reply = await this.keyScripts.tmKeyState(
      [
        this.shared.keys.slot(accountId, 'a'),
        this.shared.keys.slot(accountId, `k:${keyId}`),
        this.shared.keys.slot(accountId, 'p'),
        this.shared.keys.slot(accountId, 'r'),
        this.shared.keys.slot(accountId, 'ra'),
      ],
      [keyId, this.shared.windowMs],
    );
    const parts = tuple(reply, 'KEY_STATE');
    if (parts.length === 0) return undefined;
    return parseKeyState(keyId, accountId, parts as [string[], string[], string[], number, unknown[]], this.shared.now());
  }

  async listKeys(accountId?: string): Promise<KeyRecord[]> {
    const owners: [string, string][] =
      accountId === undefined
        ? Object.entries(await this.shared.redis.hgetall(this.shared.keys.global('ka')))
        : (await this.shared.redis.smembers(this.shared.keys.slot(accountId, 'keys'))).map((id) => [id, accountId]);
    const records = await Promise.all(
      owners.map(async ([id, owner]) => [id, owner, await this.shared.redis.hgetall(this.shared.keys.slot(owner, `k:${id}`))] as const),
    );
    const now = this.shared.now();
    return records
      .filter(([, , h]) => h.created !== undefined)
      .map(([id, owner, h]) => parseKeyRecord(id, owner, h, now))
      .sort((a, b) => a.created - b.created || a.id.localeCompare(b.id));
  }

  async revokeKey(keyId: string): Promise<boolean> {
    const accountId = await this.accountOfKey(keyId);
    if (accountId === undefined) return false;
    const reply = await this.outbox.withEvents(
      this.keyScripts.tmRevoke,
      this.keyScripts.tmRevokeEv,
      accountId,
      [this.shared.keys.slot(accountId, `k:${keyId}`)],
      {},
      this.outbox.wanted('key.revoked') ? { key: { id: newId('evt'), data: keyRevokedData(keyId, accountId) } } : undefined,
    );
    return Number(reply) === 1;
  }
}
