/**
 * A non-streamed answer read whole (within the response limit) and parsed: its usage, our count of its output for
 * when it has none, the id the upstream stores it under, and its bytes held for the charge to show in their head
 * (charge-shown.ts), its model name rewritten on bytes only when the parse says it differs.
 */
import { apiError } from '../http/errors';
import { rewriteModel } from './model-rewriter';
import type { AnswerRelayContext } from './exchange-context';
import type { AnswerHead, RelayOutcome } from './relay-outcome';

/**
 * What the parsed answer reports, or why it is refused (not JSON, not an object): nothing was served. An answer the
 * upstream stores is told to the endpoint (`onAnswer`) here, before the client can see its id.
 */
export function parsedAnswer(head: AnswerHead, buf: Buffer, ctx: AnswerRelayContext): RelayOutcome {
  const { model, answer, outputTokens, onAnswer } = ctx;
  const { status, headers } = head;
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(buf.toString('utf8'));
  } catch {
    // Its content type says the usual cause: a stream (text/event-stream) where JSON was asked for.
    const type = headers['content-type'] ?? 'no content type';
    return { kind: 'refused', error: apiError('upstream_error', `The upstream returned a response that is not valid JSON (${type}).`) };
  }
  if (typeof parsed !== 'object' || parsed === null) return { kind: 'refused', error: NOT_AN_OBJECT };
  // The parse already says whether the upstream named the model otherwise; only then are the bytes searched.
  const body = typeof parsed.model === 'string' && parsed.model !== model.id ? rewriteModel(buf, model.idJson) : buf;
  const reply = { kind: 'held' as const, answer: { status, headers, body } };
  const usage = answer.usage(parsed);
  const answerId = answer.answerId?.(parsed);
  if (answerId !== undefined) onAnswer?.(answerId, usage && usage.promptTokens + usage.completionTokens);
  return { kind: 'served', status, usage, estimate: () => outputTokens(parsed), reply };
}

export const NOT_AN_OBJECT = apiError('upstream_error', 'The upstream returned a response that is not a JSON object.');
