/** An API key as the operator sees and makes it (`/admin/keys`, `/admin/accounts/:id/keys`): never its secret. */
import { z } from 'zod';
import { budgetWire } from '../limits/budget';
import { apiError, type ApiError } from '../http/errors';
import { limitsObject, limitsSchema, limitsWire } from '../limits/limits';
import { keyStatus, type KeyRecord, type KeyState } from '../store/records/key';
import { displayName, futureTime, grantAmount, list, nowSeconds, tokenAmount, tokenCount, unixTime } from './fields';
import { budgetObject, budgetSchema } from './budget';
import { balanceFields, holdingsFields, holdingsObject } from './holdings';

export const keySchema = z.strictObject({
  id: z.string(),
  account_id: z.string(),
  name: z.string(),
  /** The secret's first characters, for telling keys apart. */
  prefix: z.string(),
  created: unixTime,
  expires_at: unixTime.nullable(),
  revoked_at: unixTime.nullable(),
  /** The only models the key may use; null: all. */
  models: z.array(z.string()).nullable(),
  /** The most this key may ever be charged; null: no cap of its own. */
  limit_tokens: tokenCount.nullable(),
  spent_tokens: tokenCount,
  last_used: unixTime.nullable(),
  status: z.enum(['active', 'revoked', 'expired']),
  /** `{rpm?, tpm?, max_concurrent?}`; null: none. */
  limits: limitsWire.nullable(),
  /** The key's budget, with what the current period used; null: none. */
  budget: budgetSchema.nullable(),
});
export type KeyObject = z.infer<typeof keySchema>;

/**
 * GET /admin/keys' query: the keys whose name, prefix or id holds `search` (any case), of one account or of all, in
 * the store's order, at most `limit` of them (unset: all).
 */
export const keyListQuery = z.strictObject({
  search: z.string().max(254).optional(),
  account_id: z.string().min(1).optional(),
  limit: z.coerce
    .number<string | number>({ error: 'must be a number' })
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(1000, 'must be at most 1000')
    .optional(),
});
export type KeyListQuery = z.input<typeof keyListQuery>;

/** Whether the key's name, prefix or id holds `search`, any case. */
export function keyMatches(k: Pick<KeyRecord, 'id' | 'name' | 'prefix'>, search: string): boolean {
  const s = search.toLowerCase();
  return [k.name, k.prefix, k.id].some((field) => field.toLowerCase().includes(s));
}

export function keyObject(k: KeyRecord): KeyObject {
  return {
    id: k.id,
    account_id: k.accountId,
    name: k.name,
    prefix: k.prefix,
    created: k.created,
    expires_at: k.expiresAt,
    revoked_at: k.revokedAt,
    models: k.models,
    limit_tokens: k.limitTokens,
    spent_tokens: k.spentTokens,
    last_used: k.lastUsed,
    status: keyStatus(k, nowSeconds()),
    limits: k.limits && limitsObject(k.limits),
    budget: k.budget && budgetObject(k.budget),
  };
}

/** `GET /admin/keys/:id`: `balance` is what the account offers the key (its balance, within the key's cap). */
export const keyDetailSchema = keySchema.extend({ ...balanceFields, ...holdingsFields });
export type KeyDetailObject = z.infer<typeof keyDetailSchema>;

export function keyDetailObject(k: KeyState): KeyDetailObject {
  return { ...keyObject(k), balance: k.balance, reserved: k.reserved, debt: k.debt, ...holdingsObject(k) };
}

/** A key just made: its secret in `key`, shown this once, and what its account offers it. */
export const createdKeySchema = keySchema.extend({ key: z.string(), balance: z.number().int() });
export type CreatedKeyObject = z.infer<typeof createdKeySchema>;

export const keyListSchema = list(keySchema);

/** `DELETE /admin/keys/:id`. */
export const revokedKeySchema = z.strictObject({ id: z.string(), revoked: z.literal(true), revoked_at: unixTime });
export type RevokedKeyObject = z.infer<typeof revokedKeySchema>;

/** What a new key may carry, whichever operator route makes it. */
export const newKeyFields = {
  name: displayName.optional(),
  expires_at: futureTime.nullish(),
  models: z
    .array(z.string({ error: 'must be a model id' }), { error: 'must be an array of model ids' })
    .min(1, 'must name at least one model')
    .nullish(),
  limit_tokens: tokenAmount.nullish(),
  /** `{rpm?, tpm?, max_concurrent?}`: the key's own rate and concurrency limits. */
  limits: limitsSchema.nullish(),
  /** `{tokens, period}`: the key's budget per UTC day, week or month. */
  budget: budgetWire.nullish(),
};

/** A first package for the key's account. */
const firstTokens = grantAmount.optional();

/** `POST /admin/accounts/:id/keys`. */
export const accountKeyRequest = z.strictObject({ ...newKeyFields, tokens: firstTokens });
export type AccountKeyRequest = z.input<typeof accountKeyRequest>;

/** `POST /admin/keys`: in the account named, or in a new account of its own. */
export const createKeyRequest = z.strictObject({
  ...newKeyFields,
  account_id: z.string({ error: 'must be an account id' }).min(1).optional(),
  tokens: firstTokens,
});
export type CreateKeyRequest = z.input<typeof createKeyRequest>;

/** `PATCH /admin/keys/:id`: the limits (null or {} removes them), the budget (null removes it), or both. */
export const patchKeyRequest = z
  .strictObject({ limits: limitsSchema.nullable().optional(), budget: budgetWire.nullable().optional() })
  .refine((p) => p.limits !== undefined || p.budget !== undefined, 'must change limits or budget');
export type PatchKeyRequest = z.input<typeof patchKeyRequest>;

/** The refusal of a key beyond the account's limit, answered by the operator's and the console's routes alike. */
export const keyLimit = (maxKeys: number): ApiError =>
  apiError(
    'invalid_request_error',
    `This account already has ${maxKeys} API keys, the most it may have (revoked and expired keys count); ask the operator.`,
  );
