/**
 * POST /v1/messages (Anthropic's Messages API) on the metered pipeline: messages in, content blocks out, `max_tokens`
 * required and reserved as the output cap. Usage is the answer's `usage` (cache reads and writes priced apart), in a
 * stream message_start's completed by message_delta's; the model name is rewritten in the answer and in message_start.
 */
import { unsupportedSampling } from '../../catalog/capabilities';
import { anthropicErrorEvent } from '../../http/anthropic-errors';
import { apiError } from '../../http/errors';
import { validateMessagesRequest, type MessagesRequest } from '../../requests/messages-request';
import { messagesPrompt } from '../../metering/messages-prompt';
import { MessageEventScan } from '../message-event-scan';
import type { Endpoint, StreamDialect, TextFields } from '../pipeline/endpoint';
import { anthropicUsage } from './anthropic-usage';
import { usageObject } from './openai-usage';
import { capOutput } from './output-cap';
import { viaChat, viaChatBody, viaChatRefusal, viaChatTranslation } from '../translate/messages-via-chat';
import { cappedTools, serverToolPlan, serverToolRefusal } from './server-tools';

/** The string values that are output in a Messages stream: text_delta's `text`, thinking_delta's, input_json_delta's. */
const DELTAS: TextFields = { pattern: /"(text|thinking|partial_json)" *: *"([^"\\]*(?:\\.[^"\\]*)*)"/g };

const messageOf = (event: Record<string, unknown>) => usageObject(event.message);

/** A Messages stream: `event:`/`data:` pairs, the model and first usage in message_start, the whole in message_delta. */
export const messagesStream: StreamDialect = {
  usage: (event, previous) =>
    event.type === 'message_start' ? anthropicUsage(messageOf(event)?.usage) : anthropicUsage(event.usage, previous),
  usageOnly: () => false,
  shownUsage: (event) => (event.type === 'message_delta' ? usageObject(event.usage) : undefined),
  partialUsage: true,
  textFields: DELTAS,
  scanner: () => new MessageEventScan(),
  errorEvent: anthropicErrorEvent,
};

/** A JSON answer's output: its text, thinking and tool inputs (for our count when it carries no usage). */
function outputTexts(answer: Record<string, unknown>): string[] {
  const texts: string[] = [];
  if (!Array.isArray(answer.content)) return texts;
  for (const block of answer.content as Record<string, unknown>[]) {
    if (typeof block?.text === 'string') texts.push(block.text);
    else if (typeof block?.thinking === 'string') texts.push(block.thinking);
    else if (block?.input !== undefined) texts.push(JSON.stringify(block.input));
  }
  return texts;
}

export const messagesEndpoint: Endpoint<MessagesRequest> = {
  name: 'messages',
  validate: validateMessagesRequest,
  modelName: (request) => request.model,
  unsupported(request, model) {
    if (!model.capabilities.tools && request.tools?.some((t) => t.type === undefined || t.type === 'custom')) {
      return apiError('invalid_request_error', `${model.id} does not support tools (function calling).`, 'tools');
    }
    const tools = viaChat(model) ? viaChatRefusal(request, model) : serverToolRefusal(request.tools, model);
    return tools ?? unsupportedSampling(request, model);
  },
  outputCap: (request) => ({ field: 'max_tokens', value: request.max_tokens }),
  choices: () => 1,
  prompt: (request) => messagesPrompt(request),
  hostedTools: (request, model) => serverToolPlan(request.tools, model),
  promptWords: { noun: 'the messages take', field: 'messages' },
  stream: (request) => request.stream === true,
  translation: (request, model) => (viaChat(model) ? viaChatTranslation(request) : undefined),
  upstreamBody(request, model, allowance) {
    if (viaChat(model)) return viaChatBody(request, model, allowance);
    const body: Record<string, unknown> = { ...request, model: model.upstreamModel };
    if (request.tools) body.tools = cappedTools(request.tools, model);
    // Thinking is part of max_tokens: a balance that lowered the allowance lowers the budget under it too.
    const budget = request.thinking?.budget_tokens;
    if (budget !== undefined && budget >= allowance) body.thinking = { ...request.thinking, budget_tokens: Math.max(1, allowance - 1) };
    // A Messages stream always carries its usage: nothing to ask for, nothing to hide.
    return { body: capOutput(body, model.outputCapFields.messages, allowance), hideUsage: false };
  },
  answer: {
    relay: 'parse',
    usage: (answer) => anthropicUsage(answer.usage),
    outputTexts,
    stream: messagesStream,
  },
};
