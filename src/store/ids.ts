/** Identifiers, ledger cursors and account search, shared by both stores. */
import { randomBytes } from 'node:crypto';

export function newId(kind: 'acc' | 'key' | 'pkg' | 'rc'): string {
  // Time-ordered, so package ids sort by creation (the settle tie-break).
  return `${kind}_${Date.now().toString(36)}${randomBytes(6).toString('hex')}`;
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
