/**
 * The Anthropic Messages API request body (`POST /v1/messages`, and `/v1/messages/count_tokens` without `max_tokens`):
 * validated with zod, Anthropic's ranges (temperature 0 to 1); unknown fields pass untouched.
 */
import { z } from 'zod';
import { modelField, positiveInt, range, validateBody } from './request-fields';

const typed = z.looseObject({ type: z.string({ error: 'must be a string naming the block type' }) }, { error: 'must be a content block' });

const message = z.looseObject(
  {
    role: z.enum(['user', 'assistant'], { error: 'must be user or assistant' }),
    content: z.union([z.string(), z.array(typed)], { error: 'must be a string or an array of content blocks' }),
  },
  { error: 'must be a message object' },
);

const systemBlock = z.looseObject(
  { type: z.literal('text', { error: 'must be text' }), text: z.string({ error: 'must be a string' }) },
  { error: 'must be a text block' },
);

/**
 * A tool: the client's own (`name` and `input_schema`; `type` "custom" or absent), or one of Anthropic's tools that
 * names its versioned `type` (`web_search_20250305`, `bash_20250124`, …).
 */
const tool = z.looseObject(
  { type: z.string({ error: 'must be a string' }).optional(), name: z.string({ error: 'must be a string' }).min(1, 'must not be empty') },
  { error: 'must be a tool object' },
);

const thinking = z.looseObject(
  {
    type: z.enum(['enabled', 'disabled', 'adaptive'], { error: 'must be enabled, disabled or adaptive' }),
    budget_tokens: positiveInt.optional(),
  },
  { error: 'must be an object' },
);

/** What count_tokens reads: the prompt's fields. */
const promptFields = {
  model: modelField,
  messages: z.array(message, { error: 'must be an array of messages' }).min(1, 'must not be empty'),
  system: z.union([z.string(), z.array(systemBlock)], { error: 'must be a string or an array of text blocks' }).optional(),
  tools: z.array(tool, { error: 'must be an array of tools' }).optional(),
  tool_choice: z
    .looseObject(
      { type: z.enum(['auto', 'any', 'tool', 'none'], { error: 'must be auto, any, tool or none' }) },
      { error: 'must be an object' },
    )
    .optional(),
  thinking: thinking.optional(),
};

export const countTokensRequestSchema = z.looseObject(promptFields);

export const messagesRequestSchema = z
  .looseObject({
    ...promptFields,
    max_tokens: z.number({ error: 'is required and must be an integer' }).int('must be an integer').positive('must be at least 1'),
    temperature: range(0, 1).optional(),
    top_p: range(0, 1).optional(),
    top_k: z.number({ error: 'must be an integer' }).int('must be an integer').nonnegative('must not be negative').optional(),
    stop_sequences: z.array(z.string({ error: 'must be a string' }), { error: 'must be an array of strings' }).optional(),
    metadata: z.looseObject({ user_id: z.string({ error: 'must be a string' }).nullish() }, { error: 'must be an object' }).optional(),
    stream: z.boolean({ error: 'must be a boolean' }).optional(),
  })
  .superRefine((body, ctx) => {
    const budget = body.thinking?.budget_tokens;
    if (body.thinking?.type === 'enabled' && budget === undefined) {
      ctx.addIssue({ code: 'custom', path: ['thinking', 'budget_tokens'], message: 'is required when thinking is enabled' });
    } else if (budget !== undefined && budget > body.max_tokens) {
      // Thinking is output: its budget is part of max_tokens, which the reservation covers.
      ctx.addIssue({ code: 'custom', path: ['thinking', 'budget_tokens'], message: 'must not exceed max_tokens' });
    }
  });

export type MessagesRequest = z.infer<typeof messagesRequestSchema>;
export type CountTokensRequest = z.infer<typeof countTokensRequestSchema>;

export function validateMessagesRequest(body: unknown) {
  return validateBody<MessagesRequest>(messagesRequestSchema, body);
}

export function validateCountTokensRequest(body: unknown) {
  return validateBody<CountTokensRequest>(countTokensRequestSchema, body);
}
