/**
 * The memory store's API keys: creating, reading, listing, changing and revoking them, and finding one by its secret's
 * hash. A part of MemoryStore (memory-store.ts), over its shared state (memory-state.ts).
 */
import { LimitWindow } from '../../limits/limit-window';
import type { KeyStore } from '../ports/key-store';
import { newId } from '../ids';
import type { CreateKeyResult, KeyPatch, KeyRecord, KeyRef, KeyState, NewKey } from '../records/key';
import { keyCreatedData, keyRevokedData } from '../records/events';
import type { MemoryState } from './memory-state';
import { emitEvent } from './memory-outbox';
import { capLeft, copyKey, zeroTotals, type Account, type Key } from './memory-records';

export class MemoryKeys implements KeyStore {
  /** Secret hash -> the key and its account. */
  private readonly byHash = new Map<string, KeyRef>();

  constructor(private readonly state: MemoryState) {}

  async createKey(accountId: string, input: NewKey): Promise<CreateKeyResult> {
    const acc = this.state.accounts.get(accountId);
    if (!acc) return { kind: 'account_not_found' };
    if (input.maxKeys !== undefined && acc.keys.length >= input.maxKeys) return { kind: 'key_limit', maxKeys: input.maxKeys };
    const record: Key['record'] = {
      id: newId('key'),
      accountId,
      name: input.name,
      prefix: input.prefix,
      created: this.state.seconds(),
      expiresAt: input.expiresAt,
      revokedAt: null,
      models: input.models ? [...input.models] : null,
      limitTokens: input.limitTokens ?? null,
      spentTokens: 0,
      lastUsed: null,
      limits: input.limits ?? null,
    };
    const key: Key = { record, budget: input.budget ?? null, reserved: 0, usage: zeroTotals() };
    this.state.keys.set(record.id, key);
    acc.keys.push(record.id);
    if (!this.byHash.has(input.hash)) this.byHash.set(input.hash, { keyId: record.id, accountId });
    const copy = copyKey(key, this.state.now());
    if (this.state.wants.types.has('key.created')) emitEvent(acc, 'key.created', keyCreatedData(copy));
    return { kind: 'created', key: copy };
  }

  async findKeyId(hash: string): Promise<KeyRef | undefined> {
    const ref = this.byHash.get(hash);
    return ref && { ...ref };
  }

  async getKey(keyId: string): Promise<KeyState | undefined> {
    const key = this.state.keys.get(keyId);
    if (!key) return undefined;
    const acc = this.state.accounts.get(key.record.accountId) as Account;
    this.state.purge(acc);
    return {
      ...copyKey(key, this.state.now()),
      balance: Math.min(this.state.available(acc), capLeft(key)),
      reserved: key.reserved,
      debt: acc.debt,
      packages: acc.packages.map((p) => ({ ...p })),
      usage: { ...key.usage },
      limitUse: key.record.limits && (key.window ?? new LimitWindow(this.state.windowMs)).use(key.record.limits, this.state.now()),
    };
  }

  async updateKey(keyId: string, patch: KeyPatch): Promise<KeyRecord | undefined> {
    const key = this.state.keys.get(keyId);
    if (!key) return undefined;
    if (patch.limits !== undefined) key.record.limits = patch.limits;
    if (patch.budget !== undefined) key.budget = patch.budget;
    return copyKey(key, this.state.now());
  }

  async listKeys(accountId?: string): Promise<KeyRecord[]> {
    const ids = accountId === undefined ? [...this.state.keys.keys()] : (this.state.accounts.get(accountId)?.keys ?? []);
    const now = this.state.now();
    return ids.map((id) => copyKey(this.state.keys.get(id) as Key, now));
  }

  async revokeKey(keyId: string): Promise<boolean> {
    const key = this.state.keys.get(keyId);
    if (!key) return false;
    if (key.record.revokedAt !== null) return true;
    key.record.revokedAt = this.state.seconds();
    const acc = this.state.accounts.get(key.record.accountId);
    if (acc && this.state.wants.types.has('key.revoked')) emitEvent(acc, 'key.revoked', keyRevokedData(keyId, acc.record.id));
    return true;
  }
}
