/**
 * POST /v1/rerank and /v1/score on the metered pipeline: a query and documents (or pairs of texts) in, scores out,
 * charged the upstream's `usage` (`prompt_tokens`, else `total_tokens`: vLLM's rerank reports only that) at the input
 * weight. Each pair is its own context window: one longer than the model's context is refused; the reservation is the
 * pairs' bound (the query counted with every document, as the model reads it).
 */
import type { EndpointName } from '../../catalog/endpoints';
import { validateRerankRequest, validateScoreRequest, type RerankRequest, type ScoreRequest } from '../../requests/rerank-request';
import { BatchPromptSize } from '../../metering/batch-prompt';
import type { Validated, Endpoint } from '../pipeline/endpoint';
import type { Usage } from '../usage';

const count = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

/** The input tokens an answer reports: `usage.prompt_tokens`, else `usage.total_tokens`; nothing is output. */
function scoredUsage(answer: Record<string, unknown>): Usage | undefined {
  const usage = answer.usage as { prompt_tokens?: unknown; total_tokens?: unknown } | undefined;
  if (typeof usage !== 'object' || usage === null) return undefined;
  const tokens = count(usage.prompt_tokens) ? usage.prompt_tokens : usage.total_tokens;
  return count(tokens) ? { promptTokens: tokens, completionTokens: 0 } : undefined;
}

/** The endpoint of a request type `R` whose pairs are `items` each read with `extra`. */
function pairsEndpoint<R extends { model: string }>(
  name: EndpointName,
  validate: (body: unknown) => Validated<R>,
  pairs: (request: R) => { items: string[]; extra: string },
  field: string,
): Endpoint<R> {
  return {
    name,
    validate,
    modelName: (request) => request.model,
    unsupported: () => undefined,
    outputCap: () => undefined,
    choices: () => 0,
    prompt: (request) => {
      const { items, extra } = pairs(request);
      return new BatchPromptSize(items, extra);
    },
    promptWords: { noun: 'the longest pair takes', field },
    stream: () => false,
    upstreamBody: (request, model) => ({ body: { ...request, model: model.upstreamModel }, hideUsage: false }),
    answer: { relay: 'parse', usage: scoredUsage, outputTexts: () => [] },
  };
}

const docText = (d: string | { text: string }) => (typeof d === 'string' ? d : d.text);

export const rerankEndpoint = pairsEndpoint<RerankRequest>(
  'rerank',
  validateRerankRequest,
  (request) => ({ items: request.documents.map(docText), extra: request.query }),
  'documents',
);

export const scoreEndpoint = pairsEndpoint<ScoreRequest>(
  'score',
  validateScoreRequest,
  (request) => {
    const two = Array.isArray(request.text_2) ? request.text_2 : [request.text_2];
    // One text_1 scored against each text_2, or the lists paired one to one.
    if (!Array.isArray(request.text_1)) return { items: two, extra: request.text_1 };
    const one = request.text_1;
    return { items: one.length === 1 ? two : one.map((t, i) => t + two[i]), extra: one.length === 1 ? one[0] : '' };
  },
  'text_2',
);
