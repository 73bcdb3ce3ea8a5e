/** The zod pieces the endpoints' request schemas share: counts, §8's ranges, `stream_options`, a body that is an object. */
import { z, type ZodType } from 'zod';
import { apiError } from '../http/errors';
import { invalidRequest } from '../http/zod-errors';
import type { ApiError } from '../http/errors';

export const positiveInt = z.number({ error: 'must be an integer' }).int('must be an integer').positive('must be at least 1');

export const range = (min: number, max: number) =>
  z.number({ error: 'must be a number' }).min(min, `must be between ${min} and ${max}`).max(max, `must be between ${min} and ${max}`);

/** §8: temperature 0 to 2, the penalties -2 to 2; top_p 0 to 1. */
export const samplingFields = {
  temperature: range(0, 2).nullish(),
  top_p: range(0, 1).nullish(),
  frequency_penalty: range(-2, 2).nullish(),
  presence_penalty: range(-2, 2).nullish(),
};

export const streamFields = {
  stream: z.boolean({ error: 'must be a boolean' }).nullish(),
  stream_options: z
    .looseObject({ include_usage: z.boolean({ error: 'must be a boolean' }).optional() }, { error: 'must be an object' })
    .nullish(),
};

export const modelField = z.string({ error: 'is required and must be a string' }).min(1, 'must not be empty');

const tokenId = z.number({ error: 'must be a token id' }).int('must be a token id').nonnegative('must be a token id');

/**
 * A batch field (`prompt`, `input`): a string, strings, a token array or token arrays (not mixed), at most `max` items,
 * none empty. `what` names an item in the messages.
 */
export function batchField(max: number, what: string) {
  const text = z.string({ error: 'must be a string' }).min(1, 'must not be empty');
  const tokens = z.array(tokenId, { error: 'must be an array of token ids' }).min(1, 'must not be empty');
  return z
    .union(
      [
        text,
        z
          .array(z.union([text, tokenId, tokens], { error: 'must be a string, a token id or an array of token ids' }))
          .min(1, 'must not be empty'),
      ],
      {
        error: 'must be a string, an array of strings, an array of token ids or an array of such arrays',
      },
    )
    .superRefine((value, ctx) => {
      if (typeof value === 'string') return;
      const kinds = new Set(value.map((v) => (typeof v === 'string' ? 'string' : typeof v === 'number' ? 'id' : 'array')));
      if (kinds.size > 1) ctx.addIssue({ code: 'custom', message: 'must not mix strings, token ids and token arrays' });
      else if (!kinds.has('id') && value.length > max) ctx.addIssue({ code: 'custom', message: `must hold at most ${max} ${what}s` });
    });
}

/** Validates a body that must be a JSON object; passes the body itself on (unknown fields travel untouched). */
export function validateBody<T>(schema: ZodType, body: unknown): { ok: true; request: T } | { ok: false; error: ApiError } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, error: apiError('invalid_request_error', 'The request body must be a JSON object.') };
  }
  const parsed = schema.safeParse(body);
  if (parsed.success) return { ok: true, request: body as T };
  return { ok: false, error: invalidRequest(parsed.error) };
}
