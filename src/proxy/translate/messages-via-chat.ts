/**
 * The Messages endpoint's translation for a model with `messages_via: chat`: the request sent to /chat/completions as
 * chat, the answer (JSON or SSE) turned back into Messages before the pipeline relays, meters and settles it.
 */
import type { Readable } from 'node:stream';
import type { Model } from '../../catalog/models';
import { apiError, type ApiError } from '../../http/errors';
import type { MessagesRequest } from '../../requests/messages-request';
import { capOutput } from '../endpoints/output-cap';
import type { Translation, UpstreamBody } from '../pipeline/endpoint';
import { ChatToMessagesJson } from './chat-to-messages';
import { ChatToMessagesStream } from './chat-to-messages-stream';
import { messagesToChat } from './messages-to-chat';
import { translated } from './translated';

export const viaChat = (model: Model) => model.messagesVia === 'chat';

/** Anthropic's server tools have no chat counterpart: refused for a model reached through chat. */
export function viaChatRefusal(request: MessagesRequest, model: Model): ApiError | undefined {
  const server = request.tools?.find((t) => t.type !== undefined && t.type !== 'custom');
  if (!server) return undefined;
  return apiError('invalid_request_error', `${model.id} does not support server tools (${String(server.type)}).`, 'tools');
}

/** The chat body: the allowance written into the model's chat cap fields; thinking dropped (docs say so). */
export function viaChatBody(request: MessagesRequest, model: Model, allowance: number): UpstreamBody {
  const body = messagesToChat(request, model.upstreamModel);
  // Our translation drops the usage chunk itself (it becomes message_delta's usage): nothing to hide.
  return { body: capOutput(body, model.outputCapFields.chat, allowance), hideUsage: false };
}

/** Where the chat request goes and how its answer comes back. */
export function viaChatTranslation(request: MessagesRequest): Translation {
  const stops = request.stop_sequences;
  return {
    path: '/chat/completions',
    answer: (body: Readable, stream: boolean, limit: number): Readable =>
      translated(body, stream ? new ChatToMessagesStream(stops) : new ChatToMessagesJson(stops, limit)),
  };
}
