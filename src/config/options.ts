/**
 * The library's options checked once with zod: the option table's `meter` options plus the library-only parts,
 * resolved into the MeterConfig every part of tokenmeter receives (each option under its one name).
 */
import { z } from 'zod';
import type { ServingStore } from '../store/ports/store';
import type { LibraryParts, ServingStoreOptions, TokenmeterOptions } from './option-types';
import { shapeOf, type Resolved } from './option-table';

/** A bad option: `option` names it, `detail` says what is wrong. */
export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(
    message: string,
    readonly option?: string,
    readonly detail?: string,
  ) {
    super(message);
  }
}

const fn = <T>() => z.custom<T>((v) => typeof v === 'function', 'must be a function');
const object = <T>(what: string) => z.custom<T>((v) => typeof v === 'object' && v !== null, `must be ${what}`);

/** The library-only parts, passed on as they are; the store may be a host's ServingStore. */
export type MeterParts = Omit<LibraryParts, 'store'> & { store?: ServingStore };

/** The library-only parts' checks: one for each member of LibraryParts (the compiler holds them to it). */
const partsShape = {
  models: z.unknown().optional(),
  store: object<ServingStore>('a Store').optional(),
  redis: object<LibraryParts['redis']>('an ioredis client').optional(),
  logger: object<LibraryParts['logger']>('a pino logger').optional(),
  env: object<LibraryParts['env']>('an object of environment variables').optional(),
  authenticate: fn<LibraryParts['authenticate']>().optional(),
  onSettle: fn<LibraryParts['onSettle']>().optional(),
  sessions: object<LibraryParts['sessions']>('a SessionStore').optional(),
  commerce: object<LibraryParts['commerce']>('a CommerceStore').optional(),
} satisfies { [K in keyof MeterParts]-?: z.ZodType<MeterParts[K]> };

export const LIBRARY_PARTS = Object.keys(partsShape) as (keyof LibraryParts)[];

/** What createTokenmeter takes: the `meter` options, then the library-only parts; any other name is refused. */
export const meterOptionsSchema = z.strictObject({ ...shapeOf('meter'), ...partsShape });
/** What the server reads from the environment: every option of the table. */
export const serverOptionsSchema = z.strictObject(shapeOf('meter', 'server'));

/** The `meter` options with defaults applied and units resolved: what every part of tokenmeter is given. */
export type MeterConfig = Resolved<'meter'>;

/** Checks the options once; throws one ConfigError naming the first bad option. */
export function parseOptions<S extends z.ZodObject>(schema: S, options: unknown): z.output<S> {
  const parsed = schema.safeParse(options ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const option = issue.code === 'unrecognized_keys' ? issue.keys[0] : String(issue.path[0] ?? 'options');
    const detail = issue.code === 'unrecognized_keys' ? 'is not a tokenmeter option' : issue.message;
    throw new ConfigError(`invalid tokenmeter option ${option}: ${detail}`, option, detail);
  }
  // Every option present, unset ones as undefined: the resolved config has each option under its name.
  const data: Record<string, unknown> = Object.fromEntries(Object.keys(schema.shape).map((name) => [name, undefined]));
  Object.assign(data, parsed.data);
  const given = [data.store && 'store', data.redis && 'redis', data.redisUrl && 'redisUrl'].filter(Boolean);
  if (given.length > 1) {
    const detail = `give one of store, redis and redisUrl, not ${given.join(' and ')}`;
    throw new ConfigError(`invalid tokenmeter option ${String(given[1])}: ${detail}`, String(given[1]), detail);
  }
  return data as z.output<S>;
}

/** The library's entry: the options checked, and split into the resolved config and the parts. */
export function meterConfig(options: TokenmeterOptions | ServingStoreOptions): { config: MeterConfig; parts: MeterParts } {
  const config: Record<string, unknown> = { ...parseOptions(meterOptionsSchema, options) };
  const parts: Record<string, unknown> = {};
  for (const name of LIBRARY_PARTS) {
    parts[name] = config[name];
    delete config[name];
  }
  return { config: config as MeterConfig, parts: parts as MeterParts };
}
