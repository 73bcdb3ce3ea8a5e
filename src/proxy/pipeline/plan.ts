/**
 * The plan of a metered request before anything is reserved: the prompt's bound, the output allowance per choice (the
 * client's cap, or ours within the model's context and its tpm), and the refusals that need no store.
 */
import type { Model } from '../../catalog/models';
import { apiError, type ApiError } from '../../http/errors';
import { charge } from '../../metering/metering';
import type { Endpoint, OutputCap, PromptMeasure } from './endpoint';

export interface Plan {
  prompt: PromptMeasure;
  /** The client's cap (undefined value: it named none); undefined for an endpoint with no output. */
  cap: OutputCap | undefined;
  /** Output tokens per choice to reserve for (0 without output). */
  allowance: number;
  /** The allowance is ours (the client named no cap): the balance and tpm limits may lower it. */
  defaultAllowance: boolean;
  choices: number;
}

/** The plan, or the refusal. Throws RangeError for a body nested too deeply to serialize. */
/** `carried`: prompt tokens the request brings from stored state (a previous response), from the endpoint's `prepare`. */
export function plan<R>(endpoint: Endpoint<R>, request: R, model: Model, carried = 0): Plan | ApiError {
  const cap = endpoint.outputCap(request);
  const requested = cap?.value;
  if (cap && requested !== undefined && requested > model.maxOutputTokens) {
    return apiError(
      'invalid_request_error',
      `'${cap.field}' is too large: ${model.id} produces at most ${model.maxOutputTokens} tokens.`,
      cap.field,
    );
  }
  // The prompt's size: a bound that costs next to nothing, counted with the tokenizer only where that could change
  // an answer (near the context limit here, with a tight balance below, or at settlement without upstream usage).
  const prompt = endpoint.prompt(request, carried);
  const inWindow = () => prompt.longest ?? prompt.tokens;
  const output = cap ? (requested ?? Math.min(endpoint.defaultOutput ?? model.maxOutputTokens, model.maxOutputTokens)) : 0;
  if (inWindow() + output > model.contextLength) prompt.count();
  const room = model.contextLength - inWindow();
  if (room < (cap ? 1 : 0) || (requested !== undefined && requested > room)) {
    const { noun, field } = endpoint.promptWords;
    return apiError(
      'context_length_exceeded',
      `This model's maximum context length is ${model.contextLength} tokens; ${noun} about ${inWindow()}` +
        (requested !== undefined ? ` and '${cap!.field}' asks for ${requested} more.` : '.'),
      room < 1 || !cap ? field : cap.field,
    );
  }
  if (!cap) return { prompt, cap, allowance: 0, defaultAllowance: false, choices: 0 };
  const choices = endpoint.choices(request);
  let allowance = requested ?? Math.min(endpoint.defaultOutput ?? model.maxOutputTokens, room);
  // Without a cap the allowance is ours to choose: no more than the model's tpm could ever admit.
  const tpm = model.limits?.tpm;
  if (tpm !== undefined && requested === undefined) {
    const fits = Math.floor((tpm - charge(model, prompt.tokens, 0)) / (model.outputWeight * choices));
    allowance = Math.max(1, Math.min(allowance, fits));
  }
  return { prompt, cap, allowance, defaultAllowance: requested === undefined, choices };
}
