/**
 * The rerank and score request bodies, as vLLM takes them (`POST /v1/rerank`: Jina's and Cohere's shape; `POST
 * /v1/score`) and llama.cpp's rerank: validated with zod; unknown fields pass untouched.
 */
import { z } from 'zod';
import { modelField, positiveInt, validateBody } from './request-fields';

/** Most documents or pairs one request may score (as embeddings' inputs). */
export const MAX_DOCUMENTS = 2048;

const text = z.string({ error: 'must be a string' });
const document = z.union([text, z.looseObject({ text })], { error: 'must be a string or an object with a text' });

export const rerankRequestSchema = z.looseObject({
  model: modelField,
  query: text,
  documents: z
    .array(document, { error: 'must be an array of documents' })
    .min(1, 'must not be empty')
    .max(MAX_DOCUMENTS, `must hold at most ${MAX_DOCUMENTS} documents`),
  top_n: positiveInt.nullish(),
});

const texts = z.union([text, z.array(text).min(1, 'must not be empty').max(MAX_DOCUMENTS, `must hold at most ${MAX_DOCUMENTS} texts`)], {
  error: 'must be a string or an array of strings',
});

export const scoreRequestSchema = z.looseObject({ model: modelField, text_1: texts, text_2: texts }).superRefine((body, ctx) => {
  const one = Array.isArray(body.text_1) ? body.text_1.length : 1;
  const two = Array.isArray(body.text_2) ? body.text_2.length : 1;
  if (one > 1 && one !== two) ctx.addIssue({ code: 'custom', path: ['text_2'], message: 'must hold as many texts as text_1' });
});

export type RerankRequest = z.infer<typeof rerankRequestSchema>;
export type ScoreRequest = z.infer<typeof scoreRequestSchema>;

export function validateRerankRequest(body: unknown) {
  return validateBody<RerankRequest>(rerankRequestSchema, body);
}

export function validateScoreRequest(body: unknown) {
  return validateBody<ScoreRequest>(scoreRequestSchema, body);
}
