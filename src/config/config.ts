/**
 * The process configuration: the environment read in one pass over the option table (each variable typed by its
 * option's kind), checked by one schema, then passed in everywhere. A bad value is one line naming the variable.
 */
import { ConfigError, parseOptions, serverOptionsSchema } from './options';
import { OPTIONS, type OptionName, type Resolved } from './option-table';

export { ConfigError } from './options';

/** The server's configuration: every option of the table, checked and resolved, under its one name. */
export type Config = Resolved<'meter' | 'server'>;

/** `upstreamUrl` → `UPSTREAM_URL`. */
export function envName(option: string): string {
  return option.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase();
}

/** The options the environment sets, each variable's string read by its option's kind; nothing checked yet. */
export function optionsFromEnv(env: NodeJS.ProcessEnv): Record<string, unknown> {
  const options: Record<string, unknown> = {};
  for (const [name, option] of Object.entries(OPTIONS)) {
    const raw = env[option.env];
    // An empty variable is an unset one (compose files often pass `VAR=`).
    if (raw === undefined || raw === '') continue;
    options[name] = option.fromEnv(raw);
  }
  return options;
}

/** The whole environment, parsed once; throws a ConfigError naming the first bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    // The schema's output is this type, its unset options absent rather than undefined.
    return parseOptions(serverOptionsSchema, optionsFromEnv(env)) as Config;
  } catch (err) {
    throw inEnvTermsError(err);
  }
}

/** A bad option's error restated with its variable's name, in one line; any other error as it is. */
export function inEnvTermsError(err: unknown): unknown {
  if (!(err instanceof ConfigError) || err.option === undefined) return err;
  const variable = OPTIONS[err.option as OptionName]?.env ?? envName(err.option);
  return new ConfigError(`invalid configuration: ${variable}: ${err.detail}`, err.option, err.detail);
}
