/** The embeddings request body (`POST /v1/embeddings`): validated with zod; unknown fields pass untouched. */
import { z } from 'zod';
import { batchField, modelField, positiveInt, validateBody } from './request-fields';

/** Most inputs one request may embed (OpenAI's limit for an input array). */
export const MAX_EMBEDDING_INPUTS = 2048;

export const embeddingsRequestSchema = z.looseObject({
  model: modelField,
  input: batchField(MAX_EMBEDDING_INPUTS, 'input'),
  encoding_format: z.enum(['float', 'base64'], { error: "must be 'float' or 'base64'" }).nullish(),
  dimensions: positiveInt.nullish(),
  user: z.string({ error: 'must be a string' }).nullish(),
});

export type EmbeddingsRequest = z.infer<typeof embeddingsRequestSchema>;

export function validateEmbeddingsRequest(body: unknown) {
  return validateBody<EmbeddingsRequest>(embeddingsRequestSchema, body);
}
