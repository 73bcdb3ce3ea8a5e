/**
 * POST /v1/embeddings on the metered pipeline: inputs in, vectors out, charged on input tokens alone at the model's
 * input weight; the reservation is the inputs' bound. The answer (megabytes of floats) is relayed as it arrives, its
 * `usage` and top-level `model` found on bytes.
 */
import { validateEmbeddingsRequest, type EmbeddingsRequest } from '../../requests/embeddings-request';
import { BatchPromptSize, batchItems } from '../../metering/batch-prompt';
import type { Endpoint } from '../pipeline/endpoint';
import { promptCompletionUsage } from './openai-usage';

export const embeddingsEndpoint: Endpoint<EmbeddingsRequest> = {
  name: 'embeddings',
  validate: validateEmbeddingsRequest,
  modelName: (request) => request.model,
  unsupported: () => undefined,
  outputCap: () => undefined,
  choices: () => 0,
  prompt: (request) => new BatchPromptSize(batchItems(request.input)),
  promptWords: { noun: 'the longest input takes', field: 'input' },
  stream: () => false,
  upstreamBody: (request, model) => ({ body: { ...request, model: model.upstreamModel }, hideUsage: false }),
  answer: {
    relay: 'scan',
    // Input tokens only: whatever completion count an upstream adds, nothing is produced that the balance pays for.
    usage: (answer) => {
      const usage = promptCompletionUsage(answer.usage, false);
      return usage && { promptTokens: usage.promptTokens, completionTokens: 0 };
    },
    outputTexts: () => [],
  },
};
