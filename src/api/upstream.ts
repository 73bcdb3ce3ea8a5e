/** The upstream pools as GET /admin/upstreams and `tokenmeter upstreams` show them: servers, health, load, last error. */
import { z } from 'zod';
import type { PoolState } from '../upstreams/pools';

const iso = z.string();

export const upstreamServerSchema = z.strictObject({
  url: z.string(),
  weight: z.number(),
  max_concurrent: z.number().int().nullable(),
  in_flight: z.number().int(),
  /** Passes its health checks (a pool of one has none). */
  healthy: z.boolean(),
  /** Ejected by the outlier detector until then; null: serving. */
  ejected_until: iso.nullable(),
  last_error: z.strictObject({ message: z.string(), at: iso }).nullable(),
});

export const upstreamPoolSchema = z.strictObject({
  object: z.literal('upstream_pool'),
  name: z.string(),
  retries: z.number().int(),
  affinity: z.string().nullable(),
  models: z.array(z.string()),
  /** Requests its models' fallbacks served because this pool had no healthy server, every try failed, or all were busy. */
  fallbacks: z.strictObject({ unhealthy: z.number().int(), failed: z.number().int(), overloaded: z.number().int() }),
  servers: z.array(upstreamServerSchema),
});

export const upstreamPoolListSchema = z.strictObject({ object: z.literal('list'), data: z.array(upstreamPoolSchema) });

export type UpstreamPoolObject = z.infer<typeof upstreamPoolSchema>;
export type UpstreamPoolList = z.infer<typeof upstreamPoolListSchema>;

const time = (ms: number) => new Date(ms).toISOString();

export function upstreamPoolObject(p: PoolState): UpstreamPoolObject {
  return {
    object: 'upstream_pool',
    name: p.name,
    retries: p.retries,
    affinity: p.affinity ?? null,
    models: p.models,
    fallbacks: p.fallbacks,
    servers: p.servers.map((s) => ({
      url: s.url,
      weight: s.weight,
      max_concurrent: s.maxConcurrent ?? null,
      in_flight: s.inFlight,
      healthy: s.healthy,
      ejected_until: s.ejectedUntil === undefined ? null : time(s.ejectedUntil),
      last_error: s.lastError ? { message: s.lastError.message, at: time(s.lastError.at) } : null,
    })),
  };
}
