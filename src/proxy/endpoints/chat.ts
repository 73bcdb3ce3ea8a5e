/** POST /v1/chat/completions on the metered pipeline: messages in, choices out, `max_tokens`/`max_completion_tokens`. */
import { unsupported, upstreamMessages } from '../../catalog/capabilities';
import { requestedMaxTokens, validateChatRequest, type ChatRequest } from '../../requests/chat-request';
import { PromptSize } from '../../metering/estimate';
import { chatIdRefusal } from '../caller-ids';
import { hostedChatPlan, hostedToolRefusal, webSearchOptionsRefusal } from '../hosted-tool-plan';
import { TopLevelScan } from '../model-rewriter';
import { completionTexts } from '../response-usage';
import type { Endpoint, StreamDialect, TextFields } from '../pipeline/endpoint';
import { capOutput } from './output-cap';
import { withStreamUsage } from './stream-usage';
import { choicesEmpty, chunkUsage, dataErrorEvent, promptCompletionUsage, usageChunkUsage } from './openai-usage';

/**
 * The string values of the fields whose streamed text is completion output: reasoning too (vLLM's `reasoning`, its
 * older `reasoning_content`), which usage counts as completion.
 */
const TEXT_FIELDS: TextFields = {
  pattern: /"(content|arguments|reasoning|reasoning_content|refusal)" *: *"([^"\\]*(?:\\.[^"\\]*)*)"/g,
  // vLLM sends the older name beside the new one, with the same text, for clients not yet updated.
  alias: { name: 'reasoning_content', of: 'reasoning' },
};

/** A chat stream: `data:` chunks, usage in a `choices: []` chunk when asked, the model at the top level. */
export const chatStream: StreamDialect = {
  usage: chunkUsage,
  usageOnly: choicesEmpty,
  shownUsage: usageChunkUsage,
  textFields: TEXT_FIELDS,
  scanner: () => new TopLevelScan(),
  errorEvent: dataErrorEvent,
};

export const chatEndpoint: Endpoint<ChatRequest> = {
  name: 'chat',
  validate: validateChatRequest,
  modelName: (request) => request.model,
  unsupported: (request, model) =>
    unsupported(request, model) ??
    hostedToolRefusal(request.tools, request.tool_choice, model) ??
    webSearchOptionsRefusal(request.web_search_options, model) ??
    chatIdRefusal(request),
  outputCap: requestedMaxTokens,
  choices: (request) => request.n ?? 1,
  prompt: (request) => new PromptSize(request),
  hostedTools: (request, model) => hostedChatPlan(request.web_search_options, model),
  promptWords: { noun: 'the messages take', field: 'messages' },
  stream: (request) => request.stream === true,
  upstreamBody(request, model, allowance) {
    const body: Record<string, unknown> = { ...request, model: model.upstreamModel, messages: upstreamMessages(request, model) };
    return withStreamUsage(capOutput(body, model.outputCapFields.chat, allowance), request, model);
  },
  answer: {
    relay: 'parse',
    usage: (answer) => promptCompletionUsage(answer.usage),
    outputTexts: (answer) => completionTexts(answer.choices),
    stream: chatStream,
  },
};
