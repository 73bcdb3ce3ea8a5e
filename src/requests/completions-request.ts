/** The legacy completions request body (`POST /v1/completions`): validated with zod; unknown fields pass untouched. */
import { z } from 'zod';
import { batchField, modelField, positiveInt, range, samplingFields, streamFields, validateBody } from './request-fields';

/** Most prompts one request may batch (OpenAI's limit for a prompt array). */
export const MAX_PROMPTS = 2048;

export const completionsRequestSchema = z
  .looseObject({
    model: modelField,
    prompt: batchField(MAX_PROMPTS, 'prompt'),
    suffix: z.string({ error: 'must be a string' }).nullish(),
    max_tokens: positiveInt.nullish(),
    n: positiveInt.max(128, 'must be at most 128').nullish(),
    best_of: positiveInt.max(20, 'must be at most 20').nullish(),
    echo: z.boolean({ error: 'must be a boolean' }).nullish(),
    logprobs: z.number({ error: 'must be an integer' }).int('must be an integer').min(0).max(5, 'must be between 0 and 5').nullish(),
    stop: z
      .union([z.string(), z.array(z.string()).max(4, 'must hold at most 4 sequences')], {
        error: 'must be a string or an array of strings',
      })
      .nullish(),
    seed: z.number({ error: 'must be an integer' }).int('must be an integer').nullish(),
    logit_bias: z.record(z.string(), range(-100, 100), { error: 'must be an object' }).nullish(),
    user: z.string({ error: 'must be a string' }).nullish(),
    ...samplingFields,
    ...streamFields,
  })
  .superRefine((r, ctx) => {
    // OpenAI: best_of completions are generated server-side and the best n returned, so it must cover n.
    if (r.best_of != null && r.best_of < (r.n ?? 1)) ctx.addIssue({ code: 'custom', path: ['best_of'], message: 'must be at least n' });
  });

export type CompletionsRequest = z.infer<typeof completionsRequestSchema>;

export function validateCompletionsRequest(body: unknown) {
  return validateBody<CompletionsRequest>(completionsRequestSchema, body);
}
