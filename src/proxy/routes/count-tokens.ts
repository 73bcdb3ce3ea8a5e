/**
 * POST /v1/messages/count_tokens: a Messages prompt's tokens, free of charge (nothing reserved, nothing billed, no
 * ledger record). Asked of the model's upstream when it serves the route (vLLM and llama.cpp do), so the count is its
 * tokenizer's; an upstream that answers 404, 405 or 501 does not, and the prompt is counted here instead.
 */
import type { Request, Response } from 'express';
import { ENDPOINT_PATHS } from '../../catalog/endpoints';
import type { Catalog, Model } from '../../catalog/models';
import { apiError, sendError } from '../../http/errors';
import type { UpstreamHeaders } from '../../http/http-headers';
import { validateCountTokensRequest, type CountTokensRequest } from '../../requests/messages-request';
import { messagesPrompt } from '../../metering/messages-prompt';
import { countPrompt, type TokenCounter } from '../../metering/prompt-counter';
import { liveKey, requestFacts, servedBy } from '../../http/request-context';
import { cancelledOnClose } from '../../upstreams/cancellation';
import type { Pools } from '../../upstreams/pools';
import { unserializable } from '../pipeline/forward';
import { uncounted } from '../pipeline/plan';
import { collect, decoded } from '../upstream-body';
import { upstreamErrorFrom, upstreamFailure } from '../upstream-errors';

export interface CountTokensOptions {
  catalog: () => Catalog;
  pools: Pools;
  counter: TokenCounter;
  upstreamHeaders: UpstreamHeaders;
  responseLimit: number;
}

/** Statuses that say the upstream has no such route: the count is ours. */
const NOT_SERVED = new Set([404, 405, 501]);
const PATH = `${ENDPOINT_PATHS.messages}/count_tokens`;

/** Our tokenizer's count of the prompt (the worker's for a long one), answered as Anthropic does. */
async function countHere(res: Response, request: CountTokensRequest, counter: TokenCounter): Promise<void> {
  let prompt: ReturnType<typeof messagesPrompt>;
  try {
    prompt = messagesPrompt(request);
  } catch (err) {
    return sendError(res, unserializable(err));
  }
  const failure = await countPrompt(counter, prompt);
  if (failure) return sendError(res, uncounted(failure, 'messages'));
  res.json({ input_tokens: prompt.tokens });
}

/** The upstream's answer, relayed (an error in the route's shape); undefined when it does not serve the route. */
function relayed(res: Response, status: number, buf: Buffer | undefined): boolean {
  if (NOT_SERVED.has(status)) return false;
  if (buf === undefined) sendError(res, apiError('upstream_error', 'The upstream response exceeded the size limit.'));
  else if (status < 200 || status >= 300) sendError(res, upstreamErrorFrom(status, buf));
  else res.status(status).type('application/json').send(buf);
  return true;
}

export function countTokens(options: CountTokensOptions) {
  const { pools, counter } = options;

  /** The upstream's count, or ours when it does not serve the route. */
  async function ask(req: Request, res: Response, request: CountTokensRequest, model: Model): Promise<void> {
    let body: string;
    try {
      body = JSON.stringify({ ...request, model: model.upstreamModel });
    } catch (err) {
      return sendError(res, unserializable(err));
    }
    const headers = options.upstreamHeaders(req, {
      bodyLength: Buffer.byteLength(body),
      apiKey: model.upstreamApiKey,
      requestId: requestFacts(res).requestId,
    });
    const gone = cancelledOnClose(res);
    const outcome = await pools
      .of(model)
      .send(
        { method: 'POST', path: PATH, headers, body },
        { cancellation: gone, affinityKey: undefined, deadline: Date.now() + pools.budgetMs, canFallBack: false },
      );
    if (outcome.kind === 'aborted') return;
    if (outcome.kind === 'failed' && outcome.status !== undefined && NOT_SERVED.has(outcome.status))
      return countHere(res, request, counter);
    if (outcome.kind === 'failed') {
      return sendError(
        res,
        outcome.err ? upstreamFailure(outcome.err, outcome.timedOut) : upstreamErrorFrom(outcome.status ?? 502, undefined),
      );
    }
    if (outcome.kind !== 'answer')
      return sendError(res, apiError('server_overloaded', 'Every server of this model is busy; try again shortly.'));
    const answer = decoded(outcome.res);
    if (!answer) return sendError(res, apiError('upstream_error', 'The upstream sent an unsupported content-encoding.'));
    const status = outcome.res.statusCode ?? 502;
    await new Promise<void>((resolve) => {
      collect(
        answer,
        options.responseLimit,
        (buf) => {
          if (!relayed(res, status, buf)) void countHere(res, request, counter).then(resolve);
          else resolve();
        },
        (err) => {
          sendError(res, upstreamFailure(err, false));
          resolve();
        },
      );
    });
  }

  return async function countTokensHandler(req: Request, res: Response): Promise<void> {
    const validated = validateCountTokensRequest(req.body);
    if (!validated.ok) return sendError(res, validated.error);
    const request = validated.request;
    const model = options.catalog().get(request.model);
    if (!model)
      return sendError(res, apiError('model_not_found', `The model '${request.model}' does not exist or is not served here.`, 'model'));
    servedBy(res, model.id);
    // As the reserve step refuses it on /v1/messages (this route reserves nothing): a key limited to other models.
    const key = liveKey(res);
    if (key !== null && key.models !== null && !key.models.includes(model.id))
      return sendError(res, apiError('model_not_allowed', `This API key may not use the model '${model.id}'.`, 'model'));
    if (!model.endpoints.has('messages')) {
      return sendError(res, apiError('invalid_request_error', `The model '${model.id}' does not serve /v1/messages.`, 'model'));
    }
    await ask(req, res, request, model);
  };
}
