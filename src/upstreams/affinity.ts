/**
 * Affinity by rendezvous hashing (highest random weight): a key goes to the server with the highest weighted score for
 * it, so a server leaving moves only the keys it had, and one joining takes only its share.
 */
import type { UpstreamServer } from './server';

/** FNV-1a, 32 bits: fast and spread well enough to place keys; not a security boundary. */
function fnv1a(text: string, seed: number): number {
  let h = seed;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  // A final mix (murmur3's) so keys differing in their last character still spread.
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h >>> 0;
}

/** The server among `servers` that `key` belongs to (undefined when there is none). */
export function affinityServer(key: string, servers: readonly UpstreamServer[]): UpstreamServer | undefined {
  const keyHash = fnv1a(key, 0x811c9dc5);
  let best: UpstreamServer | undefined;
  let bestScore = -Infinity;
  for (const s of servers) {
    // Uniform in (0, 1), then weighted: -weight / ln(u) gives each server a share proportional to its weight.
    const u = (fnv1a(s.url, keyHash) + 1) / 4294967297;
    const score = -s.weight / Math.log(u);
    if (score > bestScore) {
      bestScore = score;
      best = s;
    }
  }
  return best;
}
