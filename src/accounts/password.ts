/**
 * Account passwords: hashed with scrypt (memory-hard, from node:crypto) and a random salt, verified in constant time.
 * The hash is a self-describing string, so the parameters can be raised later without breaking stored hashes.
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** Shortest password accepted. */
export const MIN_PASSWORD_LENGTH = 10;
/** Longest password accepted: scrypt reads it all, so an endless one would be a cheap way to burn CPU. */
export const MAX_PASSWORD_LENGTH = 1024;

/**
 * N = 2^15, r = 8, p = 3: one of OWASP's equivalent scrypt minimums (2^17·8·1 … 2^13·8·10), chosen for its 32 MiB
 * per hash, so a burst of logins cannot exhaust the process's memory the way 128 MiB each could.
 */
const DEFAULT_PARAMS: PasswordParams = { N: 2 ** 15, r: 8, p: 3 };
const KEY_LENGTH = 32;
const SALT_LENGTH = 16;

export interface PasswordParams {
  /** CPU/memory cost, a power of two. */
  N: number;
  r: number;
  p: number;
}

function derive(password: string, salt: Buffer, params: PasswordParams): Promise<Buffer> {
  const options: ScryptOptions = { ...params, maxmem: 256 * params.N * params.r + 1024 * 1024 };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/** `scrypt$N$r$p$salt$hash` (base64url). The password itself is never kept or logged. */
export async function hashPassword(password: string, params: PasswordParams = DEFAULT_PARAMS): Promise<string> {
  const salt = randomBytes(SALT_LENGTH);
  const key = await derive(password, salt, params);
  return ['scrypt', params.N, params.r, params.p, salt.toString('base64url'), key.toString('base64url')].join('$');
}

/** Whether the password matches the stored hash; false (never a throw) for a malformed hash. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [N, r, p] = parts.slice(1, 4).map(Number);
  if (![N, r, p].every((n) => Number.isSafeInteger(n) && n > 0) || N > 2 ** 20 || r > 32 || p > 16) return false;
  const salt = Buffer.from(parts[4], 'base64url');
  const expected = Buffer.from(parts[5], 'base64url');
  if (expected.length !== KEY_LENGTH) return false;
  const key = await derive(password, salt, { N, r, p });
  return timingSafeEqual(key, expected);
}

/** Why a new password is refused, or undefined when it is acceptable. */
export function passwordProblem(password: string): string | undefined {
  if (password.length < MIN_PASSWORD_LENGTH) return `must be at least ${MIN_PASSWORD_LENGTH} characters`;
  if (password.length > MAX_PASSWORD_LENGTH) return `must be at most ${MAX_PASSWORD_LENGTH} characters`;
  return undefined;
}
