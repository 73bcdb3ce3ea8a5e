/**
 * POST /v1/responses on the metered pipeline: input items in, output items out, `max_output_tokens` clamped to what
 * the balance covers. Usage is the answer's `usage`, in a stream the `response` of its last event. Stored state is the
 * account's own: every id a request names must be the caller's (caller-ids.ts), `background` is refused; a stored
 * answer's ids are recorded as the caller's, one not stored (`store: false`) leaves nothing behind. A stored prompt
 * passes only where the models file lists stored prompts (stored-prompt.ts).
 */
import { unsupportedSampling } from '../../catalog/capabilities';
import type { Model } from '../../catalog/models';
import { apiError } from '../../http/errors';
import { validateResponsesRequest, type ResponsesRequest } from '../../requests/responses-request';
import { ResponsesPromptSize } from '../../metering/responses-prompt';
import type { Logger } from '../../observability/logger';
import type { ResponseOwners } from '../../store/ports/response-owners';
import type { Endpoint, StreamDialect, TextFields } from '../pipeline/endpoint';
import { responsesIdRefusal, storedAnswerIds } from '../caller-ids';
import { hostedCalls, hostedResponsesPlan } from '../hosted-tool-plan';
import { ResponseEventScan } from '../response-model';
import type { Usage } from '../usage';
import { inputOutputUsage, usageObject } from './openai-usage';
import { capOutput } from './output-cap';
import { responseItemsRefusal, upstreamInput } from './response-items';
import { plannedTools, storedPromptRefusal, storedPromptTokens } from './stored-prompt';

/**
 * The string values that are output text in a Responses stream: every `*.delta` event's `delta` (output text,
 * refusals, function-call arguments, reasoning text and reasoning summaries alike).
 */
const DELTAS: TextFields = { pattern: /"(delta)" *: *"([^"\\]*(?:\\.[^"\\]*)*)"/g };
const LAST_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed']);

/** The usage of a Responses answer (a stream's last `response`), with the hosted tool calls its output reports. */
function responseUsage(response: Record<string, unknown> | undefined): Usage | undefined {
  const usage = inputOutputUsage(response?.usage);
  const calls = usage && hostedCalls(response?.output);
  if (calls) usage.hostedCalls = calls;
  return usage;
}

/** A stream's last event's `response`: its usage and id. */
function lastResponse(event: Record<string, unknown>): Record<string, unknown> | undefined {
  if (typeof event.type !== 'string' || !LAST_EVENTS.has(event.type)) return undefined;
  const response = event.response;
  return typeof response === 'object' && response !== null ? (response as Record<string, unknown>) : undefined;
}

/** An answer's output texts: its texts, reasoning, summaries and function-call arguments. */
function outputTexts(answer: Record<string, unknown>): string[] {
  const texts: string[] = [];
  if (!Array.isArray(answer.output)) return texts;
  for (const item of answer.output as Record<string, unknown>[]) {
    if (typeof item?.arguments === 'string') texts.push(item.arguments);
    for (const list of [item?.content, item?.summary]) {
      if (!Array.isArray(list)) continue;
      for (const part of list as { text?: unknown }[]) if (typeof part?.text === 'string') texts.push(part.text);
    }
  }
  return texts;
}

/** The typed error event a Responses client reads when the upstream broke off mid-stream. */
function errorEvent(timedOut: boolean): string {
  const event = {
    type: 'error',
    code: timedOut ? 'upstream_timeout' : 'upstream_error',
    message: timedOut ? 'The upstream stopped sending mid-stream.' : 'The upstream connection broke mid-stream.',
    param: null,
  };
  return `\nevent: error\ndata: ${JSON.stringify(event)}\n\n`;
}

/** A Responses stream: `event:`/`data:` pairs, the model inside each event's `response`, usage in the last one. */
export const responsesStream: StreamDialect = {
  usage: (event) => responseUsage(lastResponse(event)),
  usageOnly: () => false,
  shownUsage: (event) => usageObject(lastResponse(event)?.usage),
  answerId: (event) => storedAnswerIds(lastResponse(event)),
  textFields: DELTAS,
  scanner: () => new ResponseEventScan(),
  errorEvent,
};

export function responsesEndpoint(owners: ResponseOwners, logger: Logger): Endpoint<ResponsesRequest> {
  return {
    name: 'responses',
    validate: validateResponsesRequest,
    modelName: (request) => request.model,
    unsupported(request: ResponsesRequest, model: Model) {
      if (request.background === true) {
        return apiError('invalid_request_error', 'Background responses are not served here: they cannot be metered exactly.', 'background');
      }
      if ((request as { conversation?: unknown }).conversation != null) {
        return apiError(
          'invalid_request_error',
          "'conversation' is not served here; chain responses with 'previous_response_id'.",
          'conversation',
        );
      }
      return storedPromptRefusal(request, model) ?? responseItemsRefusal(request, model) ?? unsupportedSampling(request, model);
    },
    async prepare(request, accountId, model) {
      // Another account's response or item, or one never answered here: the same 404, so ids cannot be probed.
      const checked = await responsesIdRefusal(owners, accountId, model, request);
      if ('code' in checked) return checked;
      return { tokens: checked.previous?.tokens ?? 0, bound: checked.referenced + storedPromptTokens(request, model) };
    },
    outputCap: (request) => ({ field: 'max_output_tokens', value: request.max_output_tokens ?? undefined }),
    choices: () => 1,
    prompt: (request, carried) => new ResponsesPromptSize(request, carried.tokens, carried.bound),
    hostedTools: (request, model) => hostedResponsesPlan(plannedTools(request, model), request.max_tool_calls, model),
    promptWords: { noun: 'the input takes', field: 'input' },
    stream: (request) => request.stream === true,
    upstreamBody(request, model, allowance) {
      const body: Record<string, unknown> = { ...request, model: model.upstreamModel, input: upstreamInput(request, model) };
      capOutput(body, model.outputCapFields.responses, allowance);
      // The hosted tool calls the reservation covers, and no more: the upstream stops calling tools there.
      // A stored prompt's template may carry tools the request does not show: none beyond the plan, none without one.
      const tools = hostedResponsesPlan(plannedTools(request, model), request.max_tool_calls, model);
      if (tools) body.max_tool_calls = tools.calls;
      else if (request.prompt != null) body.max_tool_calls = 0;
      // A Responses stream always ends with its usage: nothing to ask for, nothing to hide.
      return { body, hideUsage: false };
    },
    answer: {
      relay: 'parse',
      usage: responseUsage,
      outputTexts,
      answerId: storedAnswerIds,
      stream: responsesStream,
    },
    answered(answer, request, accountId, model, tokens) {
      // Not stored upstream: nothing to name again, nothing kept.
      if (request.store === false) return;
      const stored = { accountId, model: model.id, tokens, responseId: answer.id, itemIds: answer.itemIds };
      owners.record(stored).catch((err: Error) => {
        logger.warn(
          { answerId: answer.id, err: err.message },
          'could not record the owner of a stored response; it will not be found again',
        );
      });
    },
  };
}
