/**
 * The fields the API's shapes are built from: times, token counts, lists, pages and cursors, emails and passwords.
 * The password limits are the accounts' own (src/accounts/password.ts); the browser console takes only the types.
 */
import { z } from 'zod';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../accounts/password';
import { MAX_GRANT_TOKENS } from '../store/records/account';

/** Times are Unix seconds. */
export const unixTime = z.number().int();
/** Token amounts are whole numbers. */
export const tokenCount = z.number().int().nonnegative();

export const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** `{"data": [...]}`, as every list answers. */
export const list = <T extends z.ZodType>(item: T) => z.strictObject({ data: z.array(item) });
export interface ListObject<T> {
  data: T[];
}

/** Tokens a request credits or caps (a grant, a key's cap, a product): a whole number, at least 1. */
export const tokenAmount = z
  .number({ error: 'must be a whole number of tokens' })
  .int('must be a whole number of tokens')
  .positive('must be at least 1')
  .max(Number.MAX_SAFE_INTEGER);

/** Tokens one grant credits (a package, a product, a code's): a whole number from 1 to MAX_GRANT_TOKENS. */
export const grantAmount = tokenAmount.max(MAX_GRANT_TOKENS, `must be at most ${MAX_GRANT_TOKENS}`);

/** An expiry: a Unix time still ahead. */
export const futureTime = z
  .number({ error: 'must be a Unix time in seconds' })
  .int('must be a Unix time in seconds')
  .refine((t) => t > nowSeconds(), 'must be in the future');

/** A page's size in a list query (`limit`): 1 to 1000, default 100. */
export const pageLimit = z.coerce
  .number<string | number>({ error: 'must be a number' })
  .int('must be a whole number')
  .min(1, 'must be at least 1')
  .max(1000, 'must be at most 1000')
  .default(100);

/** A time in a query string. */
export const unixQuery = z.coerce
  .number<string | number>({ error: 'must be a Unix time in seconds' })
  .int('must be a Unix time in seconds')
  .nonnegative();

const CURSOR_MESSAGE = 'must be a cursor from an earlier page';
/**
 * A usage record's `cursor` ("ms-seq", a Redis stream id), given back to read on from it. Both parts are safe
 * integers, so the two stores compare them exactly and Redis never sees an id it refuses as a range bound.
 */
export const cursor = z
  .string()
  .regex(/^\d{1,16}-\d{1,16}$/, CURSOR_MESSAGE)
  .refine((c) => c.split('-').every((part) => Number.isSafeInteger(Number(part))), CURSOR_MESSAGE);

/** A cursor to read back from: never `0-0` (all zeros), before which nothing is, and which Redis refuses as a bound. */
export const beforeCursor = cursor.refine((c) => /[1-9]/.test(c), CURSOR_MESSAGE);

/**
 * Emails are compared trimmed and lower-cased, so `A@x.org` and `a@x.org ` are one account. `notAString` is what a
 * value of another type is told (each API has always said it its own way).
 */
export const emailField = (notAString: string) =>
  z
    .string({ error: notAString })
    .trim()
    .toLowerCase()
    .max(254, 'must be at most 254 characters')
    .pipe(z.email({ error: 'must be an email address' }));

/** A new password (registration, the operator setting one). */
export const newPassword = z
  .string({ error: 'must be a string' })
  .min(MIN_PASSWORD_LENGTH, `must be at least ${MIN_PASSWORD_LENGTH} characters`)
  .max(MAX_PASSWORD_LENGTH, `must be at most ${MAX_PASSWORD_LENGTH} characters`);

export const accountRole = z.enum(['member', 'admin'], { error: "must be 'member' or 'admin'" });
export const accountStatus = z.enum(['active', 'disabled'], { error: "must be 'active' or 'disabled'" });

/** An account's or a key's name as the operator gives it (may be empty). */
export const displayName = z.string({ error: 'must be a string' }).max(200, 'must be at most 200 characters');
