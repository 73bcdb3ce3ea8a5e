/** An API key as its account holder sees and makes it in the self-service API (`/console/api/keys`). */
import { z } from 'zod';
import { budgetWire } from '../limits/budget';
import { limitsObject, limitsSchema, limitsWire } from '../limits/limits';
import type { KeyRecord } from '../store/records/key';
import { budgetObject, budgetSchema } from './budget';
import { futureTime, list, tokenAmount, tokenCount, unixTime } from './fields';

/** Never the secret, only its first characters. */
export const ownKeySchema = z.strictObject({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  created: unixTime,
  expires_at: unixTime.nullable(),
  revoked_at: unixTime.nullable(),
  last_used: unixTime.nullable(),
  /** Tokens charged to this key so far. */
  spent: tokenCount,
  /** The key's own cap (`limit_tokens`); null: none. */
  limit_tokens: tokenCount.nullable(),
  models: z.array(z.string()).nullable(),
  /** The key's rate and concurrency limits; null: none. */
  limits: limitsWire.nullable(),
  /** The key's budget, with what the current period used; null: none. */
  budget: budgetSchema.nullable(),
});
export type OwnKeyObject = z.infer<typeof ownKeySchema>;

export function ownKeyObject(k: KeyRecord): OwnKeyObject {
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    created: k.created,
    expires_at: k.expiresAt,
    revoked_at: k.revokedAt,
    last_used: k.lastUsed,
    spent: k.spentTokens,
    limit_tokens: k.limitTokens,
    models: k.models,
    limits: k.limits && limitsObject(k.limits),
    budget: k.budget && budgetObject(k.budget),
  };
}

export const ownKeyListSchema = list(ownKeySchema);

/** `POST /console/api/keys` → 201: the key and, this once, its secret. */
export const createdOwnKeySchema = ownKeySchema.extend({ key: z.string() });
export type CreatedOwnKeyObject = z.infer<typeof createdOwnKeySchema>;

/** `DELETE /console/api/keys/:id`. */
export const deletedKeySchema = z.strictObject({ id: z.string(), deleted: z.literal(true) });
export type DeletedKeyObject = z.infer<typeof deletedKeySchema>;

/** `POST /console/api/keys`. */
export const createOwnKeyRequest = z.strictObject({
  name: z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters'),
  expires_at: futureTime.nullish(),
  models: z
    .array(z.string({ error: 'must be a model id' }).min(1), { error: 'must be an array of model ids' })
    .min(1, 'must name at least one model')
    .max(100, 'must name at most 100 models')
    .nullish(),
  /** The most this key may ever be charged, in tokens; unset: only the account's balance limits it. */
  limit_tokens: tokenAmount.nullish(),
  /** The key's own rate and concurrency limits (an account holder may restrict a key); unset: none. */
  limits: limitsSchema.nullish(),
  /** The key's budget per UTC day, week or month; unset: none. */
  budget: budgetWire.nullish(),
});
export type CreateOwnKeyRequest = z.input<typeof createOwnKeyRequest>;

/** `PATCH /console/api/keys/:id`: a new budget for one of the holder's keys (null removes it). */
export const updateOwnKeyRequest = z.strictObject({ budget: budgetWire.nullable() });
export type UpdateOwnKeyRequest = z.input<typeof updateOwnKeyRequest>;
