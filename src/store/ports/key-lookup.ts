/**
 * The key-lookup port, for the OpenAI routes: bearer auth (src/http/auth.ts) finds a key by its secret's hash, and
 * `/v1/models` (src/proxy/routes/models-api.ts) reads whether it is live and which models it may use.
 */
import type { KeyRecord, KeyRef } from '../records/key';

/** What the OpenAI routes read of a key: the rest of its record and its state are the key port's. */
export type KeyAccess = Pick<KeyRecord, 'id' | 'accountId' | 'revokedAt' | 'expiresAt' | 'models'>;

export interface KeyLookup {
  /** The key (and its account) stored for a secret's hash. The mapping never changes, so callers may cache it. */
  findKeyId(hash: string): Promise<KeyRef | undefined>;
  /** Undefined for an unknown key. Revocation and expiry are enforced again, atomically, by `reserve`. */
  getKey(keyId: string): Promise<KeyAccess | undefined>;
}
