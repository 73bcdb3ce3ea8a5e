/** The Responses API request body (`POST /v1/responses`): validated with zod; unknown fields pass untouched. */
import { z } from 'zod';
import { modelField, positiveInt, samplingFields, streamFields, validateBody } from './request-fields';

const ROLES = ['system', 'developer', 'user', 'assistant'] as const;

const contentPart = z.looseObject({ type: z.string({ error: 'must be a string naming the part type' }) });

/**
 * An input item: a message (`role` and `content`, `type` "message" or absent), or another item (a function call, its
 * output, a reasoning item, an item reference) that names its `type`.
 */
const inputItem = z
  .looseObject(
    {
      type: z.string({ error: 'must be a string' }).optional(),
      role: z.enum(ROLES, { error: `must be one of ${ROLES.join(', ')}` }).optional(),
      content: z.union([z.string(), z.array(contentPart)], { error: 'must be a string or an array of content parts' }).optional(),
    },
    { error: 'must be an input item object' },
  )
  .superRefine((item, ctx) => {
    if (item.role === undefined && (item.type === undefined || item.type === 'message')) {
      ctx.addIssue({ code: 'custom', path: ['role'], message: 'is required for a message' });
    } else if (item.role !== undefined && item.content === undefined) {
      ctx.addIssue({ code: 'custom', path: ['content'], message: 'is required' });
    }
  });

export const responsesRequestSchema = z.looseObject({
  model: modelField,
  input: z.union([z.string(), z.array(inputItem).min(1, 'must not be empty')], { error: 'must be a string or an array of input items' }),
  instructions: z.string({ error: 'must be a string' }).nullish(),
  max_output_tokens: positiveInt.nullish(),
  tools: z
    .array(z.looseObject({ type: z.string({ error: 'must be a string' }) }, { error: 'must be an object' }), { error: 'must be an array' })
    .nullish(),
  max_tool_calls: z.number({ error: 'must be an integer' }).int('must be an integer').min(0, 'must not be negative').nullish(),
  tool_choice: z.union([z.string(), z.looseObject({})], { error: 'must be a string or an object' }).nullish(),
  text: z
    .looseObject(
      { format: z.looseObject({ type: z.string({ error: 'must be a string' }) }, { error: 'must be an object' }).optional() },
      { error: 'must be an object' },
    )
    .nullish(),
  reasoning: z.looseObject({}, { error: 'must be an object' }).nullish(),
  /** A stored prompt: its variables are strings or input parts (text, image, file). */
  prompt: z
    .looseObject(
      {
        id: z.string({ error: 'must be a string' }).min(1, 'must not be empty'),
        version: z.string({ error: 'must be a string' }).nullish(),
        variables: z
          .record(z.string(), z.union([z.string(), contentPart], { error: 'must be a string or an input part' }), {
            error: 'must be an object',
          })
          .nullish(),
      },
      { error: 'must be an object' },
    )
    .nullish(),
  previous_response_id: z.string({ error: 'must be a string' }).min(1, 'must not be empty').nullish(),
  background: z.boolean({ error: 'must be a boolean' }).nullish(),
  store: z.boolean({ error: 'must be a boolean' }).nullish(),
  top_logprobs: z.number({ error: 'must be an integer' }).int('must be an integer').min(0).max(20, 'must be between 0 and 20').nullish(),
  user: z.string({ error: 'must be a string' }).nullish(),
  temperature: samplingFields.temperature,
  top_p: samplingFields.top_p,
  stream: streamFields.stream,
});

export type ResponsesRequest = z.infer<typeof responsesRequestSchema>;
export type ResponsesInputItem = Exclude<ResponsesRequest['input'], string>[number];

export function validateResponsesRequest(body: unknown) {
  return validateBody<ResponsesRequest>(responsesRequestSchema, body);
}
