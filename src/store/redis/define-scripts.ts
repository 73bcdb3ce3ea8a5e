/**
 * Lua scripts on an ioredis client: a runner per script that sends EVALSHA, and EVAL (which caches the script) when
 * Redis answers NOSCRIPT; a script that was not found did not run, so sending it whole runs it once.
 * Not ioredis's `defineCommand`: every command it auto-pipelines builds a Pipeline that copies each defined command
 * onto itself, about 5 KiB a command with this project's scripts (bench/FINDINGS.md, "Allocation IV").
 */
import { createHash } from 'node:crypto';
import type Redis from 'ioredis';
import type { Cluster } from 'ioredis';

export type RunScript = (keys: string[], args: (string | number)[]) => Promise<unknown>;

const isNoScript = (err: unknown) => err instanceof Error && err.message.startsWith('NOSCRIPT');

export function defineScripts<N extends string>(redis: Redis | Cluster, lua: Record<N, string>): Record<N, RunScript> {
  const run = {} as Record<N, RunScript>;
  for (const name of Object.keys(lua) as N[]) {
    const source = lua[name];
    const sha = createHash('sha1').update(source).digest('hex');
    run[name] = (keys, args) =>
      redis.evalsha(sha, keys.length, ...keys, ...args).catch((err: unknown) => {
        if (!isNoScript(err)) throw err;
        return redis.eval(source, keys.length, ...keys, ...args);
      });
  }
  return run;
}
