/**
 * The memory store's API keys: creating, reading, listing, changing and revoking them, and finding one by its secret's
 * hash. The layer of MemoryStore (memory-store.ts) above the metering path, whose accounts and keys it shares.
 */
import { LimitWindow } from '../../limits/limit-window';
import type { KeyStore } from '../ports/key-store';
import { newId } from '../ids';
import type { CreateKeyResult, KeyPatch, KeyRecord, KeyRef, KeyState, NewKey } from '../records/key';
import { keyCreatedData, keyRevokedData } from '../records/events';
import { MemoryMetering } from './memory-metering';
import { emitEvent } from './memory-outbox';
import { capLeft, copyKey, zeroTotals, type Account, type Key } from './memory-records';

export abstract class MemoryKeys extends MemoryMetering implements KeyStore {
  /** Secret hash -> the key and its account. */
  private readonly byHash = new Map<string, KeyRef>();

  async createKey(accountId: string, input: NewKey): Promise<CreateKeyResult> {
    const acc = this.accounts.get(accountId);
    if (!acc) return { kind: 'account_not_found' };
    if (input.maxKeys !== undefined && acc.keys.length >= input.maxKeys) return { kind: 'key_limit', maxKeys: input.maxKeys };
    const record: Key['record'] = {
      id: newId('key'),
      accountId,
      name: input.name,
      prefix: input.prefix,
      created: this.seconds(),
      expiresAt: input.expiresAt,
      revokedAt: null,
      models: input.models ? [...input.models] : null,
      limitTokens: input.limitTokens ?? null,
      spentTokens: 0,
      lastUsed: null,
      limits: input.limits ?? null,
    };
    const key: Key = { record, budget: input.budget ?? null, reserved: 0, usage: zeroTotals() };
    this.keys.set(record.id, key);
    acc.keys.push(record.id);
    if (!this.byHash.has(input.hash)) this.byHash.set(input.hash, { keyId: record.id, accountId });
    const copy = copyKey(key, this.now());
    if (this.wants.types.has('key.created')) emitEvent(acc, 'key.created', keyCreatedData(copy));
    return { kind: 'created', key: copy };
  }

  async findKeyId(hash: string): Promise<KeyRef | undefined> {
    const ref = this.byHash.get(hash);
    return ref && { ...ref };
  }

  async getKey(keyId: string): Promise<KeyState | undefined> {
    const key = this.keys.get(keyId);
    if (!key) return undefined;
    const acc = this.accounts.get(key.record.accountId) as Account;
    this.purge(acc);
    return {
      ...copyKey(key, this.now()),
      balance: Math.min(this.available(acc), capLeft(key)),
      reserved: key.reserved,
      debt: acc.debt,
      packages: acc.packages.map((p) => ({ ...p })),
      usage: { ...key.usage },
      limitUse: key.record.limits && (key.window ?? new LimitWindow(this.windowMs)).use(key.record.limits, this.now()),
    };
  }

  async updateKey(keyId: string, patch: KeyPatch): Promise<KeyRecord | undefined> {
    const key = this.keys.get(keyId);
    if (!key) return undefined;
    if (patch.limits !== undefined) key.record.limits = patch.limits;
    if (patch.budget !== undefined) key.budget = patch.budget;
    return copyKey(key, this.now());
  }

  async listKeys(accountId?: string): Promise<KeyRecord[]> {
    const ids = accountId === undefined ? [...this.keys.keys()] : (this.accounts.get(accountId)?.keys ?? []);
    const now = this.now();
    return ids.map((id) => copyKey(this.keys.get(id) as Key, now));
  }

  async revokeKey(keyId: string): Promise<boolean> {
    const key = this.keys.get(keyId);
    if (!key) return false;
    if (key.record.revokedAt !== null) return true;
    key.record.revokedAt = this.seconds();
    const acc = this.accounts.get(key.record.accountId);
    if (acc && this.wants.types.has('key.revoked')) emitEvent(acc, 'key.revoked', keyRevokedData(keyId, acc.record.id));
    return true;
  }
}
