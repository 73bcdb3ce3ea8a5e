/**
 * The models file: the served models, their upstreams, limits, capabilities, pricing and quota weights, checked
 * against its schema (models-file-schema.ts) when loaded and resolved here into the catalog the proxy serves.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { hasLimits, type Limits } from '../limits/limits';
import type { MessagesVia } from './messages-via-schema';
import { DEFAULT_ENDPOINTS, NO_OUTPUT, type EndpointName } from './endpoints';
import { hostedToolsOf, type HostedTools } from './hosted-tools';
import { storedPromptsOf, type StoredPrompts } from './stored-prompts';
import { outputCapFields, type OutputEndpoint } from './output-caps';
import { ModelsFileError, parseModelsFile, type ParsedFile, type ParsedModel } from './models-file-schema';
import { poolOf, singleServerPool, type PoolSpec } from './pool-spec';
import type { UpstreamEntry } from './upstream-schema';

export { ModelsFileError, type ModelEntry } from './models-file-schema';

/** UPSTREAM_DRAIN_SECONDS's default, for a catalog built without the config. */
const DEFAULT_DRAIN_SECONDS = 30;

/** The client's id as the bytes of a JSON string, built once per model and spliced into every answer. */
export function modelValue(id: string): Buffer {
  return Buffer.from(JSON.stringify(id));
}

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
  /** The first server's base URL (the routes that are not metered, stored responses among them, go there). */
  upstreamUrl: string;
  /** The servers that serve it, and how they are balanced, retried and checked (docs/upstream-pools.md). */
  pool: PoolSpec;
  /** Model ids tried in order when its pool cannot answer; checked to exist when the file loads. */
  fallbacks: readonly string[];
  upstreamApiKey: string | undefined;
  contextLength: number;
  /** 0 for a model that serves embeddings alone: it produces no output. */
  maxOutputTokens: number;
  /** An embeddings model's vector length, when the models file gives it. */
  dimensions: number | undefined;
  inputWeight: number;
  /** Per prompt token the upstream reports as cached (≤ inputWeight, so a reservation at inputWeight covers it). */
  cachedInputWeight: number;
  /** Per prompt token the upstream reports as written to its cache; may exceed inputWeight (the reservation covers it). */
  cacheWriteWeight: number;
  outputWeight: number;
  streamIncludeUsage: boolean;
  /** How long a stream whose client left is still read for its usage (upstream-drain.ts); 0: aborted at once. */
  drainMs: number;
  /** The body fields the reservation's output allowance goes into, by endpoint (every other cap field is removed). */
  outputCapFields: Readonly<Record<OutputEndpoint, readonly string[]>>;
  /** The endpoints it serves. */
  endpoints: ReadonlySet<EndpointName>;
  capabilities: Capabilities;
  /** `chat`: /v1/messages is translated to the upstream's chat completions; undefined: forwarded as it is. */
  messagesVia: MessagesVia | undefined;
  /** The hosted tools it may be asked for (hosted-tools.ts); empty: function and custom tools only. */
  hostedTools: HostedTools;
  /** Stored prompts it takes (stored-prompts.ts); undefined: `prompt` is refused. */
  storedPrompts: StoredPrompts | undefined;
  /** `output` is undefined only for a model that serves embeddings alone (it produces no output tokens). */
  pricing: { input: number; cachedInput: number; output: number | undefined; currency: string } | undefined;
  /** The model's own limits; undefined when it has none (the route then skips the model step entirely). */
  limits: Limits | undefined;
  created: number;
  ownedBy: string;
}

/** A model that serves embeddings alone (or rerank and score: NO_OUTPUT) produces no output tokens: no output price or weight. */
export function servesEmbeddingsOnly(endpoints: ReadonlySet<EndpointName>): boolean {
  for (const e of endpoints) if (!NO_OUTPUT.has(e)) return false;
  return endpoints.size > 0;
}

export interface Catalog {
  /** A model by id or alias. */
  get(idOrAlias: string): Model | undefined;
  list(): readonly Model[];
}

export interface CatalogDefaults {
  upstreamUrl: string;
  upstreamApiKey: string | undefined;
  /** UPSTREAM_DRAIN_SECONDS: for models whose entry and upstream name none. Default 30. */
  drainSeconds?: number;
  /** Where `api_key_env` variables are read. */
  env: NodeJS.ProcessEnv;
}

type Upstream = UpstreamEntry & { apiKey: string | undefined; pool: PoolSpec };

/** The named upstreams, each with its API key read from the environment. */
function upstreamsOf(file: ParsedFile, env: NodeJS.ProcessEnv, fail: (msg: string) => Error): Map<string, Upstream> {
  const upstreams = new Map<string, Upstream>();
  for (const u of file.upstreams) {
    if (upstreams.has(u.name)) throw fail(`upstream ${u.name} is listed twice`);
    const apiKey = u.api_key_env === undefined ? undefined : env[u.api_key_env];
    if (u.api_key_env !== undefined && !apiKey) throw fail(`upstream ${u.name}: environment variable ${u.api_key_env} is not set`);
    upstreams.set(u.name, { ...u, apiKey, pool: poolOf(u, apiKey, fail) });
  }
  return upstreams;
}

