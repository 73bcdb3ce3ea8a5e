/** What a model supports, enforced before forwarding: a refusal names the param and says what the model accepts. */
import type { ChatMessage, ChatRequest } from '../requests/chat-request';
import { apiError, type ApiError } from '../http/errors';
import { SAMPLING_PARAMETERS } from './capabilities-schema';
import type { Model } from './models';

const IMAGE_PARTS = new Set(['image_url', 'input_image']);
const JSON_FORMATS = new Set(['json_object', 'json_schema']);

/** The first thing the request asks of the model that it does not support, or undefined. */
export function unsupported(req: ChatRequest, model: Model): ApiError | undefined {
  const caps = model.capabilities;
  const refuse = (param: string, message: string) => apiError('invalid_request_error', `${model.id} ${message}`, param);

  if (!caps.tools) {
    if (req.tools != null && req.tools.length > 0) return refuse('tools', 'does not support tools (function calling).');
    if (req.tool_choice != null && req.tool_choice !== 'none') return refuse('tool_choice', 'does not support tools (function calling).');
  }
  if (!caps.jsonMode && req.response_format != null && JSON_FORMATS.has(req.response_format.type)) {
    return refuse('response_format', `does not support JSON mode (response_format ${req.response_format.type}); it supports text only.`);
  }
  const sampling = unsupportedSampling(req, model);
  if (sampling) return sampling;
  for (let i = 0; i < req.messages.length; i++) {
    const m = req.messages[i];
    if (m.role === 'developer' && caps.developerRole === 'refuse') {
      return refuse(`messages[${i}].role`, "does not support 'developer' messages; use 'system'.");
    }
    if (!caps.vision && Array.isArray(m.content)) {
      const j = m.content.findIndex((part) => IMAGE_PARTS.has(part.type));
      if (j !== -1) return refuse(`messages[${i}].content[${j}]`, 'does not accept image input; it accepts text only.');
    }
  }
  return undefined;
}

/** The first sampling parameter in `body` the model does not accept (`capabilities.sampling_parameters`), or undefined. */
export function unsupportedSampling(body: object, model: Model): ApiError | undefined {
  const accepts = model.capabilities.sampling;
  if (accepts === null) return undefined;
  const fields = body as Record<string, unknown>;
  for (const p of SAMPLING_PARAMETERS) {
    if (fields[p] != null && !accepts.has(p)) {
      const accepted = [...accepts].join(', ') || 'none';
      return apiError('invalid_request_error', `${model.id} does not accept '${p}'; it accepts: ${accepted}.`, p);
    }
  }
  return undefined;
}

/** The messages as the upstream gets them: `developer` turned into `system` where the model file says so. */
export function upstreamMessages(req: ChatRequest, model: Model): ChatMessage[] {
  if (model.capabilities.developerRole !== 'system' || !req.messages.some((m) => m.role === 'developer')) return req.messages;
  return req.messages.map((m) => (m.role === 'developer' ? { ...m, role: 'system' } : m));
}
