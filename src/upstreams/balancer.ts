/**
 * Which server of a pool takes the next try: the fewest outstanding requests per unit of weight (a long stream counts
 * until it ends, so streams spread evenly), or the affinity key's server while it can take it.
 */
import { affinityServer } from './affinity';
import type { UpstreamServer } from './server';

export interface Choice {
  /** The server chosen, or undefined: none can take a request now. */
  server: UpstreamServer | undefined;
  /** Some server that could be tried is only at its max_concurrent (worth waiting for a slot). */
  full: boolean;
}

/**
 * Picks among the servers not yet tried. `healthyOnly` false lets a pool with no healthy server try the others
 * anyway rather than refuse outright. Ties go round the pool from `turn`, so equal servers share evenly.
 */
export function choose(
  servers: readonly UpstreamServer[],
  tried: ReadonlySet<UpstreamServer>,
  now: number,
  healthyOnly: boolean,
  turn: number,
  key: string | undefined,
): Choice {
  let best: UpstreamServer | undefined;
  let bestLoad = Infinity;
  let full = false;
  const n = servers.length;
  const open: UpstreamServer[] = [];
  for (let i = 0; i < n; i++) {
    const s = servers[(turn + i) % n];
    if (tried.has(s) || (healthyOnly && !s.available(now))) continue;
    if (!s.hasSlot()) {
      full = true;
      continue;
    }
    if (key !== undefined) open.push(s);
    const load = (s.inFlight + 1) / s.weight;
    if (load < bestLoad) {
      bestLoad = load;
      best = s;
    }
  }
  if (key !== undefined && open.length > 0) {
    // The key's server among those healthy ones that may take it: the set it hashes over excludes only what cannot.
    const owner = affinityServer(key, open);
    if (owner) return { server: owner, full };
  }
  return { server: best, full };
}
