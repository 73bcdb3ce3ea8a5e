/**
 * Per request: a request id (ours, always; the client's x-request-id kept beside it, bounded and sanitised), one
 * structured log line when the response closes, and the request metrics. Never the key, never the text unless
 * LOG_PAYLOADS is on.
 */
import { newRequestId } from '../store/ids';
import type { NextFunction } from 'express';
import type { RoutedRequest, RoutedResponse } from '../http/handler-chain';
import type { ErrorCode } from '../http/errors';
import { beginRequest, requestFacts } from '../http/request-context';
import type { Logger } from './logger';
import type { Metrics } from './metrics';
import type { EndpointName } from '../catalog/endpoints';

/** What LOG_PAYLOADS logs of a request: its messages, prompt, or input, whichever its endpoint takes. */
function payload(body: unknown): Record<string, unknown> {
  const b = (body ?? {}) as { messages?: unknown; prompt?: unknown; input?: unknown; instructions?: unknown };
  if (b.messages !== undefined) return { messages: b.messages };
  if (b.prompt !== undefined) return { prompt: b.prompt };
  return b.input !== undefined ? { input: b.input, instructions: b.instructions } : {};
}

/** Errors that relay the upstream's answer rather than a refusal of ours. */
const NOT_REFUSALS = new Set<string>(['upstream_error', 'upstream_timeout'] satisfies ErrorCode[]);
const CLIENT_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export interface RequestLogOptions {
  logger: Logger;
  metrics: Metrics;
  logPayloads: boolean;
  /** A metered route: counted in the request metrics. */
  completions: boolean;
  /** The metered endpoint this route serves (its `endpoint` label and log field). */
  endpoint?: EndpointName;
}

export function requestLog(options: RequestLogOptions) {
  const { logger, metrics } = options;
  return function logRequest(req: RoutedRequest, res: RoutedResponse, next: NextFunction): void {
    const started = performance.now();
    const requestId = newRequestId();
    const given = req.headers['x-request-id'];
    const clientRequestId = typeof given === 'string' && CLIENT_ID.test(given) ? given : undefined;
    beginRequest(res, { requestId, clientRequestId, endpoint: options.endpoint });
    res.setHeader('x-request-id', clientRequestId ?? requestId);

    res.once('close', () => {
      // Let the response's own close handlers (which settle and record usage) run first.
      setImmediate(() => {
        const facts = requestFacts(res);
        const seconds = (performance.now() - started) / 1000;
        const status = res.writableFinished ? res.statusCode : 499;
        const model = facts.model ?? 'unknown';
        if (options.completions) {
          const endpoint = facts.endpoint ?? 'chat';
          metrics.requests.inc({ model, status, stream: facts.stream ? 'true' : 'false', endpoint });
          metrics.requestDuration.observe({ model, stream: facts.stream ? 'true' : 'false', endpoint }, seconds);
        }
        if (facts.errorCode && !NOT_REFUSALS.has(facts.errorCode)) metrics.refusals.inc({ reason: facts.errorCode });
        logger.info(
          {
            requestId: facts.requestId,
            clientRequestId: facts.clientRequestId,
            method: req.method,
            path: req.originalUrl.split('?')[0],
            keyId: facts.caller?.keyId,
            accountId: facts.caller?.accountId,
            model: facts.model,
            endpoint: facts.endpoint,
            stream: facts.stream,
            status,
            error: facts.errorCode,
            ...(facts.errorMessage !== undefined && { errorDetail: facts.errorMessage }),
            durationMs: Math.round(seconds * 1000),
            ...(facts.usage && {
              promptTokens: facts.usage.promptTokens,
              completionTokens: facts.usage.completionTokens,
              ...(facts.usage.cachedTokens > 0 && { cachedTokens: facts.usage.cachedTokens }),
              ...(facts.usage.reasoningTokens > 0 && { reasoningTokens: facts.usage.reasoningTokens }),
              chargedTokens: facts.usage.chargedTokens,
              estimated: facts.usage.estimated,
            }),
            ...(options.logPayloads && payload(req.body)),
          },
          'request',
        );
      });
    });
    next();
  };
}
