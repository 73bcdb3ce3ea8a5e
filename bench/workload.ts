/** What the benchmark sends: the model, the two request bodies (JSON and stream), and every knob of the run. */
import type { Endpoint } from './load';

/** The model clients name; tokenmeter maps it to a different upstream name, as config/models.yaml does. */
export const BENCH_MODEL = 'bench/chat';
export const BENCH_UPSTREAM_MODEL = 'Bench/Chat-Instruct';
/** The embedding model (endpoints: [embeddings]) of the embeddings phase, and its upstream name. */
export const BENCH_EMBED_MODEL = 'bench/embed';
export const BENCH_EMBED_UPSTREAM_MODEL = 'Bench/Embed-Base';
/** Inputs per embeddings request, and the dimensions of each vector the mock answers with. */
export const EMBED_INPUTS = 64;
export const EMBED_DIMENSIONS = 768;
/** Content chunks per stream, and words per JSON answer (sent as `max_tokens`, which the mock honours). */
export const CHUNKS = 50;

const full = {
  /** Connections of the closed-loop (max req/s) runs. */
  connections: 64,
  /** A few connections before the RSS measurement (code paths compiled, heap not yet grown by full load). */
  lightWarmupMs: 1_500,
  /** Full load before the max req/s windows. */
  warmupMs: 3_000,
  /**
   * Each max req/s window. One per round: the figures are medians over `rounds` interleaved rounds (each round
   * measures every compared target once), so no target gets the quiet minute and another the noisy one.
   */
  maxWindowMs: 4_000,
  repeats: 1 as number,
  /** Rounds of the compared targets (passthrough, tokenmeter on Redis, the worker groups); BENCH_ROUNDS overrides. */
  rounds: 5,
  /** Fixed rates for latency and TTFB, well below every target's saturation, each for `rateWindowMs`. */
  jsonRate: 300,
  streamRate: 100,
  rateWindowMs: 5_000,
  /** Concurrent paced streams for RSS per open stream, and the mock's delay between their events. */
  openStreams: 1_000,
  pacedChunkDelayMs: 60,
};

/** BENCH_SMOKE=1: every phase a fraction as long, to check the harness end to end (its figures mean nothing). */
const smoke = process.env.BENCH_SMOKE === '1';

export const settings = {
  ...full,
  ...(smoke && { lightWarmupMs: 400, warmupMs: 500, maxWindowMs: 1_000, rateWindowMs: 1_000, openStreams: 100 }),
  rounds: Number(process.env.BENCH_ROUNDS ?? full.rounds),
  smoke,
};

// A short system prompt and a user turn of about a hundred tokens: a small but real prompt for the estimator.
const messages = [
  { role: 'system', content: 'You are a concise assistant. Answer in plain English, in at most three sentences.' },
  {
    role: 'user',
    content:
      'Our team runs a small inference cluster behind a reverse proxy that meters tokens per API key. ' +
      'Explain, for a new engineer, why the proxy reserves tokens before forwarding a request and settles the ' +
      'reservation afterwards from the usage the model server reports, and what happens when a stream breaks halfway.',
  },
];

export const jsonBody = Buffer.from(JSON.stringify({ model: BENCH_MODEL, messages, max_tokens: CHUNKS }));
export const streamBody = Buffer.from(
  JSON.stringify({ model: BENCH_MODEL, messages, max_tokens: CHUNKS, stream: true, stream_options: { include_usage: true } }),
);

/** 64 inputs of about 20 words each: the embeddings phase's request; its answer is 64 × 768 floats (about 460 KB). */
export const embeddingsBody = Buffer.from(
  JSON.stringify({
    model: BENCH_EMBED_MODEL,
    input: Array.from(
      { length: EMBED_INPUTS },
      (_, i) => `Passage ${i}: a metering proxy reserves tokens before it forwards a request and settles after.`,
    ),
  }),
);
/** The Responses stream phase's request: the same turns as input items, 50 output tokens, streamed. */
export const responsesStreamBody = Buffer.from(
  JSON.stringify({ model: BENCH_MODEL, input: messages, max_output_tokens: CHUNKS, stream: true }),
);

/**
 * The Messages stream phase's request (Anthropic's API): the same turns, 50 output tokens, streamed. Messages takes
 * the system prompt as `system`, beside user and assistant turns only (a system turn is refused with a 400).
 */
export const messagesStreamBody = Buffer.from(
  JSON.stringify({
    model: BENCH_MODEL,
    system: messages[0].content,
    messages: messages.slice(1),
    max_tokens: CHUNKS,
    stream: true,
  }),
);

/** Sent to targets without keys, so every target gets byte-for-byte the same requests. */
export const NO_KEY = `sk-${'x'.repeat(43)}`;

/** A request to a target on loopback: a chat completion unless `path` says otherwise. */
export function endpoint(port: number, key: string, body: Buffer, extraHeaders: Record<string, string> = {}, path?: string): Endpoint {
  return {
    port,
    body,
    path,
    headers: { 'content-type': 'application/json', 'content-length': String(body.length), authorization: `Bearer ${key}`, ...extraHeaders },
  };
}
