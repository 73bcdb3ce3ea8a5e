/**
 * The body fields that cap an upstream's output tokens. Every field some server reads as a cap is ours to write: the
 * endpoint's fields (by default, or as the models file names them per upstream or model) carry the reservation's
 * allowance, and a client's value in any other is removed, so no cap escapes the reservation.
 */
import { z } from 'zod';
import type { EndpointName } from './endpoints';

/** The endpoints that produce output tokens. */
export type OutputEndpoint = Exclude<EndpointName, 'embeddings' | 'rerank' | 'score'>;

/**
 * Every field known to cap output somewhere: OpenAI's (`max_tokens`, `max_completion_tokens`, `max_output_tokens`),
 * llama.cpp's `n_predict`, Hugging Face TGI's `max_new_tokens`, Ollama's `num_predict`, and Transformers' `max_length`.
 */
export const OUTPUT_CAP_FIELDS: readonly string[] = [
  'max_tokens',
  'max_completion_tokens',
  'max_output_tokens',
  'n_predict',
  'max_new_tokens',
  'num_predict',
  'max_length',
];

/**
 * The fields the allowance goes into when the models file names none. Chat: both of OpenAI's, since vLLM, Ollama,
 * llama.cpp and TGI read `max_tokens` and ignore what they do not know, while newer servers read
 * `max_completion_tokens`; hosted OpenAI's reasoning models refuse `max_tokens`, so name `[max_completion_tokens]` there.
 */
export const DEFAULT_OUTPUT_CAP_FIELDS: Readonly<Record<OutputEndpoint, readonly string[]>> = {
  chat: ['max_tokens', 'max_completion_tokens'],
  completions: ['max_tokens'],
  responses: ['max_output_tokens'],
  // Anthropic's Messages API (vLLM's and llama.cpp's too) reads `max_tokens` alone.
  messages: ['max_tokens'],
};

const fields = z
  .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a field name'))
  .min(1, 'must name at least one field')
  .optional();

/** `output_cap_fields` of an upstream or a model: the fields each endpoint's allowance goes into. */
export const outputCapFieldsSchema = z.strictObject({ chat: fields, completions: fields, responses: fields, messages: fields });

export type OutputCapFieldsEntry = z.output<typeof outputCapFieldsSchema>;

/** Each endpoint's fields: the model's, else its upstream's, else the default. */
export function outputCapFields(
  model: OutputCapFieldsEntry | undefined,
  upstream: OutputCapFieldsEntry | undefined,
): Readonly<Record<OutputEndpoint, readonly string[]>> {
  const pick = (e: OutputEndpoint) => model?.[e] ?? upstream?.[e] ?? DEFAULT_OUTPUT_CAP_FIELDS[e];
  return { chat: pick('chat'), completions: pick('completions'), responses: pick('responses'), messages: pick('messages') };
}
