/**
 * POST /v1/completions on the metered pipeline: a prompt (or a batch of them) in, `n` texts per prompt out. The
 * reservation covers `best_of` completions of `max_tokens` (OpenAI's default of 16) per prompt; the charge is what the
 * upstream reports.
 */
import { unsupportedSampling } from '../../catalog/capabilities';
import { validateCompletionsRequest, type CompletionsRequest } from '../../requests/completions-request';
import { BatchPromptSize, batchItems } from '../../metering/batch-prompt';
import { TopLevelScan } from '../model-rewriter';
import type { Endpoint, TextFields } from '../pipeline/endpoint';
import { choicesEmpty, chunkUsage, dataErrorEvent, promptCompletionUsage, usageChunkUsage } from './openai-usage';
import { capOutput } from './output-cap';
import { withStreamUsage } from './stream-usage';

/** OpenAI's `max_tokens` when a completions request names none. */
export const COMPLETIONS_DEFAULT_MAX_TOKENS = 16;
/** The string values that are output text in a completions stream: each choice's `text`. */
const TEXT_FIELDS: TextFields = { pattern: /"(text)" *: *"([^"\\]*(?:\\.[^"\\]*)*)"/g };

/** A completions answer's texts, less the prompt each begins with when it was echoed. */
function choiceTexts(choices: unknown, echoed: readonly string[] | undefined): string[] {
  const texts: string[] = [];
  if (!Array.isArray(choices)) return texts;
  choices.forEach((choice: { index?: unknown; text?: unknown } | null, i) => {
    const text = choice?.text;
    if (typeof text !== 'string') return;
    const prompt = echoed?.[typeof choice?.index === 'number' ? choice.index : i];
    texts.push(prompt !== undefined && text.startsWith(prompt) ? text.slice(prompt.length) : text);
  });
  return texts;
}

/**
 * With `echo`, the prompt each choice's text begins with, by choice index: OpenAI numbers a batch's choices prompt by
 * prompt, `n` to each. Token-array prompts echo as text we cannot tell apart: none.
 */
function echoedPrompts(request: CompletionsRequest): readonly string[] | undefined {
  if (request.echo !== true) return undefined;
  const n = request.n ?? 1;
  const echoed: string[] = [];
  for (const item of batchItems(request.prompt)) {
    for (let i = 0; i < n; i++) echoed.push(typeof item === 'string' ? item : '');
  }
  return echoed;
}

export const completionsEndpoint: Endpoint<CompletionsRequest> = {
  name: 'completions',
  validate: validateCompletionsRequest,
  modelName: (request) => request.model,
  unsupported: unsupportedSampling,
  outputCap: (request) => ({ field: 'max_tokens', value: request.max_tokens ?? undefined }),
  defaultOutput: COMPLETIONS_DEFAULT_MAX_TOKENS,
  echoed: echoedPrompts,
  // Each prompt gets best_of completions generated (n of them returned): the reservation covers all of them.
  choices: (request) => batchItems(request.prompt).length * Math.max(request.n ?? 1, request.best_of ?? 1),
  prompt: (request) => new BatchPromptSize(batchItems(request.prompt), request.suffix ?? ''),
  promptWords: { noun: 'the prompt takes', field: 'prompt' },
  stream: (request) => request.stream === true,
  upstreamBody(request, model, allowance) {
    // Always named: servers differ in their default (llama.cpp's is unbounded), and the reservation covers this one.
    const body = capOutput({ ...request, model: model.upstreamModel }, model.outputCapFields.completions, allowance);
    return withStreamUsage(body, request, model);
  },
  answer: {
    relay: 'parse',
    usage: (answer) => promptCompletionUsage(answer.usage),
    outputTexts: (answer, echoed) => choiceTexts(answer.choices, echoed),
    stream: {
      usage: chunkUsage,
      usageOnly: choicesEmpty,
      shownUsage: usageChunkUsage,
      textFields: TEXT_FIELDS,
      scanner: () => new TopLevelScan(),
      errorEvent: dataErrorEvent,
    },
  },
};
