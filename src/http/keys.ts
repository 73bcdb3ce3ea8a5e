/** API key secrets: how they are made, recognised and hashed. Only the hash and a display prefix are ever stored. */
import { createHash, randomBytes } from 'node:crypto';

/** `sk-` then 32 random bytes in base64url (43 characters). */
const KEY_PATTERN = /^sk-[A-Za-z0-9_-]{43,128}$/;
const PREFIX_LENGTH = 10;

export interface NewKeySecret {
  /** The secret itself: shown to its owner once, never stored. */
  secret: string;
  /** SHA-256 of the secret, hex: what the store looks keys up by. */
  hash: string;
  /** The first characters of the secret, to tell keys apart in listings. */
  prefix: string;
}

export function generateKey(): NewKeySecret {
  const secret = `sk-${randomBytes(32).toString('base64url')}`;
  return { secret, hash: hashKey(secret), prefix: displayPrefix(secret) };
}

export function hashKey(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function displayPrefix(secret: string): string {
  return secret.slice(0, PREFIX_LENGTH);
}

export function isWellFormedKey(secret: string): boolean {
  return KEY_PATTERN.test(secret);
}

/**
 * The bearer token of a request's Authorization header, or undefined when it is missing, not a Bearer one, or
 * repeated: Node keeps only the first of repeated Authorization lines in `headers`, so the raw lines are counted, and
 * a request carrying two credentials is refused rather than charged to whichever came first.
 */
export function requestBearerToken(req: { headers: { authorization?: string }; rawHeaders: string[] }): string | undefined {
  const header = req.headers.authorization;
  if (header === undefined) return undefined;
  let lines = 0;
  const raw = req.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].length === 13 && raw[i].toLowerCase() === 'authorization' && ++lines > 1) return undefined;
  }
  return bearerToken(header);
}

/** The bearer token of one Authorization header value, or undefined when it is missing or not a Bearer one. */
function bearerToken(header: string | undefined): string | undefined {
  if (header === undefined || header.length < 8) return undefined;
  if (header.charCodeAt(6) !== 32 || header.slice(0, 6).toLowerCase() !== 'bearer') return undefined;
  return header.slice(7).trim();
}

/**
 * The key of a request to the Messages API: `x-api-key` (the Anthropic SDKs' ANTHROPIC_API_KEY) or a Bearer token
 * (their ANTHROPIC_AUTH_TOKEN). Both may come, when they agree; two different keys are refused rather than guessed at.
 * Repeated `x-api-key` lines reach us joined by a comma, which no well-formed key holds.
 */
export function requestApiKey(req: {
  headers: { authorization?: string; 'x-api-key'?: string | string[] };
  rawHeaders: string[];
}): string | undefined {
  const header = req.headers['x-api-key'];
  const bearer = requestBearerToken(req);
  if (header === undefined) return bearer;
  if (typeof header !== 'string') return undefined;
  const key = header.trim();
  return bearer === undefined || bearer === key ? key : undefined;
}
