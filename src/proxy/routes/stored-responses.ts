/**
 * GET and DELETE /v1/responses/{id}, GET /v1/responses/{id}/input_items: the Responses API's stored state, unmetered
 * but the account's own. Only the account a response was answered to gets it (anything else: 404, the same answer as
 * an id never seen); the request goes to the upstream of the model that answered, its answer naming the client's id.
 */
import type { IncomingMessage } from 'node:http';
import { Router, type Request, type Response } from 'express';
import type { Catalog, Model } from '../../catalog/models';
import { apiError, sendError, STORE_UNAVAILABLE, type ApiError } from '../../http/errors';
import { downstreamResponseHeaders, type UpstreamHeaders } from '../../http/http-headers';
import type { Logger } from '../../observability/logger';
import { callerOf, requestFacts, servedBy } from '../../http/request-context';
import type { ResponseOwners } from '../../store/ports/response-owners';
import { callerResponse, listedItemIds, responseNotFound } from '../caller-ids';
import { rewriteModel } from '../model-rewriter';
import { collect, decoded } from '../upstream-body';
import { upstreamErrorFrom, upstreamFailure } from '../upstream-errors';
import { cancelledOnClose } from '../../upstreams/cancellation';
import type { Pools } from '../../upstreams/pools';

export interface StoredResponsesOptions {
  catalog: () => Catalog;
  owners: ResponseOwners;
  /** The model's pool: its stored state is asked of one of its servers (a pool of one for most deployments). */
  pools: Pools;
  /** The headers a request carries upstream. */
  upstreamHeaders: UpstreamHeaders;
  logger: Logger;
  responseLimit: number;
}

/** The query parameters these routes take (OpenAI's paging and `include`); nothing else reaches the upstream. */
const QUERY = new Set(['after', 'before', 'limit', 'order', 'include', 'include[]']);

function query(req: Request): string {
  const at = req.originalUrl.indexOf('?');
  if (at === -1) return '';
  const params = new URLSearchParams(req.originalUrl.slice(at + 1));
  for (const name of [...params.keys()]) if (!QUERY.has(name)) params.delete(name);
  const kept = params.toString();
  return kept ? `?${kept}` : '';
}

/** Answers one stored-state request from the upstream: errors kept as sent, a JSON answer with the client's model id. */
class StoredRelay {
  private done = false;

  constructor(
    private readonly res: Response,
    private readonly model: Model,
    private readonly options: StoredResponsesOptions,
    /** Keeps the owner records in step with the answer, before the client sees it (never rejects). */
    private readonly onSuccess: (answer: Buffer) => Promise<void>,
  ) {}

  respond(proxyRes: IncomingMessage): void {
    const body = decoded(proxyRes);
    if (!body) return this.refuse(apiError('upstream_error', 'The upstream sent an unsupported content-encoding.'));
    const status = proxyRes.statusCode ?? 502;
    collect(
      body,
      this.options.responseLimit,
      (buf) => {
        if (buf === undefined) return this.refuse(apiError('upstream_error', 'The upstream response exceeded the size limit.'));
        if (status < 200 || status >= 300) return this.refuse(upstreamErrorFrom(status, buf));
        this.done = true;
        void this.onSuccess(buf).then(() => {
          if (this.res.destroyed) return;
          const out = rewriteModel(buf, this.model.idJson);
          const headers = downstreamResponseHeaders(proxyRes.headers);
          headers['content-length'] = out.length;
          this.res.writeHead(status, headers);
          this.res.end(out);
        });
      },
      (err) => this.fail(err),
    );
  }

  fail(err: NodeJS.ErrnoException): void {
    this.refuse(upstreamFailure(err, err.code === 'ETIMEDOUT'));
  }

  refuse(err: ApiError): void {
    if (this.done) return;
    this.done = true;
    sendError(this.res, err);
  }
}

export function storedResponses(options: StoredResponsesOptions): Router {
  const router = Router();
  const { owners, logger } = options;

  async function relay(req: Request, res: Response, suffix: string): Promise<void> {
    const id = String(req.params.id);
    const { accountId } = callerOf(res);
    let owner;
    try {
      owner = await callerResponse(owners, accountId, id);
    } catch (err) {
      logger.error({ err: (err as Error).message }, 'store unreachable while looking up a stored response');
      return sendError(res, STORE_UNAVAILABLE);
    }
    const model = owner && options.catalog().get(owner.model);
    if (!owner || !model) return sendError(res, responseNotFound(id, null));
    servedBy(res, model.id);
    const path = `/responses/${encodeURIComponent(id)}${suffix}${query(req)}`;
    const relayed = new StoredRelay(res, model, options, async (answer) => {
      const failed = (err: Error) => logger.warn({ responseId: id, err: err.message }, 'could not update the owners of a stored response');
      if (req.method === 'DELETE') return owners.forget(id).catch(failed);
      // The input items' ids, which the answer that stored them did not show: now the caller may reference them too.
      const itemIds = suffix === '/input_items' ? listedItemIds(answer) : [];
      if (itemIds.length > 0) await owners.record({ ...owner, responseId: id, itemIds }).catch(failed);
    });
    const headers = options.upstreamHeaders(req, {
      bodyLength: undefined,
      apiKey: model.upstreamApiKey,
      requestId: requestFacts(res).requestId,
    });
    const gone = cancelledOnClose(res);
    const pools = options.pools;
    const outcome = await pools
      .of(model)
      .send(
        { method: req.method, path, headers, body: undefined },
        { cancellation: gone, affinityKey: undefined, deadline: Date.now() + pools.budgetMs, canFallBack: false },
      );
    if (outcome.kind === 'answer') {
      outcome.req.on('error', (err: NodeJS.ErrnoException) => relayed.fail(err));
      return relayed.respond(outcome.res);
    }
    if (outcome.kind === 'failed') {
      if (outcome.err) return relayed.fail(outcome.err);
      return relayed.refuse(upstreamErrorFrom(outcome.status ?? 502, undefined));
    }
    if (outcome.kind !== 'aborted') relayed.refuse(apiError('upstream_error', 'No server of this model can take the request now.'));
  }

  router.get('/:id', (req, res) => relay(req, res, ''));
  router.delete('/:id', (req, res) => relay(req, res, ''));
  router.get('/:id/input_items', (req, res) => relay(req, res, '/input_items'));
  return router;
}
