/** Bearer-key authentication: the secret is hashed at once and only the hash is looked up. */
import type { IncomingMessage } from 'node:http';
import type { NextFunction } from 'express';
import type { RoutedRequest, RoutedResponse } from './handler-chain';
import { apiError, sendError, STORE_UNAVAILABLE } from './errors';
import { hashKey, isWellFormedKey, requestBearerToken } from './keys';
import { authenticated } from './request-context';
import type { Logger } from '../observability/logger';
import type { KeyLookup } from '../store/ports/key-lookup';
import type { KeyRef } from '../store/records/key';

export interface AuthOptions {
  store: KeyLookup;
  logger: Logger;
  /**
   * Hash-to-ids mappings kept in memory (they never change; revocation and a disabled account are checked atomically
   * at reserve). Default 10000.
   */
  cacheSize?: number;
  /** Where a request's key is read. Default: `Authorization: Bearer` (requestBearerToken). */
  credential?: (req: IncomingMessage) => string | undefined;
  /** How the 401 tells a client to pass its key (the headers `credential` reads). Default: `"Authorization: Bearer sk-..."`. */
  passKeyAs?: string;
}

const BEARER = '"Authorization: Bearer sk-..."';

/** Records the caller (request-context.ts: the key's id and its account), or answers 401 (no, malformed or unknown key) or 503 (store unreachable). */
export function bearerAuth(options: AuthOptions) {
  const cacheSize = options.cacheSize ?? 10_000;
  const cache = new Map<string, KeyRef>();
  const { store, logger } = options;
  const credential = options.credential ?? requestBearerToken;
  const invalid = apiError('invalid_api_key', `Incorrect API key provided. Pass a valid key as ${options.passKeyAs ?? BEARER}.`);

  return async function authenticate(req: RoutedRequest, res: RoutedResponse, next: NextFunction): Promise<void> {
    const secret = credential(req);
    if (secret === undefined || !isWellFormedKey(secret)) return sendError(res, invalid);
    const hash = hashKey(secret);
    let ref = cache.get(hash);
    if (ref === undefined) {
      try {
        ref = await store.findKeyId(hash);
      } catch (err) {
        logger.error({ err: (err as Error).message }, 'store unreachable during authentication');
        return sendError(res, STORE_UNAVAILABLE);
      }
      if (ref === undefined) return sendError(res, invalid);
      if (cache.size >= cacheSize) cache.delete(cache.keys().next().value as string);
      cache.set(hash, ref);
    }
    authenticated(res, { accountId: ref.accountId, keyId: ref.keyId });
    next();
  };
}
