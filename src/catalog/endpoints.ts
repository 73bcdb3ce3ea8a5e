/** The metered endpoints a model can serve (OpenAI's and Anthropic's Messages), by the name the models file uses, and their paths under /v1. */

export const ENDPOINTS = ['chat', 'completions', 'embeddings', 'responses', 'messages', 'rerank', 'score'] as const;

export type EndpointName = (typeof ENDPOINTS)[number];

/** Each endpoint's path under /v1: ours and the upstream's alike. */
export const ENDPOINT_PATHS: Readonly<Record<EndpointName, string>> = {
  chat: '/chat/completions',
  completions: '/completions',
  embeddings: '/embeddings',
  responses: '/responses',
  messages: '/messages',
  rerank: '/rerank',
  score: '/score',
};

/** The endpoints that produce no output tokens: a model serving only these has no output allowance, weight or price. */
export const NO_OUTPUT: ReadonlySet<EndpointName> = new Set<EndpointName>(['embeddings', 'rerank', 'score']);

/** What a model serves when its entry names no `endpoints`: the text endpoints (a file from before keeps working). */
export const DEFAULT_ENDPOINTS: readonly EndpointName[] = ['chat', 'completions', 'responses'];
