/** A model's `capabilities` in the models file: what it accepts of a request, each with a permissive default. */
import { z } from 'zod';

/** Request parameters a model may accept or not (`capabilities.sampling_parameters`). */
export const SAMPLING_PARAMETERS = [
  'temperature',
  'top_p',
  'frequency_penalty',
  'presence_penalty',
  'seed',
  'stop',
  'n',
  'logprobs',
  'top_logprobs',
  'logit_bias',
  'top_k',
  'min_p',
  'repetition_penalty',
] as const;

export const capabilitiesSchema = z.strictObject({
  /** `tools` and `tool_choice`. Default true. */
  tools: z.boolean().default(true),
  /** `response_format` of type json_object or json_schema. Default true. */
  json_mode: z.boolean().default(true),
  /** Image content parts. Default true. */
  vision: z.boolean().default(true),
  /** `developer` messages: true (passed on), false (refused) or `system` (sent upstream as system). Default true. */
  developer_role: z.union([z.boolean(), z.literal('system')]).default(true),
  /** The sampling parameters the model accepts. Default: all. */
  sampling_parameters: z.array(z.enum(SAMPLING_PARAMETERS)).optional(),
});
