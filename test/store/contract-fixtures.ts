/** What the store contract tests feed the stores: reserve requests, settlements and accounts, and small readers. */
import type { AccountStore } from '../../src/store/ports/account-store';
import type { GrantResult } from '../../src/store/records/account';
import type { TokenPackage } from '../../src/store/records/common';
import type { ReserveRequest, Settlement } from '../../src/store/records/metering';

/** A key as the helpers return it (its id and its account's), or an account alone (`id` null: a request without a key). */
export type Key = { id: string | null; accountId: string };

export const reserveReq = (key: Key, requestId: string, over: Partial<ReserveRequest> = {}): ReserveRequest => ({
  accountId: key.accountId,
  keyId: key.id,
  requestId,
  model: 'acme/m1',
  fixed: 10,
  unit: 1,
  allowance: 100,
  leaseMs: 60_000,
  ...over,
});

export const settlement = (key: Key, requestId: string, charged: number, over: Partial<Settlement> = {}): Settlement => ({
  accountId: key.accountId,
  keyId: key.id,
  requestId,
  model: 'acme/m1',
  promptTokens: 10,
  completionTokens: charged - 10,
  chargedTokens: charged,
  estimated: false,
  stream: false,
  status: 200,
  ...over,
});

/** The package a grant credited; fails the test when it credited none. */
export function granted(result: GrantResult): TokenPackage {
  if (result.kind !== 'granted') throw new Error(`expected a grant, got ${result.kind}`);
  return result.package;
}

export const member = (email: string | null, name = 'Ada') =>
  ({ email, name, passwordHash: email ? 'scrypt$stub' : null, role: 'member', status: 'active' }) as const;

export async function accountId(store: AccountStore, email: string | null, name?: string): Promise<string> {
  const created = await store.createAccount(member(email, name));
  if (created.kind !== 'created') throw new Error(created.kind);
  return created.account.id;
}

export const nowS = () => Math.floor(Date.now() / 1000);
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
