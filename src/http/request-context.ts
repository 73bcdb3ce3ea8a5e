/**
 * A request's context, kept on its response: its ids and the facts its log line reports, who is calling (what
 * authentication produced), the live key it came with, the console's session. The one module that touches
 * `res.locals`: each step records its part through a named function here, and the steps after it read it back typed.
 */
import type { ServerResponse } from 'node:http';
import type { EndpointName } from '../catalog/endpoints';
import type { KeyAccess } from '../store/ports/key-lookup';
import type { AccountState } from '../store/records/account';

/** Who is calling: what authentication produced (a bearer key, or the host's own `authenticate`). */
export interface Caller {
  /** The account charged. */
  accountId: string;
  /** The key whose caps and model list apply; null when the host authenticated the request without a key. */
  keyId: string | null;
}

/** What a request was charged, as its log line reports it. */
export interface ChargedUsage {
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
  chargedTokens: number;
  estimated: boolean;
}

/** What the request log reports of a request (observability/request-log.ts). */
export interface RequestFacts {
  requestId: string;
  clientRequestId?: string;
  caller?: Caller;
  /** The id of the model that answered (a fallback's, when one took over). */
  model?: string;
  /** The metered endpoint the request used. */
  endpoint?: EndpointName;
  stream?: boolean;
  /** The code of the error it was answered with (http/errors.ts). */
  errorCode?: string;
  /** An upstream fault's message (upstream_* codes only). */
  errorMessage?: string;
  usage?: ChargedUsage;
}

/** A console session's account and when the session started (Unix seconds). */
export interface ConsoleSession {
  account: AccountState;
  sessionCreated: number;
}

interface Context {
  facts: RequestFacts;
  /** The API whose error shape the route answers in (http/errors.ts); unset: OpenAI's. */
  errorShape?: 'openai' | 'anthropic';
  /** The key as liveCredential read it; null for a keyless request. */
  key?: KeyAccess | null;
  session?: ConsoleSession;
}

/** The context, made on first use (a response outside Express, such as the client-error handler's, has none). */
function context(res: ServerResponse): Context | undefined {
  const locals = (res as { locals?: Record<string, unknown> }).locals;
  if (locals === undefined) return undefined;
  return ((locals.context as Context | undefined) ??= { facts: { requestId: '' } }) as Context;
}

/** This request's facts: what the log line and the request metrics report. */
export function requestFacts(res: ServerResponse): Readonly<RequestFacts> {
  return context(res)?.facts ?? { requestId: '' };
}

/** The request log begins: the request's ids, and the endpoint when the route serves only one. */
export function beginRequest(res: ServerResponse, ids: { requestId: string; clientRequestId?: string; endpoint?: EndpointName }): void {
  const ctx = context(res);
  if (ctx) Object.assign(ctx.facts, ids);
}

/** Authentication succeeded: who is calling. */
export function authenticated(res: ServerResponse, caller: Caller): void {
  const ctx = context(res);
  if (ctx) ctx.facts.caller = caller;
}

/** Who is calling; only on a route behind authentication (bearerAuth or hostAuth), which sets it or answers. */
export function callerOf(res: ServerResponse): Caller {
  const caller = context(res)?.facts.caller;
  if (caller === undefined) throw new Error('callerOf: the route is not behind authentication');
  return caller;
}

/** liveCredential found the key live (null: a keyless request, whose account it checked). */
export function keyChecked(res: ServerResponse, key: KeyAccess | null): void {
  const ctx = context(res);
  if (ctx) ctx.key = key;
}

/** The key a request came with, after liveCredential; null for a keyless request (a host's own authentication). */
export function liveKey(res: ServerResponse): KeyAccess | null {
  return context(res)?.key ?? null;
}

/** The console's session check passed. */
export function signedIn(res: ServerResponse, session: ConsoleSession): void {
  const ctx = context(res);
  if (ctx) ctx.session = session;
}

/** The signed-in session; only on a route behind requireSession, which sets it or answers. */
export function sessionOf(res: ServerResponse): ConsoleSession {
  const session = context(res)?.session;
  if (session === undefined) throw new Error('sessionOf: the route is not behind a session check');
  return session;
}

/** The metered route read the request: its endpoint and whether it streams. */
export function routed(res: ServerResponse, endpoint: EndpointName, stream: boolean): void {
  const ctx = context(res);
  if (ctx) Object.assign(ctx.facts, { endpoint, stream });
}

/** The model the request is served by (again when a fallback takes over). */
export function servedBy(res: ServerResponse, modelId: string): void {
  const ctx = context(res);
  if (ctx) ctx.facts.model = modelId;
}

/** The request was answered with an error: its code, and an upstream fault's message (what the operator needs). */
export function answeredWithError(res: ServerResponse, code: string, message: string): void {
  const ctx = context(res);
  if (!ctx) return;
  ctx.facts.errorCode = code;
  if (code.startsWith('upstream_')) ctx.facts.errorMessage = message;
}

/** The route answers its errors in `shape` from here on (http/errors.ts's answerErrorsAs). */
export function setErrorShape(res: ServerResponse, shape: 'openai' | 'anthropic'): void {
  const ctx = context(res);
  if (ctx) ctx.errorShape = shape;
}

/** The error shape the route asked for, if any. */
export function errorShapeOf(res: ServerResponse): 'openai' | 'anthropic' | undefined {
  return context(res)?.errorShape;
}

/** The request was charged. */
export function charged(res: ServerResponse, usage: ChargedUsage): void {
  const ctx = context(res);
  if (ctx) ctx.facts.usage = usage;
}
