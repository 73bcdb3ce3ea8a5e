/**
 * The check the OpenAI routes that reserve nothing (`/v1/models`, the Responses API's stored state) make of a
 * credential, as the reserve step makes it on the metered ones: a key neither revoked nor expired, of an active
 * account; otherwise `401 invalid_api_key`, as on completions. The key it read is left in the request's context (`liveKey`).
 */
import type { RequestHandler } from 'express';
import type { AccountStore } from '../store/ports/account-store';
import type { KeyLookup } from '../store/ports/key-lookup';
import { apiError, sendError } from './errors';
import { callerOf, keyChecked } from './request-context';
import type { StoreGuard } from './store-guard';

export interface LiveCredentialOptions {
  keys: KeyLookup;
  /** Where the account's status is read; absent beside a host's serving store, whose login vouches for the account. */
  accounts?: Pick<AccountStore, 'getAccount'>;
  guard: StoreGuard;
}

export function liveCredential(options: LiveCredentialOptions): RequestHandler {
  const { keys, accounts, guard } = options;
  return guard(async function requireLiveCredential(_req, res, next) {
    const { accountId, keyId } = callerOf(res);
    const [key, account] = await Promise.all([keyId === null ? null : keys.getKey(keyId), accounts?.getAccount(accountId)]);
    if (keyId !== null) {
      const expired = key?.expiresAt != null && key.expiresAt <= Math.floor(Date.now() / 1000);
      if (!key || key.revokedAt !== null || expired) {
        const why = !key ? 'unknown' : key.revokedAt !== null ? 'revoked' : 'expired';
        return sendError(res, apiError('invalid_api_key', `This API key is ${why}.`));
      }
    }
    if (accounts && account?.status !== 'active') {
      const whose = keyId === null ? 'This account' : "This API key's account";
      return sendError(res, apiError('invalid_api_key', `${whose} is ${account ? 'disabled' : 'unknown'}.`));
    }
    keyChecked(res, key ?? null);
    next();
  });
}
