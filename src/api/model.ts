/** A served model as `/v1/models` and the console list it: the OpenAI model object plus limits, capabilities, pricing. */
import { z } from 'zod';
import { ENDPOINTS } from '../catalog/endpoints';
import { SAMPLING_PARAMETERS } from '../catalog/capabilities-schema';
import { servesEmbeddingsOnly, type Model } from '../catalog/models';

export const modelSchema = z.strictObject({
  id: z.string(),
  object: z.literal('model'),
  created: z.number().int(),
  owned_by: z.string(),
  context_length: z.number().int(),
  /** Absent for a model that serves embeddings alone: it produces no output. */
  max_output_tokens: z.number().int().optional(),
  /** An embeddings model's vector length, when the models file gives it. */
  dimensions: z.number().int().optional(),
  /** What a chat model accepts; absent for a model that serves embeddings alone (none of it applies). */
  capabilities: z
    .strictObject({
      tools: z.boolean(),
      json_mode: z.boolean(),
      vision: z.boolean(),
      developer_role: z.union([z.boolean(), z.literal('system')]),
      sampling_parameters: z.array(z.string()),
    })
    .optional(),
  /** The endpoints it serves. */
  endpoints: z.array(z.enum(ENDPOINTS)),
  /**
   * What one token draws from a token package (the models file's `quota_weight`): a prompt token, a prompt token the
   * upstream served from its cache, a completion token. 4 drains a package four times as fast as 1. No `output` for
   * a model that serves embeddings alone.
   */
  quota_weight: z.strictObject({ input: z.number(), cached_input: z.number(), output: z.number().optional() }),
  /**
   * Per million tokens (`cached_input` only where it differs from `input`); null: not priced. No `output` for a model
   * that serves embeddings alone.
   */
  pricing: z
    .strictObject({
      input: z.number(),
      cached_input: z.number().optional(),
      output: z.number().optional(),
      currency: z.string(),
      unit: z.literal('per_million_tokens'),
    })
    .nullable(),
  /**
   * The hosted tools (run by the upstream) the model may be asked for, by type, with the tokens charged per call and
   * the most calls per request; absent when it allows none (function and custom tools only).
   */
  hosted_tools: z.record(z.string(), z.strictObject({ per_call_tokens: z.number().int(), max_calls: z.number().int() })).optional(),
});
export type ModelObject = z.infer<typeof modelSchema>;

export function modelObject(m: Model): ModelObject {
  const c = m.capabilities;
  const embeddingsOnly = servesEmbeddingsOnly(m.endpoints);
  return {
    id: m.id,
    object: 'model',
    created: m.created,
    owned_by: m.ownedBy,
    context_length: m.contextLength,
    ...(embeddingsOnly ? {} : { max_output_tokens: m.maxOutputTokens }),
    ...(m.dimensions === undefined ? {} : { dimensions: m.dimensions }),
    ...(embeddingsOnly
      ? {}
      : {
          capabilities: {
            tools: c.tools,
            json_mode: c.jsonMode,
            vision: c.vision,
            developer_role: c.developerRole === 'system' ? 'system' : c.developerRole === 'native',
            sampling_parameters: c.sampling ? [...c.sampling] : [...SAMPLING_PARAMETERS],
          },
        }),
    endpoints: [...m.endpoints],
    quota_weight: weightObject(m),
    pricing: m.pricing ? pricingObject(m.pricing) : null,
    ...(m.hostedTools.size > 0 ? { hosted_tools: hostedToolsObject(m) } : {}),
  };
}

/** The allowed hosted tools, without the ids the models file shares on them (they are the operator's to give). */
function hostedToolsObject(m: Model): NonNullable<ModelObject['hosted_tools']> {
  const tools: NonNullable<ModelObject['hosted_tools']> = {};
  for (const [type, t] of m.hostedTools) tools[type] = { per_call_tokens: t.perCallTokens, max_calls: t.maxCalls };
  return tools;
}

function weightObject(m: Model): ModelObject['quota_weight'] {
  const input = { input: m.inputWeight, cached_input: m.cachedInputWeight };
  return servesEmbeddingsOnly(m.endpoints) ? input : { ...input, output: m.outputWeight };
}

function pricingObject(p: NonNullable<Model['pricing']>): NonNullable<ModelObject['pricing']> {
  const cached = p.cachedInput !== p.input ? { cached_input: p.cachedInput } : {};
  const output = p.output === undefined ? {} : { output: p.output };
  return { input: p.input, ...cached, ...output, currency: p.currency, unit: 'per_million_tokens' };
}

/** `GET /v1/models`, `GET /console/api/models`. */
export const modelListSchema = z.strictObject({ object: z.literal('list'), data: z.array(modelSchema) });
export type ModelListObject = z.infer<typeof modelListSchema>;

export function modelListObject(models: readonly Model[]): ModelListObject {
  return { object: 'list', data: models.map(modelObject) };
}

/** `POST /admin/models/reload`: the models file read again; `models` is how many it now serves. */
export const modelsReloadedSchema = z.strictObject({ reloaded: z.literal(true), models: z.number().int() });
export type ModelsReloadedObject = z.infer<typeof modelsReloadedSchema>;
