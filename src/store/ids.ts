/** Identifiers, ledger cursors and account search, shared by both stores. */
import { randomBytes } from 'node:crypto';

let lastMs = 0;
let seq = 0;

/**
 * Time-ordered, and in creation order within a process (a sequence breaks ties within a millisecond), so ids sort by
 * creation: package ids are the settle tie-break, account ids the listing order.
 */
export function newId(kind: 'acc' | 'key' | 'pkg' | 'prod' | 'rc' | 'evt' | 'we' | 'dlv'): string {
  const now = Date.now();
  seq = now === lastMs ? seq + 1 : 0;
  lastMs = now;
  return `${kind}_${now.toString(36)}${seq.toString(36).padStart(3, '0')}${randomBytes(6).toString('hex')}`;
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
