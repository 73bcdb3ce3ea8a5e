/** Asking a chat-shaped stream for usage (`stream_options.include_usage`), hidden from a client that did not ask. */
import type { Model } from '../../catalog/models';
import type { UpstreamBody } from '../pipeline/endpoint';

interface Streamable {
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean } | null;
}

/** The body with `stream_options.include_usage` set when the model's upstream honours it and the request streams. */
export function withStreamUsage(body: Record<string, unknown>, request: Streamable, model: Model): UpstreamBody {
  if (request.stream !== true || !model.streamIncludeUsage) return { body, hideUsage: false };
  body.stream_options = { ...request.stream_options, include_usage: true };
  return { body, hideUsage: request.stream_options?.include_usage !== true };
}
