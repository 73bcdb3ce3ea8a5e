/**
 * The models file: the served models, their upstreams, limits, capabilities, pricing and quota weights. Validated
 * with zod when loaded; every field beyond the core ones is optional with a permissive default.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { hasLimits, limitsSchema, type Limits } from '../limits/limits';
import { DEFAULT_ENDPOINTS, ENDPOINTS, type EndpointName } from './endpoints';
import { capabilitiesSchema } from './capabilities-schema';
import { outputCapFields, outputCapFieldsSchema, type OutputEndpoint } from './output-caps';

/** The client's id as the bytes of a JSON string, built once per model and spliced into every answer. */
export function modelValue(id: string): Buffer {
  return Buffer.from(JSON.stringify(id));
}

const httpUrl = z
  .string()
  .url('must be a URL')
  .refine((v) => /^https?:\/\//.test(v), 'must be an http:// or https:// URL');

const upstreamSchema = z.strictObject({
  name: z.string().min(1),
  url: httpUrl,
  /** The environment variable holding this upstream's API key (never the key itself in the file). */
  api_key_env: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')
    .optional(),
  /** Default for its models' `stream_include_usage`. */
  stream_include_usage: z.boolean().optional(),
  /** Default for its models' `output_cap_fields`. */
  output_cap_fields: outputCapFieldsSchema.optional(),
});

const modelSchema = z.strictObject({
  /** What clients send as `model`: `<vendor>/<model_name>`. */
  id: z.string().regex(/^[^\s/]+\/[^\s]+$/, 'must look like <vendor>/<model_name>'),
  /** Other names clients may use for this model. */
  aliases: z.array(z.string().min(1)).default([]),
  /** The name sent upstream. Default: the id. */
  upstream_model: z.string().min(1).optional(),
  /** One of `upstreams` by name. */
  upstream: z.string().min(1).optional(),
  /** The upstream's base URL including /v1 (uses UPSTREAM_API_KEY). Default: UPSTREAM_URL. */
  upstream_url: httpUrl.optional(),
  /** Context window in tokens (prompt plus completion). */
  context_length: z.number().int().positive(),
  /** Most completion tokens one request may ask for; the reservation when the client names none. */
  max_output_tokens: z.number().int().positive(),
  /** The endpoints the model serves: chat, completions, embeddings, responses. Default: chat, completions, responses. */
  endpoints: z
    .array(z.enum(ENDPOINTS, { error: `must be one of ${ENDPOINTS.join(', ')}` }))
    .min(1, 'must name at least one endpoint')
    .optional(),
  /**
   * Tokens charged per prompt token, per prompt token the upstream reports as cached, and per completion token.
   * Default 1, the input weight, and 1.
   */
  quota_weight: z
    .strictObject({
      input: z.number().positive().default(1),
      cached_input: z.number().nonnegative().optional(),
      output: z.number().positive().default(1),
    })
    .default({ input: 1, output: 1 }),
  /** Ask the upstream for a usage chunk in streams. Default: the upstream's setting, else true. */
  stream_include_usage: z.boolean().optional(),
  /** The body fields each endpoint's output allowance is written into. Default: the upstream's, else output-caps.ts's. */
  output_cap_fields: outputCapFieldsSchema.optional(),
  capabilities: capabilitiesSchema.default({ tools: true, json_mode: true, vision: true, developer_role: true }),
  /** For display on /v1/models: price per million tokens (cached input: default the input price; an embeddings-only model has no output price). */
  pricing: z
    .strictObject({
      input: z.number().nonnegative(),
      cached_input: z.number().nonnegative().optional(),
      output: z.number().nonnegative().optional(),
      currency: z.string().min(1).default('USD'),
    })
    .optional(),
  /** Rate and concurrency limits shared by every account: `{rpm, tpm, max_concurrent}`, each optional. Default none. */
  limits: limitsSchema.optional(),
  /** Unix time shown as `created` on /v1/models. Default: when the file was loaded. */
  created: z.number().int().nonnegative().optional(),
  /** Shown as `owned_by`. Default: the vendor part of the id. */
  owned_by: z.string().min(1).optional(),
});

const fileSchema = z.strictObject({
  upstreams: z.array(upstreamSchema).default([]),
  models: z.array(modelSchema).min(1, 'must list at least one model'),
});

export type ModelEntry = z.input<typeof modelSchema>;

export interface Capabilities {
  tools: boolean;
  jsonMode: boolean;
  vision: boolean;
  developerRole: 'native' | 'system' | 'refuse';
  /** Accepted sampling parameters; null: all. */
  sampling: ReadonlySet<string> | null;
}

/** A served model, with defaults resolved. */
export interface Model {
  id: string;
  upstreamModel: string;
  /**
   * The id as JSON string bytes, put in place of the top-level `model` of every answer and chunk whatever the
   * upstream calls the model (a snapshot, a tag): clients asking by alias see this canonical id. Built once, here.
   */
  idJson: Buffer;
  upstreamUrl: string;
  upstreamApiKey: string | undefined;
  contextLength: number;
  maxOutputTokens: number;
  inputWeight: number;
  /** Per prompt token the upstream reports as cached (≤ inputWeight, so a reservation at inputWeight covers it). */
  cachedInputWeight: number;
  outputWeight: number;
  streamIncludeUsage: boolean;
  /** The body fields the reservation's output allowance goes into, by endpoint (every other cap field is removed). */
  outputCapFields: Readonly<Record<OutputEndpoint, readonly string[]>>;
  /** The endpoints it serves. */
  endpoints: ReadonlySet<EndpointName>;
  capabilities: Capabilities;
  /** `output` is undefined only for a model that serves embeddings alone (it produces no output tokens). */
  pricing: { input: number; cachedInput: number; output: number | undefined; currency: string } | undefined;
  /** The model's own limits; undefined when it has none (the route then skips the model step entirely). */
  limits: Limits | undefined;
  created: number;
  ownedBy: string;
}

/** A model that serves embeddings alone produces no output tokens: it has no output price or weight to show. */
export function servesEmbeddingsOnly(endpoints: ReadonlySet<EndpointName>): boolean {
  return endpoints.size === 1 && endpoints.has('embeddings');
}

export interface Catalog {
  /** A model by id or alias. */
  get(idOrAlias: string): Model | undefined;
  list(): readonly Model[];
}

export interface CatalogDefaults {
  upstreamUrl: string;
  upstreamApiKey: string | undefined;
  /** Where `api_key_env` variables are read. */
  env: NodeJS.ProcessEnv;
}

export class ModelsFileError extends Error {
  override name = 'ModelsFileError';
}

/** Builds a catalog from already-parsed YAML/JSON content. */
export function buildCatalog(content: unknown, defaults: CatalogDefaults, source = 'models file'): Catalog {
  const parsed = fileSchema.safeParse(content);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0]] : issue.path;
    const where = path.length
      ? path
          .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
          .join('')
          .replace(/^\./, '')
      : 'top level';
    const message =
      issue.code === 'unrecognized_keys'
        ? 'is not a known field'
        : issue.message.endsWith('received undefined')
          ? 'is required'
          : issue.message;
    throw new ModelsFileError(`${source}: ${where}${describeEntry(content, path)}: ${message}`);
  }
  const fail = (msg: string) => new ModelsFileError(`${source}: ${msg}`);
  const upstreams = new Map<string, z.output<typeof upstreamSchema> & { apiKey: string | undefined }>();
  for (const u of parsed.data.upstreams) {
    if (upstreams.has(u.name)) throw fail(`upstream ${u.name} is listed twice`);
    const apiKey = u.api_key_env === undefined ? undefined : defaults.env[u.api_key_env];
    if (u.api_key_env !== undefined && !apiKey) throw fail(`upstream ${u.name}: environment variable ${u.api_key_env} is not set`);
    upstreams.set(u.name, { ...u, url: u.url.replace(/\/+$/, ''), apiKey });
  }

  const loadedAt = Math.floor(Date.now() / 1000);
  const byName = new Map<string, Model>();
  const models: Model[] = [];
  for (const m of parsed.data.models) {
    if (m.max_output_tokens > m.context_length) throw fail(`model ${m.id}: max_output_tokens exceeds context_length`);
    if (m.upstream !== undefined && m.upstream_url !== undefined) throw fail(`model ${m.id}: give upstream or upstream_url, not both`);
    const weight = m.quota_weight;
    // A prompt is reserved at the input weight before anyone knows what the upstream will find cached.
    if (weight.cached_input !== undefined && weight.cached_input > weight.input) {
      throw fail(`model ${m.id}: quota_weight.cached_input exceeds quota_weight.input`);
    }
    const up = m.upstream === undefined ? undefined : upstreams.get(m.upstream);
    if (m.upstream !== undefined && !up) throw fail(`model ${m.id}: upstream ${m.upstream} is not in upstreams`);
    const caps = m.capabilities;
    const endpoints = new Set(m.endpoints ?? DEFAULT_ENDPOINTS);
    const embeddingsOnly = servesEmbeddingsOnly(endpoints);
    if (m.pricing && m.pricing.output === undefined && !embeddingsOnly) throw fail(`model ${m.id}: pricing.output is required`);
    const upstreamModel = m.upstream_model ?? m.id;
    const model: Model = {
      id: m.id,
      upstreamModel,
      idJson: modelValue(m.id),
      upstreamUrl: up?.url ?? (m.upstream_url ?? defaults.upstreamUrl).replace(/\/+$/, ''),
      upstreamApiKey: up ? up.apiKey : defaults.upstreamApiKey,
      contextLength: m.context_length,
      maxOutputTokens: m.max_output_tokens,
      inputWeight: weight.input,
      cachedInputWeight: weight.cached_input ?? weight.input,
      outputWeight: weight.output,
      streamIncludeUsage: m.stream_include_usage ?? up?.stream_include_usage ?? true,
      outputCapFields: outputCapFields(m.output_cap_fields, up?.output_cap_fields),
      endpoints,
      capabilities: {
        tools: caps.tools,
        jsonMode: caps.json_mode,
        vision: caps.vision,
        developerRole: caps.developer_role === 'system' ? 'system' : caps.developer_role ? 'native' : 'refuse',
        sampling: caps.sampling_parameters ? new Set(caps.sampling_parameters) : null,
      },
      pricing: m.pricing && {
        input: m.pricing.input,
        cachedInput: m.pricing.cached_input ?? m.pricing.input,
        output: embeddingsOnly ? undefined : m.pricing.output,
        currency: m.pricing.currency,
      },
      limits: hasLimits(m.limits) ? m.limits : undefined,
      created: m.created ?? loadedAt,
      ownedBy: m.owned_by ?? m.id.slice(0, m.id.indexOf('/')),
    };
    for (const name of [m.id, ...m.aliases]) {
      if (byName.has(name)) throw fail(`model name ${name} is listed twice`);
      byName.set(name, model);
    }
    models.push(model);
  }
  return { get: (name) => byName.get(name), list: () => models };
}

export function loadCatalog(file: string, defaults: CatalogDefaults): Catalog {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ModelsFileError(`${file}: cannot read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  let content: unknown;
  try {
    content = parseYaml(text);
  } catch (err) {
    throw new ModelsFileError(`${file}: not valid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  return buildCatalog(content, defaults, file);
}

/** The models file as a reloadable source: a bad file is refused and the catalog in use stays. */
export class ModelsFile {
  private catalog: Catalog;

  constructor(
    private readonly file: string,
    private readonly defaults: CatalogDefaults,
  ) {
    this.catalog = loadCatalog(file, defaults);
  }

  readonly current = (): Catalog => this.catalog;

  /** Resolves to the number of models now served; rejects (keeping the old catalog) when the file is bad. */
  readonly reload = async (): Promise<number> => {
    this.catalog = loadCatalog(this.file, this.defaults);
    return this.catalog.list().length;
  };
}

function describeEntry(content: unknown, path: readonly PropertyKey[]): string {
  if (path[0] !== 'models' || typeof path[1] !== 'number') return '';
  const entry = (content as { models?: unknown[] }).models?.[path[1]] as { id?: unknown } | undefined;
  return typeof entry?.id === 'string' ? ` (${entry.id})` : '';
}
