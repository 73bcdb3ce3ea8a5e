/**
 * A model's stored prompts (`stored_prompts` in the models file): whether `prompt: {id, version, variables}` on
 * /v1/responses may name a prompt template kept upstream, the most input a template adds (the proxy never sees it), and
 * the hosted tools templates may carry. Without an entry a stored prompt is refused: its input would escape the
 * reservation, its tools the hosted-tool rules.
 */
import { z } from 'zod';

export const storedPromptsSchema = z.strictObject({
  /** Tokens reserved for a template's own input (instructions, messages, tool definitions), on top of the request's. */
  reserve_tokens: z.number().int().positive(),
  /** Hosted tool types a template may carry, each one the model's `hosted_tools` allows (priced there). Default none. */
  hosted_tools: z.array(z.string().min(1)).default([]),
});

/** Stored prompts, resolved; a model without them refuses `prompt`. */
export interface StoredPrompts {
  reserveTokens: number;
  /** A tool list as a request names it (`[{type}]`): the hosted tool plan counts them as the request's own. */
  hostedTools: readonly { type: string }[];
}

/** The entry resolved, or a refusal naming a hosted tool the model does not price. */
export function storedPromptsOf(
  entry: z.output<typeof storedPromptsSchema> | undefined,
  priced: ReadonlyMap<string, unknown>,
): StoredPrompts | string | undefined {
  if (!entry) return undefined;
  const unpriced = entry.hosted_tools.find((type) => !priced.has(type));
  if (unpriced !== undefined) return `stored_prompts.hosted_tools names ${unpriced}, which hosted_tools does not allow`;
  return { reserveTokens: entry.reserve_tokens, hostedTools: entry.hosted_tools.map((type) => ({ type })) };
}
