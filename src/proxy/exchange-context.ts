/** What an Exchange is handed (the app's shared services, and what is particular to one request), and what its relay is. */
import type { EndpointName } from '../catalog/endpoints';
import type { Model } from '../catalog/models';
import type { Lease, Meter } from '../metering/metering';
import type { CountTexts } from '../metering/output-count';
import type { Logger } from '../observability/logger';
import type { Metrics } from '../observability/metrics';
import type { ShownCharge } from './charge-shown';
import type { HostedToolPlan } from './hosted-tool-plan';
import type { AnswerDialect, AnswerIds, Translation } from './pipeline/endpoint';
import type { Usage } from './usage';

/** What every exchange of the app shares: built once, not copied into each request. */
export interface ExchangeDeps {
  meter: Meter;
  logger: Logger;
  metrics: Metrics;
  /** Largest non-streamed upstream body we buffer. */
  upstreamResponseLimit: number;
  /** Counts texts (long ones off the event loop): answers' output when no usage came. */
  count: CountTexts;
  /** The process is shutting down: a stream whose client left is not read on (upstream-drain.ts). */
  shuttingDown: () => boolean;
}

/** What is particular to one request. */
export interface ExchangeContext {
  accountId: string;
  /** Null when the request was charged to its account without a key. */
  keyId: string | null;
  requestId: string;
  model: Model;
  endpoint: EndpointName;
  /** The upstream path under its base URL: `/chat/completions`. */
  path: string;
  stream: boolean;
  /** We added `stream_options.include_usage` that the client did not ask for: hide the usage chunk. */
  hideUsageChunk: boolean;
  /** How the endpoint's answers carry usage. */
  answer: AnswerDialect;
  /** The upstream speaks another API: its answers are translated before they are relayed (proxy/translate/). */
  translation?: Translation;
  /** Completion tokens the reservation covers (allowance × choices): more at settlement is an overrun. */
  reservedOutput: number;
  /** The hosted tool calls reserved for, charged per call the answer reports (a line of its own); undefined: none. */
  hostedTools: HostedToolPlan | undefined;
  /** Characters at a stream's start that echo the prompt (completions' `echo`): not output. */
  echoedChars: number;
  /** Our count of a parsed answer's output, echoed prompts left out (long texts off the event loop). */
  outputTokens: (answer: Record<string, unknown>) => number | Promise<number>;
  /** Our tokenizer's prompt count, asked for only when the upstream reports no usage (a promise when it is long). */
  promptTokens: () => number | Promise<number>;
  lease: Lease;
  /** The answer carries an id the upstream stores: told before the client can see it (with the tokens, if known). */
  onAnswer?: (answer: AnswerIds, tokens: number | undefined) => void;
}

/** What relaying an answer needs of its request. */
export type AnswerRelayContext = Pick<
  ExchangeContext,
  'model' | 'stream' | 'hideUsageChunk' | 'answer' | 'translation' | 'echoedChars' | 'outputTokens' | 'onAnswer' | 'reservedOutput'
>;

/** What a relay reads of the app's settings, and the ports it reports through (one small object a request). */
export interface RelayPorts {
  /** Largest non-streamed answer held (or parsed) whole. */
  limit: number;
  /** Counts a stream's text when no usage comes (long texts off the event loop). */
  count: CountTexts;
  /** Charges a stream's whole usage at its line, which then shows the charge. */
  charge: (usage: Usage, status: number) => Promise<ShownCharge>;
  /** How long a stream whose client left is read on for its usage (0: not at all, as while the process stops). */
  drainMs: () => number;
  /** The streams being relayed now. */
  activeStreams: { inc(): void; dec(): void };
  /** Told once, when a stream's first event leaves for the client: its time to first token, seen as it happens. */
  firstEvent: () => void;
}
