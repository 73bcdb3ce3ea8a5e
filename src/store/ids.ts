/** Identifiers, ledger cursors and account search, shared by both stores. */
import { randomBytes, randomUUID } from 'node:crypto';

let lastMs = 0;
let seq = 0;

/**
 * Random bytes drawn 3 KiB at a time and handed out 6 at a time: one `randomBytes` call per id cost ~2.5 µs (a call
 * into the C++ side and a Buffer each), three of them on every settlement while events are written. As random as
 * before, from the same source (Node's randomUUID pools its entropy the same way).
 */
const RANDOM_POOL_BYTES = 3 * 1024;
let randomPool = Buffer.alloc(0);
let randomAt = 0;

function randomHex6(): string {
  if (randomAt + 6 > randomPool.length) {
    randomPool = randomBytes(RANDOM_POOL_BYTES);
    randomAt = 0;
  }
  randomAt += 6;
  return randomPool.toString('hex', randomAt - 6, randomAt);
}

/**
 * Time-ordered, and in creation order within a process (a sequence breaks ties within a millisecond), so ids sort by
 * creation: package ids are the settle tie-break, account ids the listing order.
 */
export function newId(kind: 'acc' | 'key' | 'pkg' | 'prod' | 'rc' | 'evt' | 'we' | 'dlv'): string {
  const now = Date.now();
  seq = now === lastMs ? seq + 1 : 0;
  lastMs = now;
  return `${kind}_${now.toString(36)}${seq.toString(36).padStart(3, '0')}${randomHex6()}`;
}

/**
 * A request id: a UUIDv7 (RFC 9562), its first 48 bits the time in ms, the rest random, as Node's randomUUID draws it.
 * The store reads the time back to look for a settled marker only in the hours since the request was made.
 */
export function newRequestId(nowMs = Date.now()): string {
  const random = randomUUID();
  const ms = nowMs.toString(16).padStart(12, '0');
  return `${ms.slice(0, 8)}-${ms.slice(8, 12)}-7${random.slice(15)}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * A lower-case UUID (the proxy's request ids) as its 16 bytes in base64url: 22 characters where the UUID takes 36, in
 * every ledger record Redis keeps. "" for any other id, kept as it is.
 */
export function compactUuid(id: string): string {
  return UUID.test(id) ? Buffer.from(id.replaceAll('-', ''), 'hex').toString('base64url') : '';
}

/** The UUID compactUuid made `compact` from. */
export function uuidFromCompact(compact: string): string {
  const hex = Buffer.from(compact, 'base64url').toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A ledger cursor's time, in ms since the epoch (a Redis stream id, "ms-seq", in both stores). */
export function cursorMs(cursor: string): number {
  return Number(cursor.slice(0, cursor.indexOf('-')));
}

/** Orders ledger cursors, which are Redis stream ids ("ms-seq") in both stores. */
export function compareCursor(a: string, b: string): number {
  const [am, as] = a.split('-').map(Number);
  const [bm, bs] = b.split('-').map(Number);
  return am - bm || as - bs;
}

/** Whether an account's email or name contains `lowerSearch` (already lower case). */
export function matchesSearch(account: { email: string | null; name: string }, lowerSearch: string): boolean {
  return (account.email ?? '').includes(lowerSearch) || account.name.toLowerCase().includes(lowerSearch);
}

const KEY_ID = /^key_([0-9a-z]{8})([0-9a-z]{3})([0-9a-f]{12})$/;
/** The last key id compacted: a process settles for the same key again and again (0.6 µs a call saved). */
let lastKey = { id: '', compact: '' };

/**
 * A key id as newId('key') makes it (time, sequence and random part: 27 characters) as its 14 bytes in base64url, 19
 * characters in every ledger record Redis keeps; "" for any other id (an account's, for a key from before accounts),
 * kept as it is. The time is 8 base-36 digits (below 2^48), the sequence 3 (below 2^16): keyIdFromCompact gives back
 * exactly the id it was made from.
 */
export function compactKeyId(id: string): string {
  if (id === lastKey.id) return lastKey.compact;
  const m = KEY_ID.exec(id);
  let compact = '';
  if (m) {
    const bytes = Buffer.allocUnsafe(14);
    bytes.writeUIntBE(parseInt(m[1], 36), 0, 6);
    bytes.writeUInt16BE(parseInt(m[2], 36), 6);
    bytes.write(m[3], 8, 'hex');
    compact = bytes.toString('base64url');
  }
  lastKey = { id, compact };
  return compact;
}

/** The key id compactKeyId made `compact` from. */
export function keyIdFromCompact(compact: string): string {
  const bytes = Buffer.from(compact, 'base64url');
  const time = bytes.readUIntBE(0, 6).toString(36).padStart(8, '0');
  const seq = bytes.readUInt16BE(6).toString(36).padStart(3, '0');
  return `key_${time}${seq}${bytes.toString('hex', 8, 14)}`;
}
