/**
 * A stored prompt on /v1/responses (`prompt: {id, version, variables}`): a template kept upstream whose input the proxy
 * never sees and whose tools the upstream runs. Refused unless the model takes stored prompts (the models file's
 * `stored_prompts`); then its declared size is reserved and the hosted tools its templates may carry are planned,
 * bounded and charged as if the request named them.
 */
import type { Model } from '../../catalog/models';
import { apiError, type ApiError } from '../../http/errors';
import type { ResponsesRequest } from '../../requests/responses-request';

/** The 400 of a stored prompt on a model that does not take them. */
export function storedPromptRefusal(request: ResponsesRequest, model: Model): ApiError | undefined {
  if (request.prompt == null || model.storedPrompts) return undefined;
  return apiError(
    'invalid_request_error',
    `${model.id} does not take stored prompts here: a template's input and tools would escape metering.`,
    'prompt',
  );
}

/** The tools the hosted tool plan counts: the request's own, and those its stored prompt's templates may carry. */
export function plannedTools(request: ResponsesRequest, model: Model): readonly unknown[] | null | undefined {
  const carried = request.prompt == null ? undefined : model.storedPrompts?.hostedTools;
  return carried && carried.length > 0 ? [...(request.tools ?? []), ...carried] : request.tools;
}

/** The tokens a stored prompt's template adds beyond the request (0 without one). */
export const storedPromptTokens = (request: ResponsesRequest, model: Model): number =>
  request.prompt == null ? 0 : (model.storedPrompts?.reserveTokens ?? 0);
