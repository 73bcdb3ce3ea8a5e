/**
 * Relays the one server's answer the pool handed on, by kind: an error status read for its message (refused), a
 * stream tapped as it passes (stream-relay.ts), a JSON answer read whole and parsed (parsed-answer.ts) or scanned on
 * bytes (scanned-answer.ts). From the answer on the relay owns the client's response and its hang-up (its 'close'
 * before the relay is done), and the upstream's errors; it resolves with what happened (relay-outcome.ts), which the exchange settles.
 */
import type { ServerResponse } from 'node:http';
import { apiError } from '../http/errors';
import { downstreamResponseHeaders } from '../http/http-headers';
import type { Answer } from '../upstreams/attempt';
import type { AnswerRelayContext, RelayPorts } from './exchange-context';
import { parsedAnswer } from './parsed-answer';
import type { RelayOutcome } from './relay-outcome';
import { relayScanned } from './scanned-answer';
import { StreamRelay } from './stream-relay';
import { decoded, readWhole } from './upstream-body';
import { upstreamErrorFrom, upstreamFailure } from './upstream-errors';

/** An upstream error body longer than this is not read further: its message is in the first bytes. */
const ERROR_BODY_LIMIT = 64 * 1024;

/** Relays the answer to `res`; resolves with how it went once nothing more is up to the relay. */
export async function relayAnswer(
  upstream: Answer,
  res: ServerResponse,
  ctx: AnswerRelayContext,
  ports: RelayPorts,
): Promise<RelayOutcome> {
  // A reset of the request's socket breaks the body off as the body's own error would.
  upstream.req.on('error', (err: NodeJS.ErrnoException) => upstream.res.destroy(err));
  const { headers: upstreamHeaders, statusCode } = upstream.res;
  const head = { status: statusCode ?? 502, headers: downstreamResponseHeaders(upstreamHeaders) };
  const status = head.status;
  let body = decoded(upstream.res);
  if (body === undefined) {
    upstream.res.destroy();
    const encoding = upstreamHeaders['content-encoding'];
    return { kind: 'refused', error: apiError('upstream_error', `The upstream sent an unsupported content-encoding (${encoding}).`) };
  }
  const failed = status < 200 || status >= 300;
  const dialect =
    !failed && ctx.stream && (upstreamHeaders['content-type'] ?? '').includes('text/event-stream') ? ctx.answer.stream : undefined;
  if (!failed && ctx.translation) body = ctx.translation.answer(body, dialect !== undefined, ports.limit);
  if (failed || (dialect === undefined && ctx.answer.relay === 'parse')) {
    const whole = await readWhole(body, failed ? ERROR_BODY_LIMIT : ports.limit, res);
    if (whole.kind === 'left') {
      upstream.res.destroy();
      upstream.req.destroy();
      return { kind: 'left' };
    }
    if (whole.kind === 'broken') {
      const timedOut = upstream.timedOut();
      return {
        kind: 'refused',
        error: upstreamFailure(whole.err, timedOut),
        failure: { kind: timedOut ? 'timeout' : 'connect', err: whole.err },
      };
    }
    if (failed)
      return {
        kind: 'refused',
        error: upstreamErrorFrom(status, whole.kind === 'body' ? whole.buf : undefined),
        failure: { kind: 'status' },
      };
    if (whole.kind === 'over') {
      upstream.res.destroy();
      return { kind: 'refused', error: apiError('upstream_error', 'The upstream response exceeded the size limit.') };
    }
    return parsedAnswer(head, whole.buf, ctx);
  }
  if (dialect) return new StreamRelay(res, upstream, body, ctx, ports, dialect).relay(head);
  return relayScanned(res, upstream, head, body, ctx, ports.limit);
}
