/**
 * What an endpoint contributes to the metered pipeline: its request schema, where its model and output cap live, its
 * prompt bound, how usage is found in its answers, and its tokenizer fallback. Everything else is the pipeline's.
 */
import type { Readable } from 'node:stream';
import type { EndpointName } from '../../catalog/endpoints';
import type { Model } from '../../catalog/models';
import type { ApiError } from '../../http/errors';
import type { PromptMeasure } from '../../metering/prompt-measure';
import type { HostedToolPlan } from '../hosted-tool-plan';
import type { Usage } from '../usage';

export type Validated<R> = { ok: true; request: R } | { ok: false; error: ApiError };

/** The output cap a client set (or could have set), by field name; `value` undefined when it named none. */
export interface OutputCap {
  field: string;
  value: number | undefined;
}

/**
 * One pass over a stream line's JSON object: where the string value naming the model is (`modelOpen` its quote, -1
 * when none; `modelClose` just past it), and whether a usage object is there. TopLevelScan is the chat-shaped one.
 */
export interface LineScan {
  modelOpen: number;
  modelClose: number;
  usage: boolean;
  scan(buf: Buffer, from: number, to: number, whole: boolean): void;
}

/** The ids of an answer the upstream stored: its own (a response's) and its output items'. */
export interface AnswerIds {
  id: string;
  itemIds: string[];
}

/** The fields of a stream's data lines whose string values are output text. */
export interface TextFields {
  /**
   * Matches each such field (group 1: its name; group 2: its raw value); a global RegExp. Its value part unrolled,
   * `"([^"\\]*(?:\\.[^"\\]*)*)"`: an alternation per character took V8's regexp interpreter ~100 ms on a 3.9 MB value.
   */
  pattern: RegExp;
  /** A field that repeats another on the same line (`name` copies `of`): counted only on a line without `of`. */
  alias?: { name: string; of: string };
}

/** How an endpoint's stream reads: where usage is, which fields carry output text, where the model name sits. */
export interface StreamDialect {
  /**
   * The usage in a data line that carries a `"usage": {…}` (parsed), or undefined; `previous`: the stream's usage so
   * far, for a dialect whose lines each say part of it (the Messages API's message_start and message_delta).
   */
  usage(event: Record<string, unknown>, previous: Usage | undefined): Usage | undefined;
  /**
   * Its usage before the whole (`shownUsage`) is the prompt's alone, not a running count of the output (the Messages
   * API's message_start): a stream cut before its whole usage is counted here, not charged that.
   */
  partialUsage?: boolean;
  /** Whether that line carries nothing but usage (dropped when only we asked for it). */
  usageOnly(event: Record<string, unknown>): boolean;
  /**
   * The usage object of a line whose usage is the answer's whole (the stream's last word on it), which then shows the
   * charge (charge-shown.ts); undefined for any other line.
   */
  shownUsage(event: Record<string, unknown>): Record<string, unknown> | undefined;
  /** The ids of the answer (a stored response's), when the usage line names them and the upstream stored it. */
  answerId?(event: Record<string, unknown>): AnswerIds | undefined;
  /** Where the output text is in the stream's data lines. */
  textFields: TextFields;
  /** A scanner of its data lines (one per stream, reused for every line): where the model is, whether usage is. */
  scanner(): LineScan;
  /** The event ending a client's stream the upstream broke off. */
  errorEvent(timedOut: boolean): string;
}

/** How an endpoint's answers are read for usage, parsed whole or scanned as bytes on their way through. */
export interface AnswerDialect {
  /** `parse`: buffered (within the response limit) and parsed; `scan`: relayed as it comes, usage found on bytes. */
  relay: 'parse' | 'scan';
  /** The upstream's usage in a parsed answer (a scanned one: `{usage}` alone), when sound. */
  usage(answer: Record<string, unknown>): Usage | undefined;
  /**
   * The output texts of a parsed answer, for our count when it has no usage; `echoed`: the prompt each choice begins
   * with (by choice index), which is not output.
   */
  outputTexts(answer: Record<string, unknown>, echoed: readonly string[] | undefined): string[];
  /** The answer's ids (a stored response's), when the upstream stored it. */
  answerId?(answer: Record<string, unknown>): AnswerIds | undefined;
  /** How its streams read; absent for an endpoint that does not stream. */
  stream?: StreamDialect;
}

/** The body sent upstream, and whether the client must not see the usage we asked for in its stream. */
export interface UpstreamBody {
  body: Record<string, unknown>;
  hideUsage: boolean;
}

/** A request sent upstream as another API (proxy/translate/): its path there, and its answer turned back. */
export interface Translation {
  path: string;
  /** The decoded answer body read through its translator; `limit`: the response limit, for one that holds a JSON answer. */
  answer(body: Readable, stream: boolean, limit: number): Readable;
}

/**
 * What stored state adds to a prompt: `tokens` the proxy knows are in the window (a previous response's conversation),
 * `bound` the most the upstream can expand beyond what the proxy sees (items given by id, a stored prompt), reserved
 * but not held against the window.
 */
export interface Carried {
  tokens: number;
  bound: number;
}

/** Nothing stored drawn on: one shared value, no object per request. */
export const NOTHING_CARRIED: Carried = Object.freeze({ tokens: 0, bound: 0 });

export interface Endpoint<R> {
  name: EndpointName;
  validate(body: unknown): Validated<R>;
  /** The model the client named. */
  modelName(request: R): string;
  /** What the request asks of the model that the model does not support, or undefined. */
  unsupported(request: R, model: Model): ApiError | undefined;
  /** The output cap field and value; undefined for an endpoint with no output (embeddings). */
  outputCap(request: R): OutputCap | undefined;
  /** The prompt each choice's text begins with (by choice index), when the request asks it echoed; else undefined. */
  echoed?(request: R): readonly string[] | undefined;
  /** Output tokens per choice when the client names no cap (before the balance lowers it). Default: the model's max. */
  defaultOutput?: number;
  /** Completions the request asks for (choices × prompts); the reservation covers each. 0: no output. */
  choices(request: R): number;
  /**
   * Stored state the request draws on (a previous response, items given by id, a stored prompt): refused unless the
   * account may use it; else what it carries into the prompt. Only endpoints with stored state have it.
   */
  prepare?(request: R, accountId: string, model: Model): Promise<ApiError | Carried>;
  /** The prompt's measure (`carried`: from `prepare`). May throw RangeError for a body nested too deeply to serialize. */
  prompt(request: R, carried: Carried): PromptMeasure;
  /** The hosted tool calls the request may make (reserved up front, charged per call); undefined: none. */
  hostedTools?(request: R, model: Model): HostedToolPlan | undefined;
  /** What the context-length refusal says of the prompt, and the field it names: `the messages take`, `messages`. */
  promptWords: { noun: string; field: string };
  stream(request: R): boolean;
  /** The body for the upstream: its model name, the output cap the reservation covers (`allowance`), usage asked for. */
  upstreamBody(request: R, model: Model, allowance: number): UpstreamBody;
  /** The translation, when this model's upstream speaks another API (`messages_via: chat`); undefined: none. */
  translation?(request: R, model: Model): Translation | undefined;
  answer: AnswerDialect;
  /**
   * The upstream answered with an id it stores (a response): record whose it is, before the client can name it.
   * `tokens`: the conversation's size so far (input and output), for the prompt bound of a request that continues it.
   */
  answered?(answer: AnswerIds, request: R, accountId: string, model: Model, tokens: number | undefined): void;
}

/** An endpoint of any request type, as the router holds them. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each endpoint checks its own request type
export type AnyEndpoint = Endpoint<any>;
