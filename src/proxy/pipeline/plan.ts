/**
 * The plan of a metered request before anything is reserved: the prompt's bound, the output allowance per choice (the
 * client's cap, or ours within the model's context and its tpm), and the refusals that need no store.
 */
import type { Model } from '../../catalog/models';
import { apiError, type ApiError } from '../../http/errors';
import { charge } from '../../metering/metering';
import { COUNT_FAILURES, countPrompt, type CountFailure, type TokenCounter } from '../../metering/prompt-counter';
import type { PromptMeasure } from '../../metering/prompt-measure';
import type { HostedToolPlan } from '../hosted-tool-plan';
import type { Endpoint, OutputCap } from './endpoint';

export interface Plan {
  prompt: PromptMeasure;
  /** The client's cap (undefined value: it named none); undefined for an endpoint with no output. */
  cap: OutputCap | undefined;
  /** Output tokens per choice to reserve for (0 without output). */
  allowance: number;
  /** The allowance is ours (the client named no cap): the balance and tpm limits may lower it. */
  defaultAllowance: boolean;
  choices: number;
  /** The hosted tool calls reserved for, on top of the prompt and output; undefined: none. */
  tools: HostedToolPlan | undefined;
}

/** The answer depends on the tokenizer's count: the bound says the prompt may not fit, and its floor says it may. */
const COUNT_FIRST = 'count first';

/**
 * The plan, or the refusal; counting the prompt first where the bound leaves the answer open (a promise only when the
 * worker counts it: a prompt the bound settles, or a short one, costs no await).
 */
export function planRequest<R>(
  endpoint: Endpoint<R>,
  request: R,
  model: Model,
  prompt: PromptMeasure,
  counter: TokenCounter,
): Plan | ApiError | Promise<Plan | ApiError> {
  const planned = plan(endpoint, request, model, prompt);
  if (planned !== COUNT_FIRST) return planned;
  // Counted, the prompt is exact: the plan no longer asks for a count.
  const counted = (failure: CountFailure | undefined) =>
    failure ? uncounted(failure, endpoint.promptWords.field) : (plan(endpoint, request, model, prompt) as Plan | ApiError);
  const failure = countPrompt(counter, prompt);
  return failure instanceof Promise ? failure.then(counted) : counted(failure);
}

/** The refusal of a prompt the tokenizer could not count: nothing is reserved, a retry may fare better. */
export function uncounted(failure: CountFailure, field: string): ApiError {
  return apiError('prompt_not_counted', `The prompt ${COUNT_FAILURES[failure]}; retry, or send a shorter one.`, field);
}

function plan<R>(endpoint: Endpoint<R>, request: R, model: Model, prompt: PromptMeasure): Plan | ApiError | typeof COUNT_FIRST {
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
  const output = cap ? (requested ?? Math.min(endpoint.defaultOutput ?? model.maxOutputTokens, model.maxOutputTokens)) : 0;
  if ((prompt.longest ?? prompt.tokens) + output > model.contextLength && !prompt.exact) {
    // A floor that already leaves no room is refusal enough: the tokenizer is spared what cannot fit.
    // (tooLong refuses a window beyond the context less the output asked for, or less one token for one to produce.)
    const floor = prompt.floor(model.contextLength - (requested ?? (cap ? 1 : 0)));
    return tooLong(endpoint, model, cap, floor, 'at least') ?? COUNT_FIRST;
  }
  const inWindow = prompt.longest ?? prompt.tokens;
  const refused = tooLong(endpoint, model, cap, inWindow, 'about');
  if (refused) return refused;
  const tools = endpoint.hostedTools?.(request, model);
  if (!cap) return { prompt, cap, allowance: 0, defaultAllowance: false, choices: 0, tools };
  const choices = endpoint.choices(request);
  let allowance = requested ?? Math.min(endpoint.defaultOutput ?? model.maxOutputTokens, model.contextLength - inWindow);
  // Without a cap the allowance is ours to choose: no more than the model's tpm could ever admit.
  const tpm = model.limits?.tpm;
  if (tpm !== undefined && requested === undefined) {
    const fits = Math.floor((tpm - charge(model, prompt.tokens, 0)) / (model.outputWeight * choices));
    allowance = Math.max(1, Math.min(allowance, fits));
  }
  return { prompt, cap, allowance, defaultAllowance: requested === undefined, choices, tools };
}

/** The context-length refusal when a window of `inWindow` tokens leaves no room for the output asked for. */
function tooLong<R>(
  endpoint: Endpoint<R>,
  model: Model,
  cap: OutputCap | undefined,
  inWindow: number,
  approx: 'about' | 'at least',
): ApiError | undefined {
  const room = model.contextLength - inWindow;
  const requested = cap?.value;
  if (room >= (cap ? 1 : 0) && (requested === undefined || requested <= room)) return undefined;
  const { noun, field } = endpoint.promptWords;
  return apiError(
    'context_length_exceeded',
    `This model's maximum context length is ${model.contextLength} tokens; ${noun} ${approx} ${inWindow}` +
      (requested !== undefined ? ` and '${cap!.field}' asks for ${requested} more.` : '.'),
    room < 1 || !cap ? field : cap.field,
  );
}
