/** What every operator route file shares: its dependencies (the store-failure guard among them) and its refusals. */
import type { Request } from 'express';
import { apiError, type ApiError } from '../http/errors';
import type { StoreGuard } from '../http/store-guard';
import type { Catalog } from '../catalog/models';
import type { Logger } from '../observability/logger';
import type { AccountStore } from '../store/ports/account-store';
import type { CommerceStore } from '../store/ports/commerce-store';
import type { KeyStore } from '../store/ports/key-store';
import type { UsageLedger } from '../store/ports/usage-ledger';
import { MAX_UNSPENT_TOKENS } from '../store/records/account';
import type { LedgerStatus } from '../ledger-archive/ledger-status';

/** The ports the operator's routes manage: accounts, their keys, and the usage ledger. */
export type AdminStore = AccountStore & KeyStore & UsageLedger;

export interface AdminContext {
  store: AdminStore;
  /** The product center's products and redemption codes. */
  commerce: CommerceStore;
  catalog: () => Catalog;
  logger: Logger;
  /** Wraps each handler: a store failure answers 503. */
  guard: StoreGuard;
  /** The most keys an account may have (MAX_KEYS_PER_ACCOUNT). */
  maxKeysPerAccount: number;
  /** The ledger archive's state; unset: no archive. */
  ledgerStatus?: () => Promise<LedgerStatus>;
}

/** The parsed JSON body; an empty one reads as `{}`. */
export const body = (req: Request): unknown => (req.body === undefined ? {} : req.body);

/** A grant the store refused because the account would hold more tokens than it can count exactly. */
export const BALANCE_LIMIT: ApiError = apiError(
  'invalid_request_error',
  `Invalid 'tokens': this grant would take the account past ${MAX_UNSPENT_TOKENS} unspent tokens (2^53 - 1), the most it may hold.`,
  'tokens',
);

export const keyNotFound = (id: string): ApiError => apiError('not_found', `No key with id '${id}'.`, 'id');
export const accountNotFound = (id: string): ApiError => apiError('not_found', `No account with id '${id}'.`, 'id');
