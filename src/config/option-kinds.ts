/**
 * The kinds of value an option takes. Each kind gives the option's zod check with its default filled in, that
 * default as a user writes it, and how an environment variable's string becomes the value the check reads.
 */
import { availableParallelism } from 'node:os';
import { z } from 'zod';

/** What one option is made of, apart from its names and doc (those are the option table's). */
export interface OptionKind<S extends z.ZodType = z.ZodType> {
  /** Checks a value as the library takes it, fills in the default, resolves units (a size to bytes). */
  schema: S;
  /** The default as a user writes it (`4mb`, not 4194304), as docs/configuration.md's default column shows it; undefined: unset. */
  default: string | number | boolean | undefined;
  /** A variable's string as the value `schema` checks; a string it cannot read is passed on for `schema` to refuse. */
  fromEnv: (raw: string) => unknown;
}

/** A check with its default: unset stays undefined; a default is parsed like a given value (so `4mb` becomes bytes). */
type Defaulted<S extends z.ZodType, D> = undefined extends D ? z.ZodOptional<S> : z.ZodPrefault<S>;

function kind<S extends z.ZodType, D extends OptionKind['default']>(
  check: S,
  fallback: D,
  fromEnv: (raw: string) => unknown,
): OptionKind<Defaulted<S, D>> {
  const schema = fallback === undefined ? check.optional() : check.prefault(fallback as z.input<S>);
  return { schema: schema as Defaulted<S, D>, default: fallback, fromEnv };
}

const asIs = (raw: string): unknown => raw;
const asNumber = (raw: string): unknown => (raw.trim() !== '' && !Number.isNaN(Number(raw)) ? Number(raw) : raw);
const TRUE = new Set(['true', '1', 'yes']);
const FALSE = new Set(['false', '0', 'no']);
const asFlag = (raw: string): unknown => (TRUE.has(raw) ? true : FALSE.has(raw) ? false : raw);

/** A string: by default any non-empty one, or what `check` accepts (a pattern, a length, a transform). */
export function text<D extends string | undefined = undefined, S extends z.ZodType<string, string> = z.ZodString>(fallback?: D, check?: S) {
  return kind((check ?? z.string().min(1)) as S, fallback as D, asIs);
}

/** An http:// or https:// URL, its trailing slashes dropped. */
export function url<D extends string | undefined = undefined>(fallback?: D) {
  const check = z
    .string({ error: 'must be a URL' })
    .url('must be a URL')
    .refine((v) => /^https?:\/\//.test(v), 'must be an http:// or https:// URL')
    .transform((v) => v.replace(/\/+$/, ''));
  return kind(check, fallback as D, asIs);
}

/** A whole number greater than 0 (and at most `max`, when given). */
export function whole<D extends number | undefined = undefined>(fallback?: D, max = Number.MAX_SAFE_INTEGER) {
  const check = z
    .number({ error: 'must be a whole number' })
    .int('must be a whole number')
    .positive('must be greater than 0')
    .max(max, `must be at most ${max}`);
  return kind(check, fallback as D, asNumber);
}

/** A whole number, 0 included. */
export function count<D extends number | undefined = undefined>(fallback?: D) {
  return kind(
    z.number({ error: 'must be a whole number' }).int('must be a whole number').nonnegative('must be 0 or more'),
    fallback as D,
    asNumber,
  );
}

/** A whole number of seconds, 0 included. */
export function seconds<D extends number | undefined = undefined>(fallback?: D) {
  return kind(z.number({ error: 'must be a number of seconds' }).int().nonnegative(), fallback as D, asNumber);
}

/** A TCP port (0: any free one). */
export function port<D extends number | undefined = undefined>(fallback?: D) {
  const check = z
    .number({ error: 'must be a port number' })
    .int('must be a port number')
    .min(0, 'must be 0-65535')
    .max(65535, 'must be 0-65535');
  return kind(check, fallback as D, asNumber);
}

/** true or false; the environment also says 1/0 and yes/no. */
export function flag<D extends boolean>(fallback: D) {
  return kind(z.boolean({ error: 'must be true or false' }), fallback, asFlag);
}

/** One of a few words. */
export function oneOf<const V extends readonly [string, ...string[]], D extends V[number]>(values: V, fallback: D, message?: string) {
  return kind(z.enum(values, message === undefined ? undefined : { error: message }), fallback, asIs);
}

const SIZE = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?$/i;
const SIZE_MESSAGE = 'must be a size such as 1048576, 512kb or 4mb';
const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };

/** A byte size: a number of bytes, or a string like `512kb` or `4mb`; resolved to bytes. */
export function size<D extends string>(fallback: D) {
  const check = z.union([z.number().int().positive(), z.string().regex(SIZE, SIZE_MESSAGE)], { error: SIZE_MESSAGE }).transform((v) => {
    if (typeof v === 'number') return v;
    const m = SIZE.exec(v) as RegExpExecArray;
    return Math.floor(Number(m[1]) * UNITS[(m[2] ?? 'b').toLowerCase()]);
  });
  return kind(check, fallback, asIs);
}

/** Worker processes: a whole number, or `auto` for one per CPU (resolved to that number). */
export function workerCount<D extends number | 'auto'>(fallback: D) {
  const check = z
    .union([z.number().int().positive(), z.literal('auto')], { error: 'must be a whole number greater than 0, or auto' })
    .transform((v) => (v === 'auto' ? availableParallelism() : v));
  return kind(check, fallback, asNumber);
}

/** Express's `trust proxy`: true, false, a hop count, or addresses/CIDRs (and its named ranges). */
export function proxyTrust<D extends boolean>(fallback: D) {
  const check = z.union(
    [
      z.boolean(),
      z.number().int().nonnegative(),
      z.string().regex(/^([0-9a-fA-F.:/]+(\s*,\s*[0-9a-fA-F.:/]+)*|loopback|linklocal|uniquelocal)$/),
    ],
    { error: 'must be true, false, a hop count or addresses' },
  );
  const fromEnv = (raw: string): unknown => (raw === 'true' ? true : raw === 'false' ? false : /^\d+$/.test(raw) ? Number(raw) : raw);
  return kind(check, fallback, fromEnv);
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;

/** HTTP header names, comma-separated (or a list), lowercased; none of `refused`. */
export function headerNames(refused: ReadonlySet<string>) {
  const check = z
    .union([z.string(), z.array(z.string())], { error: 'must be header names, comma-separated' })
    .transform((v) => (typeof v === 'string' ? v.split(',') : v).map((n) => n.trim().toLowerCase()).filter((n) => n !== ''))
    .refine((names) => names.every((n) => TOKEN.test(n)), 'must be header names, comma-separated')
    .refine((names) => names.every((n) => !refused.has(n)), {
      error: (issue) => `${(issue.input as string[]).find((n) => refused.has(n))} is never forwarded upstream`,
    });
  return kind(check, undefined, asIs);
}
