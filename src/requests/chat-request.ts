/** The chat completion request body (spec §2.1, §2.2, §8): validated with zod; unknown fields pass through untouched. */
import { z } from 'zod';
import { apiError, type ApiError } from '../http/errors';
import { invalidRequest } from '../http/zod-errors';

const ROLES = ['system', 'developer', 'user', 'assistant', 'tool'] as const;

const contentPart = z.looseObject({ type: z.string({ error: 'must be a string naming the part type' }) });

const message = z
  .looseObject({
    role: z.enum(ROLES, { error: `must be one of ${ROLES.join(', ')}` }),
    content: z.union([z.string(), z.array(contentPart)], { error: 'must be a string or an array of content parts' }).nullish(),
    name: z.string().optional(),
  })
  .superRefine((m, ctx) => {
    // An assistant turn that only calls tools may carry no content; every other turn must have some.
    if ((m.content === undefined || m.content === null) && m.role !== 'assistant') {
      ctx.addIssue({ code: 'custom', path: ['content'], message: 'is required' });
    }
  });

const positiveInt = z.number({ error: 'must be an integer' }).int('must be an integer').positive('must be at least 1');
const range = (min: number, max: number) =>
  z.number({ error: 'must be a number' }).min(min, `must be between ${min} and ${max}`).max(max, `must be between ${min} and ${max}`);

export const chatRequestSchema = z.looseObject({
  model: z.string({ error: 'is required and must be a string' }).min(1, 'must not be empty'),
  messages: z.array(message, { error: 'is required and must be an array of messages' }).min(1, 'must contain at least one message'),
  temperature: range(0, 2).nullish(),
  top_p: range(0, 1).nullish(),
  frequency_penalty: range(-2, 2).nullish(),
  presence_penalty: range(-2, 2).nullish(),
  max_tokens: positiveInt.nullish(),
  max_completion_tokens: positiveInt.nullish(),
  n: positiveInt.max(128, 'must be at most 128').nullish(),
  stream: z.boolean({ error: 'must be a boolean' }).nullish(),
  stream_options: z
    .looseObject({ include_usage: z.boolean({ error: 'must be a boolean' }).optional() }, { error: 'must be an object' })
    .nullish(),
  response_format: z.looseObject({ type: z.string({ error: 'must be a string' }) }, { error: 'must be an object' }).nullish(),
  tools: z.array(z.looseObject({}, { error: 'must be an object' }), { error: 'must be an array' }).nullish(),
  tool_choice: z.union([z.string(), z.looseObject({})], { error: 'must be a string or an object' }).nullish(),
});

export type ChatRequest = z.infer<typeof chatRequestSchema>;
export type ChatMessage = ChatRequest['messages'][number];

export type Validated = { ok: true; request: ChatRequest } | { ok: false; error: ApiError };

export function validateChatRequest(body: unknown): Validated {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { ok: false, error: apiError('invalid_request_error', 'The request body must be a JSON object.') };
  }
  const parsed = chatRequestSchema.safeParse(body);
  if (parsed.success) return { ok: true, request: body as ChatRequest };
  return { ok: false, error: invalidRequest(parsed.error) };
}

/**
 * The completion-token limit the client asked for, and the field it used: with both fields, the smaller (what it
 * asked for is what neither exceeds).
 */
export function requestedMaxTokens(req: ChatRequest): { field: 'max_tokens' | 'max_completion_tokens'; value: number | undefined } {
  const completion = req.max_completion_tokens ?? undefined;
  const max = req.max_tokens ?? undefined;
  if (completion !== undefined && (max === undefined || completion <= max)) return { field: 'max_completion_tokens', value: completion };
  return { field: 'max_tokens', value: max };
}
