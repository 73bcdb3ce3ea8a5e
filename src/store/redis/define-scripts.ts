/** Registers Lua scripts on an ioredis client once and returns a runner per script (EVALSHA, EVAL on NOSCRIPT). */
import type Redis from 'ioredis';
import type { Cluster } from 'ioredis';

export type RunScript = (keys: string[], args: (string | number)[]) => Promise<unknown>;

export function defineScripts<N extends string>(redis: Redis | Cluster, lua: Record<N, string>): Record<N, RunScript> {
  const run = {} as Record<N, RunScript>;
  for (const name of Object.keys(lua) as N[]) {
    // ioredis sends EVALSHA and falls back to EVAL (which caches the script) on NOSCRIPT.
    if (!(name in redis)) redis.defineCommand(name, { lua: lua[name] });
    const command = (redis as unknown as Record<N, (...a: unknown[]) => Promise<unknown>>)[name].bind(redis);
    run[name] = (keys, args) => command(keys.length, ...keys, ...args);
  }
  return run;
}
