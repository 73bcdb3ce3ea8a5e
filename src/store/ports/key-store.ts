/**
 * The key port, for the routes that manage API keys (the admin API's and the console's key routes): creating, reading
 * in full, listing, changing and revoking keys. It includes the key lookup, and reads a key in full where that reads
 * only what the OpenAI routes need.
 */
import type { CreateKeyResult, KeyPatch, KeyRecord, KeyState, NewKey } from '../records/key';
import type { KeyLookup } from './key-lookup';

export interface KeyStore extends KeyLookup {
  /** A key in an existing account, within `input.maxKeys` keys when it is given. */
  createKey(accountId: string, input: NewKey): Promise<CreateKeyResult>;
  /** The key's record and state (balance, cap, usage, limits' use); undefined for an unknown key. */
  getKey(keyId: string): Promise<KeyState | undefined>;
  /** One account's keys, or every key; in creation order. */
  listKeys(accountId?: string): Promise<KeyRecord[]>;
  /** Undefined when the key does not exist. New limits apply from the key's next request. */
  updateKey(keyId: string, patch: KeyPatch): Promise<KeyRecord | undefined>;
  /** False when the key does not exist. */
  revokeKey(keyId: string): Promise<boolean>;
}
