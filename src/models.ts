/** The models file: which models we serve, where each goes upstream and its limits. Parsed once at start. */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

const modelSchema = z.object({
  /** What clients send as `model`: `<vendor>/<model_name>`. */
  id: z.string().regex(/^[^\s/]+\/[^\s]+$/, 'must look like <vendor>/<model_name>'),
  /** The name sent upstream. Default: the id. */
  upstream_model: z.string().min(1).optional(),
  /** The upstream's base URL including /v1. Default: UPSTREAM_URL. */
  upstream_url: z
    .string()
    .url()
    .refine((v) => /^https?:\/\//.test(v), 'must be an http:// or https:// URL')
    .optional(),
  /** Context window in tokens (prompt plus completion). */
  context_length: z.number().int().positive(),
  /** Most completion tokens one request may ask for; the reservation when the client names none. */
  max_output_tokens: z.number().int().positive(),
  /** Tokens charged per prompt and per completion token. Default 1 and 1. */
  quota_weight: z
    .object({ input: z.number().positive().default(1), output: z.number().positive().default(1) })
    .default({ input: 1, output: 1 }),
  /** Ask the upstream for a usage chunk in streams (`stream_options.include_usage`). Default true. */
  stream_include_usage: z.boolean().default(true),
});

const fileSchema = z.object({
  models: z.array(modelSchema).min(1, 'must list at least one model'),
});

export type ModelEntry = z.infer<typeof modelSchema>;

/** A served model, with defaults resolved. */
export interface Model {
  id: string;
  upstreamModel: string;
  upstreamUrl: string;
  contextLength: number;
  maxOutputTokens: number;
  inputWeight: number;
  outputWeight: number;
  streamIncludeUsage: boolean;
}

export interface Catalog {
  get(id: string): Model | undefined;
  list(): readonly Model[];
}

export class ModelsFileError extends Error {
  override name = 'ModelsFileError';
}

/** Builds a catalog from already-parsed YAML/JSON content. */
export function buildCatalog(content: unknown, defaults: { upstreamUrl: string }, source = 'models file'): Catalog {
  const parsed = fileSchema.safeParse(content);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue.path.length
      ? issue.path
          .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
          .join('')
          .replace(/^\./, '')
      : 'top level';
    const entry = describeEntry(content, issue.path);
    throw new ModelsFileError(`${source}: ${where}${entry}: ${issue.message}`);
  }
  const byId = new Map<string, Model>();
  for (const m of parsed.data.models) {
    if (byId.has(m.id)) throw new ModelsFileError(`${source}: model ${m.id} is listed twice`);
    if (m.max_output_tokens > m.context_length) {
      throw new ModelsFileError(`${source}: model ${m.id}: max_output_tokens exceeds context_length`);
    }
    byId.set(m.id, {
      id: m.id,
      upstreamModel: m.upstream_model ?? m.id,
      upstreamUrl: (m.upstream_url ?? defaults.upstreamUrl).replace(/\/+$/, ''),
      contextLength: m.context_length,
      maxOutputTokens: m.max_output_tokens,
      inputWeight: m.quota_weight.input,
      outputWeight: m.quota_weight.output,
      streamIncludeUsage: m.stream_include_usage,
    });
  }
  const list = [...byId.values()];
  return { get: (id) => byId.get(id), list: () => list };
}

export function loadCatalog(file: string, defaults: { upstreamUrl: string }): Catalog {
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

function describeEntry(content: unknown, path: readonly PropertyKey[]): string {
  if (path[0] !== 'models' || typeof path[1] !== 'number') return '';
  const entry = (content as { models?: unknown[] }).models?.[path[1]] as { id?: unknown } | undefined;
  return typeof entry?.id === 'string' ? ` (${entry.id})` : '';
}
