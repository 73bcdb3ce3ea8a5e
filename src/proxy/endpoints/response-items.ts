/** What a Responses request's tools, formats and input items ask of a model, and its input as the upstream gets it. */
import type { Model } from '../../catalog/models';
import { apiError, type ApiError } from '../../http/errors';
import type { ResponsesInputItem, ResponsesRequest } from '../../requests/responses-request';
import { hostedToolRefusal } from '../hosted-tool-plan';

const IMAGE_PARTS = new Set(['input_image', 'image_url']);
const JSON_FORMATS = new Set(['json_object', 'json_schema']);

/** The first thing the request asks that the model does not support, or undefined. */
export function responseItemsRefusal(request: ResponsesRequest, model: Model): ApiError | undefined {
  const caps = model.capabilities;
  const refuse = (param: string, message: string) => apiError('invalid_request_error', `${model.id} ${message}`, param);
  if (!caps.tools) {
    if (request.tools != null && request.tools.length > 0) return refuse('tools', 'does not support tools (function calling).');
    if (request.tool_choice != null && request.tool_choice !== 'none')
      return refuse('tool_choice', 'does not support tools (function calling).');
  }
  const hosted = hostedToolRefusal(request.tools, request.tool_choice, model);
  if (hosted) return hosted;
  const format = request.text?.format?.type;
  if (!caps.jsonMode && format !== undefined && JSON_FORMATS.has(format)) {
    return refuse('text.format', `does not support JSON mode (text.format ${format}); it supports text only.`);
  }
  if (typeof request.input === 'string') return undefined;
  for (let i = 0; i < request.input.length; i++) {
    const item = request.input[i];
    if (item.role === 'developer' && caps.developerRole === 'refuse')
      return refuse(`input[${i}].role`, "does not support 'developer' messages; use 'system'.");
    if (!caps.vision && Array.isArray(item.content)) {
      const j = item.content.findIndex((part) => IMAGE_PARTS.has(part.type));
      if (j !== -1) return refuse(`input[${i}].content[${j}]`, 'does not accept image input; it accepts text only.');
    }
  }
  return undefined;
}

/** The input as the upstream gets it: `developer` turned into `system` where the models file says so. */
export function upstreamInput(request: ResponsesRequest, model: Model): ResponsesRequest['input'] {
  const input = request.input;
  if (typeof input === 'string' || model.capabilities.developerRole !== 'system' || !input.some((m) => m.role === 'developer'))
    return input;
  return input.map((m): ResponsesInputItem => (m.role === 'developer' ? { ...m, role: 'system' } : m));
}
