/** What every admin route file shares: its dependencies, the store-failure wrapper and the common field schemas. */
import type { Request, Response } from 'express';
import { z } from 'zod';
import { apiError, sendError, STORE_UNAVAILABLE, type ApiError } from '../http/errors';
import type { Catalog } from '../catalog/models';
import type { Logger } from '../observability/logger';
import type { AccountStore } from '../store/ports/account-store';
import type { KeyStore } from '../store/ports/key-store';
import type { UsageLedger } from '../store/ports/usage-ledger';

/** The ports the admin API manages: accounts, their keys, and the usage ledger. */
export type AdminStore = AccountStore & KeyStore & UsageLedger;

export interface AdminContext {
  store: AdminStore;
  catalog: () => Catalog;
  logger: Logger;
}

export type AdminHandler = (req: Request, res: Response) => Promise<void>;

/** Runs a handler; a store failure becomes 503 rather than a 500. */
export function adminRoute(logger: Logger, handler: AdminHandler): AdminHandler {
  return async (req, res) => {
    try {
      await handler(req, res);
    } catch (err) {
      logger.error({ err: (err as Error).message, route: req.path }, 'admin request failed on the store');
      sendError(res, STORE_UNAVAILABLE);
    }
  };
}

/** The parsed JSON body; an empty one reads as `{}`. */
export const body = (req: Request): unknown => (req.body === undefined ? {} : req.body);

export const nowSeconds = () => Math.floor(Date.now() / 1000);

export const tokens = z
  .number({ error: 'must be a whole number of tokens' })
  .int('must be a whole number of tokens')
  .positive('must be at least 1')
  .max(Number.MAX_SAFE_INTEGER);

export const futureTime = z
  .number({ error: 'must be a Unix time in seconds' })
  .int('must be a Unix time in seconds')
  .refine((t) => t > nowSeconds(), 'must be in the future');

export const name = z.string({ error: 'must be a string' }).max(200, 'must be at most 200 characters');

export const grantSchema = z.strictObject({
  tokens,
  expires_at: futureTime.nullish(),
});

export const keyNotFound = (id: string): ApiError => apiError('not_found', `No key with id '${id}'.`, 'id');
export const accountNotFound = (id: string): ApiError => apiError('not_found', `No account with id '${id}'.`, 'id');
