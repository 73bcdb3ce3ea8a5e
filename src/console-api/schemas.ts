/**
 * The self-service API's request and response shapes (`/console/api/…`), as zod schemas. The server validates with
 * them and the browser console imports them, so this file imports zod only: nothing from the server.
 * JSON in snake_case, times as Unix seconds, token amounts as whole numbers.
 */
import { z } from 'zod';

/** Shortest password accepted at registration (and for a password change). */
export const PASSWORD_MIN_LENGTH = 10;
/** Longer passwords are refused, so a megabyte "password" cannot make the KDF work for nothing. */
export const PASSWORD_MAX_LENGTH = 1024;

const unixTime = z.number().int();
const tokenCount = z.number().int().nonnegative();

/** Emails are compared trimmed and lower-cased, so `A@x.org` and `a@x.org ` are one account. */
export const email = z
  .string({ error: 'must be a string' })
  .trim()
  .toLowerCase()
  .max(254, 'must be at most 254 characters')
  .pipe(z.email({ error: 'must be an email address' }));

export const password = z
  .string({ error: 'must be a string' })
  .min(PASSWORD_MIN_LENGTH, `must be at least ${PASSWORD_MIN_LENGTH} characters`)
  .max(PASSWORD_MAX_LENGTH, `must be at most ${PASSWORD_MAX_LENGTH} characters`);

// ---------------------------------------------------------------------------------------------------------------
// Requests

/** `POST /console/api/register`. */
export const registerRequest = z.strictObject({
  email,
  password,
  name: z.string({ error: 'must be a string' }).trim().max(200, 'must be at most 200 characters').optional(),
});

/** `POST /console/api/login`: the password is not length-checked here, so a wrong one is just wrong. */
export const loginRequest = z.strictObject({
  email,
  password: z.string({ error: 'must be a string' }).min(1, 'must not be empty').max(PASSWORD_MAX_LENGTH),
});

/** `POST /console/api/logout`: `everywhere` ends every session of the account, not only this one. */
export const logoutRequest = z.strictObject({
  everywhere: z.boolean({ error: 'must be true or false' }).optional(),
});

const limitCount = (what: string) =>
  z
    .number({ error: `must be a whole number of ${what}` })
    .int(`must be a whole number of ${what}`)
    .positive('must be at least 1')
    .max(1_000_000_000, 'must be at most 1000000000');

/**
 * Rate and concurrency limits as every API and the models file write them (src/limits/limits.ts reads them): requests
 * per minute, tokens per minute, requests in flight; a field left out is no limit.
 */
export const limitsRequest = z.strictObject({
  rpm: limitCount('requests').optional(),
  tpm: limitCount('tokens').optional(),
  max_concurrent: limitCount('requests').optional(),
});

/** `POST /console/api/keys`. */
export const createKeyRequest = z.strictObject({
  name: z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters'),
  expires_at: z
    .number({ error: 'must be a Unix time in seconds' })
    .int('must be a Unix time in seconds')
    .refine((t) => t > Date.now() / 1000, 'must be in the future')
    .nullish(),
  models: z
    .array(z.string({ error: 'must be a model id' }).min(1), { error: 'must be an array of model ids' })
    .min(1, 'must name at least one model')
    .max(100, 'must name at most 100 models')
    .nullish(),
  /** The most this key may ever be charged, in tokens; unset: only the account's balance limits it. */
  limit_tokens: z
    .number({ error: 'must be a whole number of tokens' })
    .int('must be a whole number of tokens')
    .positive('must be at least 1')
    .max(Number.MAX_SAFE_INTEGER)
    .nullish(),
  /** The key's own rate and concurrency limits (an account holder may restrict a key); unset: none. */
  limits: limitsRequest.nullish(),
});

/** A page's size in a list query (`limit`): 1 to 1000, default 100. Shared with the admin API's lists. */
export const pageLimit = z.coerce
  .number({ error: 'must be a number' })
  .int('must be a whole number')
  .min(1, 'must be at least 1')
  .max(1000, 'must be at most 1000')
  .default(100);

const unixQuery = z.coerce.number({ error: 'must be a Unix time in seconds' }).int('must be a Unix time in seconds').nonnegative();

/** A usage record's `cursor`, given back to read on from it. */
const cursor = z.string().regex(/^\d+-\d+$/, 'must be a cursor from an earlier page');

/** `GET /console/api/usage` query: the same parameters as `/admin/usage`, within the account's own ledger. */
export const usageQuery = z.strictObject({
  key_id: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  since: unixQuery.optional(),
  until: unixQuery.optional(),
  /** Records after this cursor, the oldest `limit` of them: to read on as new records arrive. */
  after: cursor.optional(),
  /** Records before this cursor, the newest `limit` of them: to page back in time. */
  before: cursor.optional(),
  limit: pageLimit,
});

