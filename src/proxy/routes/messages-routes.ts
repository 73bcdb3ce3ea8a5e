/**
 * Anthropic's Messages API on the OpenAI router: `POST /messages` (metered) and `/messages/count_tokens` (free), their
 * errors in Anthropic's shape from the first handler on, the key read from `x-api-key` or Bearer, and Anthropic's
 * version and beta headers forwarded beside the operator's.
 */
import type { RequestHandler, Router } from 'express';
import { ENDPOINT_PATHS } from '../../catalog/endpoints';
import { bearerAuth } from '../../http/auth';
import { answerErrorsAs, apiError, sendError } from '../../http/errors';
import { handlerChain, type RoutedHandler } from '../../http/handler-chain';
import { upstreamHeaders } from '../../http/http-headers';
import { requestApiKey } from '../../http/keys';
import type { Logger } from '../../observability/logger';
import type { KeyLookup } from '../../store/ports/key-lookup';
import { countTokens } from './count-tokens';
import { messagesEndpoint } from '../endpoints/messages';
import { meteredRoute, type MeteredRouteOptions } from '../pipeline/metered-route';

export interface MessagesRouteParts {
  /** What runs before authentication on every route: the request log (`metered` or not), deadline, draining. */
  before(metered: boolean): RoutedHandler[];
  /** The host's authentication, when it has one (instead of our keys). */
  hostAuth: RoutedHandler | undefined;
  /** The live-credential check of the routes that reserve nothing. */
  live: RequestHandler;
  body: RoutedHandler;
  store: KeyLookup;
  logger: Logger;
  /** UPSTREAM_FORWARD_HEADERS. */
  forward: readonly string[];
  route: MeteredRouteOptions;
}

const anthropicErrors: RoutedHandler = (_req, res, next) => {
  answerErrorsAs(res, 'anthropic');
  next();
};

/** Mounts the routes on `router`; returns the metered one (one handler chain) and its path. */
export function mountMessages(router: Router, parts: MessagesRouteParts): { path: string; route: RoutedHandler } {
  const { store, logger, route } = parts;
  const passKeyAs = '"x-api-key: sk-..." (or "Authorization: Bearer sk-...")';
  const auth = parts.hostAuth ?? bearerAuth({ store, logger, credential: requestApiKey, passKeyAs });
  const headers = upstreamHeaders([...parts.forward, 'anthropic-version', 'anthropic-beta']);
  const path = ENDPOINT_PATHS.messages;
  const count = countTokens({ ...route, upstreamHeaders: headers, responseLimit: route.upstreamResponseLimit });
  router.post(`${path}/count_tokens`, anthropicErrors, ...parts.before(false), auth, parts.live, parts.body, count);
  const metered = meteredRoute(messagesEndpoint, { ...route, upstreamHeaders: headers });
  const chain = handlerChain([anthropicErrors, ...parts.before(true), auth, parts.body, metered]);
  router.post(path, chain);
  router.all([path, `${path}/count_tokens`], anthropicErrors, (req, res) => {
    sendError(res, apiError('method_not_allowed', `Use POST for /v1${req.path}.`), { allow: 'POST' });
  });
  return { path, route: chain };
}