/** One model entry, checked beyond its schema (fields that must agree) and resolved against its upstream. */
function modelOf(
  m: ParsedModel,
  upstreams: Map<string, Upstream>,
  defaults: CatalogDefaults,
  loadedAt: number,
  fail: (msg: string) => Error,
  ownPools: Map<string, PoolSpec>,
): Model {
  if (m.max_output_tokens !== undefined && m.max_output_tokens > m.context_length)
    throw fail(`model ${m.id}: max_output_tokens exceeds context_length`);
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
  // A model reached through chat completions serves the Messages API by translation.
  if (m.messages_via === 'chat') endpoints.add('messages');
  const embeddingsOnly = servesEmbeddingsOnly(endpoints);
  if (m.pricing && m.pricing.output === undefined && !embeddingsOnly) throw fail(`model ${m.id}: pricing.output is required`);
  const pool =
    up?.pool ??
    ownPool(m.upstream_url ?? defaults.upstreamUrl, m.id, m.upstream_url ? `model ${m.id}: upstream_url` : 'UPSTREAM_URL', ownPools, fail);
  const hostedTools = hostedToolsOf(m.hosted_tools);
  const storedPrompts = storedPromptsOf(m.stored_prompts, hostedTools);
  if (typeof storedPrompts === 'string') throw fail(`model ${m.id}: ${storedPrompts}`);
  return {
    id: m.id,
    upstreamModel: m.upstream_model ?? m.id,
    idJson: modelValue(m.id),
    upstreamUrl: pool.servers[0].url,
    pool,
    fallbacks: m.fallbacks,
    upstreamApiKey: up ? up.apiKey : defaults.upstreamApiKey,
    contextLength: m.context_length,
    // The schema requires max_output_tokens of every model with outputs.
    maxOutputTokens: embeddingsOnly ? 0 : (m.max_output_tokens ?? 0),
    dimensions: m.dimensions,
    inputWeight: weight.input,
    cachedInputWeight: weight.cached_input ?? weight.input,
    cacheWriteWeight: weight.cache_write ?? weight.input,
    outputWeight: weight.output,
    streamIncludeUsage: m.stream_include_usage ?? up?.stream_include_usage ?? true,
    drainMs: (m.drain_seconds ?? up?.drain_seconds ?? defaults.drainSeconds ?? DEFAULT_DRAIN_SECONDS) * 1000,
    outputCapFields: outputCapFields(m.output_cap_fields, up?.output_cap_fields),
    endpoints,
    capabilities: {
      tools: caps.tools,
      jsonMode: caps.json_mode,
      vision: caps.vision,
      developerRole: caps.developer_role === 'system' ? 'system' : caps.developer_role ? 'native' : 'refuse',
      sampling: caps.sampling_parameters ? new Set(caps.sampling_parameters) : null,
    },
    messagesVia: m.messages_via,
    hostedTools,
    storedPrompts,
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
}

/** Models naming the same URL share its pool of one (and so its in-flight count), shown by the first one's id. */
function ownPool(url: string, modelId: string, where: string, ownPools: Map<string, PoolSpec>, fail: (msg: string) => Error): PoolSpec {
  const spec = singleServerPool(url, modelId, where, fail);
  const known = ownPools.get(spec.key);
  if (known) return known;
  ownPools.set(spec.key, spec);
  return spec;
}

/**
 * Each fallback names another served model, and following fallbacks never comes back to where it began (only one
 * level is tried per request, but a cycle says the file was not thought through: A down sends to B, B down to A).
 */
function checkFallbacks(models: readonly Model[], byName: Map<string, Model>, fail: (msg: string) => Error): void {
  for (const model of models) {
    for (const name of model.fallbacks) {
      const other = byName.get(name);
      if (!other) throw fail(`model ${model.id}: fallback ${name} is not a served model`);
      if (other === model) throw fail(`model ${model.id}: names itself as a fallback`);
    }
  }
  const done = new Set<Model>();
  const visit = (model: Model, path: Model[]): void => {
    if (done.has(model)) return;
    const at = path.indexOf(model);
    if (at >= 0) throw fail(`model ${model.id}: its fallbacks form a cycle: ${[...path.slice(at), model].map((m) => m.id).join(' → ')}`);
    for (const name of model.fallbacks) visit(byName.get(name) as Model, [...path, model]);
    done.add(model);
  };
  for (const model of models) visit(model, []);
}

/** Upstream names and model names are two namespaces, shown side by side: one name in both is refused. */
function checkNamespaces(upstreams: Map<string, Upstream>, byName: Map<string, Model>, fail: (msg: string) => Error): void {
  for (const name of upstreams.keys()) {
    const model = byName.get(name);
    if (model)
      throw fail(`upstream ${name} has the name of model ${model.id}${model.id === name ? '' : ` (its alias ${name})`}: rename one`);
  }
}

/** Builds a catalog from already-parsed YAML/JSON content. */
export function buildCatalog(content: unknown, defaults: CatalogDefaults, source = 'models file'): Catalog {
  const file = parseModelsFile(content, source);
  const fail = (msg: string) => new ModelsFileError(`${source}: ${msg}`);
  const upstreams = upstreamsOf(file, defaults.env, fail);
  const loadedAt = Math.floor(Date.now() / 1000);
  const byName = new Map<string, Model>();
  const models: Model[] = [];
  const ownPools = new Map<string, PoolSpec>();
  for (const m of file.models) {
    const model = modelOf(m, upstreams, defaults, loadedAt, fail, ownPools);
    for (const name of [m.id, ...m.aliases]) {
      if (byName.has(name)) throw fail(`model name ${name} is listed twice`);
      byName.set(name, model);
    }
    models.push(model);
  }
  checkFallbacks(models, byName, fail);
  checkNamespaces(upstreams, byName, fail);
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