/** `GET /console/api/usage/daily` query. */
export const dailyUsageQuery = z.strictObject({
  days: z.coerce
    .number({ error: 'must be a number of days' })
    .int('must be a whole number of days')
    .min(1, 'must be at least 1')
    .max(366, 'must be at most 366')
    .default(30),
});

/** `POST /console/api/redeem`. */
export const redeemRequest = z.strictObject({
  code: z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters'),
});

/** `POST /console/api/checkout`. */
export const checkoutRequest = z.strictObject({
  product_id: z.string({ error: 'must be a product id' }).min(1, 'must not be empty').max(100),
});

// ---------------------------------------------------------------------------------------------------------------
// Responses

export const accountRole = z.enum(['member', 'admin']);
export const accountStatus = z.enum(['active', 'disabled']);

/** The account as its holder sees it (register, login). */
export const account = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string(),
  role: accountRole,
  status: accountStatus,
  created: unixTime,
});

export const tokenPackage = z.object({
  id: z.string(),
  tokens: tokenCount,
  remaining: tokenCount,
  expires_at: unixTime.nullable(),
  created: unixTime,
});

export const usageTotals = z.object({
  requests: tokenCount,
  prompt_tokens: tokenCount,
  completion_tokens: tokenCount,
  charged_tokens: tokenCount,
});

/** `GET /console/api/me`. */
export const me = account.extend({
  /** Usable tokens: unexpired package remainders, less debt and open reservations. */
  balance: z.number().int(),
  reserved: tokenCount,
  debt: tokenCount,
  packages: z.array(tokenPackage),
  usage: usageTotals,
});

/** A key as its owner sees it: never the secret, only its first characters. */
export const apiKey = z.object({
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
  limits: limitsRequest.nullable(),
});

/** `POST /console/api/keys` → 201: the key and, this once, its secret. */
export const createdKey = apiKey.extend({ key: z.string() });

export const usageRecord = z.object({
  request_id: z.string(),
  key_id: z.string(),
  model: z.string(),
  /** The endpoint the request used: chat, completions, embeddings or responses. */
  endpoint: z.string(),
  prompt_tokens: tokenCount,
  completion_tokens: tokenCount,
  charged_tokens: tokenCount,
  estimated: z.boolean(),
  stream: z.boolean(),
  status: z.number().int(),
  created: unixTime,
  cursor: z.string(),
});

/** One UTC day and model of the account's ledger. */
export const dailyUsageRow = usageTotals.extend({
  /** `YYYY-MM-DD`, UTC. */
  date: z.string(),
  model: z.string(),
});

export const product = z.object({
  id: z.string(),
  name: z.string(),
  tokens: tokenCount,
  /** Days the package stays usable after purchase; null: it does not expire. */
  valid_days: z.number().int().positive().nullable(),
  /** In the currency's smallest unit (cents for USD), as Stripe counts it. */
  price: tokenCount,
  /** ISO 4217, lower case (`usd`). */
  currency: z.string(),
  active: z.boolean(),
});

/** `{"data": [...]}`, as every list answers. */
export const list = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item) });

export const keyList = list(apiKey);
export const usageList = list(usageRecord);
export const dailyUsage = list(dailyUsageRow);
/** `GET /console/api/products`: the products for sale, and whether Stripe Checkout is configured to buy them. */
export const productList = list(product).extend({ checkout: z.boolean() });
export const checkoutResponse = z.object({ url: z.string() });
export const loggedOut = z.object({ logged_out: z.literal(true) });
export const deletedKey = z.object({ id: z.string(), deleted: z.literal(true) });

/** Every error, here as on the rest of tokenmeter: OpenAI's shape. */
export const errorBody = z.object({
  error: z.object({ message: z.string(), type: z.string(), param: z.string().nullable(), code: z.string().nullable() }),
});

export type RegisterRequest = z.infer<typeof registerRequest>;
export type LoginRequest = z.infer<typeof loginRequest>;
export type LogoutRequest = z.infer<typeof logoutRequest>;
export type CreateKeyRequest = z.infer<typeof createKeyRequest>;
export type UsageQuery = z.infer<typeof usageQuery>;
export type DailyUsageQuery = z.infer<typeof dailyUsageQuery>;
export type RedeemRequest = z.infer<typeof redeemRequest>;
export type CheckoutRequest = z.infer<typeof checkoutRequest>;
export type Account = z.infer<typeof account>;
export type Me = z.infer<typeof me>;
export type ApiKey = z.infer<typeof apiKey>;
export type CreatedKey = z.infer<typeof createdKey>;
export type UsageRecord = z.infer<typeof usageRecord>;
export type DailyUsageRow = z.infer<typeof dailyUsageRow>;
export type Product = z.infer<typeof product>;
export type ProductList = z.infer<typeof productList>;
export type TokenPackage = z.infer<typeof tokenPackage>;
export type ErrorBody = z.infer<typeof errorBody>;
