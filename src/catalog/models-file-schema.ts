/**
 * The models file's schema (zod), and its refusals in one line naming the entry and the field. Every field beyond the
 * core ones is optional with a permissive default; models.ts resolves what the schema cannot check alone.
 */
import { z } from 'zod';
import { limitsSchema } from '../limits/limits';
import { ENDPOINTS, NO_OUTPUT, type EndpointName } from './endpoints';
import { capabilitiesSchema } from './capabilities-schema';
import { messagesViaSchema } from './messages-via-schema';
import { hostedToolsSchema } from './hosted-tools';
import { storedPromptsSchema } from './stored-prompts';
import { outputCapFieldsSchema } from './output-caps';
import { drainSeconds, httpUrl, upstreamSchema } from './upstream-schema';

export { upstreamSchema };

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
  /**
   * Most completion tokens one request may ask for; the reservation when the client names none. Required unless the
   * model serves embeddings alone (which produce no output tokens).
   */
  max_output_tokens: z.number().int().positive().optional(),
  /** An embeddings model's vector length, shown on /v1/models and the model page (the upstream decides it). */
  dimensions: z.number().int().positive().optional(),
  /** The endpoints the model serves: chat, completions, embeddings, responses, messages. Default: chat, completions, responses. */
  endpoints: z
    .array(z.enum(ENDPOINTS, { error: `must be one of ${ENDPOINTS.join(', ')}` }))
    .min(1, 'must name at least one endpoint')
    .optional(),
  /**
   * Tokens charged per prompt token, per prompt token the upstream reports as read from its cache, per prompt token it
   * reports as written to its cache (Anthropic's `cache_creation_input_tokens`), and per completion token.
   * Default 1, the input weight, the input weight, and 1.
   */
  quota_weight: z
    .strictObject({
      input: z.number().positive().default(1),
      cached_input: z.number().nonnegative().optional(),
      cache_write: z.number().nonnegative().optional(),
      output: z.number().positive().default(1),
    })
    .default({ input: 1, output: 1 }),
  /** Ask the upstream for a usage chunk in streams. Default: the upstream's setting, else true. */
  stream_include_usage: z.boolean().optional(),
  /** Seconds a stream whose client left is still read for its usage. Default: the upstream's, else UPSTREAM_DRAIN_SECONDS. */
  drain_seconds: drainSeconds.optional(),
  /** The body fields each endpoint's output allowance is written into. Default: the upstream's, else output-caps.ts's. */
  output_cap_fields: outputCapFieldsSchema.optional(),
  /** How /v1/messages reaches an upstream that speaks only chat completions (messages-via-schema.ts). Default none. */
  messages_via: messagesViaSchema.optional(),
  capabilities: capabilitiesSchema.default({ tools: true, json_mode: true, vision: true, developer_role: true }),
  /** Hosted tools the model may be asked for, by type: `{web_search: {per_call_tokens: 2000}}`. Default none. */
  hosted_tools: hostedToolsSchema.optional(),
  /** Stored prompts (`prompt` on /v1/responses): `{reserve_tokens, hosted_tools}`. Default: refused. */
  stored_prompts: storedPromptsSchema.optional(),
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
  /** Models tried in order when this model's pool has no healthy server or every try failed (docs/upstream-pools.md). */
  fallbacks: z.array(z.string().min(1)).default([]),
  /** Unix time shown as `created` on /v1/models. Default: when the file was loaded. */
  created: z.number().int().nonnegative().optional(),
  /** Shown as `owned_by`. Default: the vendor part of the id. */
  owned_by: z.string().min(1).optional(),
});

/** Whether an entry's endpoints produce no output (embeddings, rerank, score alone; the default endpoints do). */
const embeddingsOnly = (endpoints: readonly EndpointName[] | undefined) =>
  endpoints !== undefined && endpoints.every((e) => NO_OUTPUT.has(e));

/** The output allowance a model with outputs must have; an embeddings-only model needs none. */
const modelEntrySchema = modelSchema.superRefine((m, ctx) => {
  if (m.max_output_tokens === undefined && !embeddingsOnly(m.endpoints))
    ctx.addIssue({
      code: 'custom',
      path: ['max_output_tokens'],
      message: 'is required (only a model that serves embeddings alone has no output)',
    });
  if (m.dimensions !== undefined && !m.endpoints?.includes('embeddings'))
    ctx.addIssue({ code: 'custom', path: ['dimensions'], message: 'applies only to a model that serves embeddings' });
});

export const fileSchema = z.strictObject({
  upstreams: z.array(upstreamSchema).default([]),
  models: z.array(modelEntrySchema).min(1, 'must list at least one model'),
});

export type ModelEntry = z.input<typeof modelSchema>;

export type ParsedFile = z.output<typeof fileSchema>;
export type ParsedModel = ParsedFile['models'][number];

export class ModelsFileError extends Error {
  override name = 'ModelsFileError';
}

/** The file's content checked against its schema; a refusal names the entry and field in one line. */
export function parseModelsFile(content: unknown, source: string): ParsedFile {
  const parsed = fileSchema.safeParse(content);
  if (parsed.success) return parsed.data;
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

function describeEntry(content: unknown, path: readonly PropertyKey[]): string {
  if (path[0] !== 'models' || typeof path[1] !== 'number') return '';
  const entry = (content as { models?: unknown[] }).models?.[path[1]] as { id?: unknown } | undefined;
  return typeof entry?.id === 'string' ? ` (${entry.id})` : '';
}
