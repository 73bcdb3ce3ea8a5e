/**
 * Redeeming a code: claim it for the account in one atomic step (exactly one account ever wins it), then credit its
 * package with the once-id `code:<id>`, then mark it credited. A crash between the steps loses nothing: the same
 * account's retry resumes the claim, and the once-id keeps the credit single.
 */
import type { CommerceStore } from '../store/ports/commerce-store';
import type { AccountStore } from '../store/ports/account-store';
import type { TokenPackage } from '../store/records/common';
import { hashCode } from './codes';
import { creditOnce } from './grants';

export type RedeemResult =
  | { kind: 'redeemed'; package: TokenPackage }
  | { kind: 'used' }
  | { kind: 'expired' }
  | { kind: 'unknown' }
  | { kind: 'account_not_found' }
  /** Claimed, but the account cannot take its tokens now (see CreditResult); its retry resumes the claim. */
  | { kind: 'not_creditable' };

export async function redeemCode(
  deps: { store: Pick<AccountStore, 'grantPackage'>; commerce: CommerceStore },
  accountId: string,
  code: string,
): Promise<RedeemResult> {
  const claim = await deps.commerce.claimCode(hashCode(code), accountId);
  if (claim.kind !== 'claimed') return claim;
  const credit = await creditOnce(deps.store, accountId, claim.code, `code:${claim.code.id}`);
  if (credit.kind === 'account_not_found') return credit;
  if (credit.kind === 'not_creditable') return { kind: 'not_creditable' };
  await deps.commerce.markCredited(claim.code.id);
  return { kind: 'redeemed', package: credit.package };
}
