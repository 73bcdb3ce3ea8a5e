/** Turns what was bought (a product, or a code's tokens) into a package credited exactly once per once-id. */
import type { GrantResult } from '../store/records/account';
import type { AccountStore } from '../store/ports/account-store';
import type { TokenPackage, UnixSeconds } from '../store/records/common';

export interface Purchase {
  tokens: number;
  validDays: number | null;
}

export type CreditResult =
  | { kind: 'credited'; package: TokenPackage; duplicate: boolean }
  | { kind: 'account_not_found' }
  /** The store took no such grant: too many tokens for one grant, or for the account to hold. Nothing credited. */
  | { kind: 'not_creditable'; reason: 'invalid_tokens' | 'balance_limit' };

/** Credits the purchase to the account; a once-id already used credits nothing and answers the package it credited. */
export async function creditOnce(
  store: Pick<AccountStore, 'grantPackage'>,
  accountId: string,
  purchase: Purchase,
  once: string,
): Promise<CreditResult> {
  const now: UnixSeconds = Math.floor(Date.now() / 1000);
  const expiresAt = purchase.validDays === null ? null : now + purchase.validDays * 86_400;
  const result: GrantResult = await store.grantPackage(accountId, { tokens: purchase.tokens, expiresAt }, { once });
  switch (result.kind) {
    case 'granted':
      return { kind: 'credited', package: result.package, duplicate: false };
    case 'duplicate':
      // The first grant's package; should a store not keep it, the purchase itself describes it.
      return {
        kind: 'credited',
        package: result.package ?? { id: once, tokens: purchase.tokens, remaining: purchase.tokens, expiresAt, created: now },
        duplicate: true,
      };
    case 'account_not_found':
      return result;
    case 'invalid_tokens':
    case 'balance_limit':
      return { kind: 'not_creditable', reason: result.kind };
  }
}
