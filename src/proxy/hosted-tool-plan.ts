/**
 * Hosted tools on /v1/responses and /v1/chat/completions: refused unless the model allows them (the models file's
 * `hosted_tools`), and when allowed bounded (`max_tool_calls`), reserved up front and charged per call the answer
 * reports. Function and custom tools are the client's own code: they always pass and cost nothing here.
 */
import type { Model } from '../catalog/models';
import { apiError, type ApiError } from '../http/errors';
import { mcpServerUrlRefusal } from './mcp-server-url';

const CLIENT_TOOLS = new Set(['function', 'custom']);
/** `tool_choice` types that name no hosted tool. */
const CLIENT_CHOICES = new Set(['function', 'custom', 'allowed_tools']);

/** The output item a call of each hosted tool appears as in a Responses answer (others: `<type>_call`). */
const CALL_ITEMS: Readonly<Record<string, string>> = {
  computer_use_preview: 'computer_call',
  computer: 'computer_call',
};
const callItem = (type: string) => CALL_ITEMS[type] ?? (type.startsWith('web_search') ? 'web_search_call' : `${type}_call`);

/** A request's hosted tool calls: what is reserved for them, and what each reported call is charged. */
export interface HostedToolPlan {
  /** Calls reserved for (on /v1/responses sent upstream as `max_tool_calls`). */
  calls: number;
  /** Tokens the reservation holds per call: the dearest of the request's hosted tools. */
  perCall: number;
  /** Tokens per call by the output item a call appears as. */
  prices: ReadonlyMap<string, number>;
  /** Chat's web search: the reserved calls are charged whatever the answer shows (see hostedChatPlan). */
  fixed: boolean;
}

const typeOf = (tool: unknown): unknown => (typeof tool === 'object' && tool !== null ? (tool as { type?: unknown }).type : undefined);

/** The first hosted tool the request names that the model does not allow (`tools[i].type`, `tool_choice.type`), or undefined. */
export function hostedToolRefusal(tools: readonly unknown[] | null | undefined, choice: unknown, model: Model): ApiError | undefined {
  const refuse = (param: string, type: unknown) =>
    apiError(
      'invalid_request_error',
      `${model.id} does not allow the hosted tool '${String(type)}' here; only function and custom tools pass.`,
      param,
    );
  for (let i = 0; i < (tools?.length ?? 0); i++) {
    const type = typeOf(tools![i]);
    if (typeof type === 'string' && CLIENT_TOOLS.has(type)) continue;
    const allowed = typeof type === 'string' ? model.hostedTools.get(type) : undefined;
    if (!allowed) return refuse(`tools[${i}].type`, type);
    const badUrl = type === 'mcp' ? mcpServerUrlRefusal(tools![i], allowed, `tools[${i}].server_url`) : undefined;
    if (badUrl) return badUrl;
  }
  const chosen = typeOf(choice);
  if (typeof chosen === 'string' && !CLIENT_CHOICES.has(chosen) && !model.hostedTools.has(chosen))
    return refuse('tool_choice.type', chosen);
  return undefined;
}

/** Chat's `web_search_options` (a search model's web search): refused unless the model allows `web_search`. */
export function webSearchOptionsRefusal(options: unknown, model: Model): ApiError | undefined {
  if (options == null || model.hostedTools.has('web_search')) return undefined;
  return apiError(
    'invalid_request_error',
    `${model.id} does not allow the hosted tool 'web_search' here (web_search_options).`,
    'web_search_options',
  );
}

/**
 * The plan of a Responses request's hosted tool calls, or undefined when it names none. The calls reserved: the
 * client's `max_tool_calls` when it names one, never more than the largest `max_calls` of its hosted tools.
 */
export function hostedResponsesPlan(tools: readonly unknown[] | null | undefined, maxToolCalls: number | null | undefined, model: Model) {
  let maxCalls = 0;
  let perCall = 0;
  const prices = new Map<string, number>();
  for (const tool of tools ?? []) {
    const type = typeOf(tool) as string;
    const allowed = model.hostedTools.get(type);
    if (!allowed) continue;
    maxCalls = Math.max(maxCalls, allowed.maxCalls);
    perCall = Math.max(perCall, allowed.perCallTokens);
    const item = callItem(type);
    prices.set(item, Math.max(prices.get(item) ?? 0, allowed.perCallTokens));
  }
  if (perCall === 0) return undefined;
  const calls = maxToolCalls == null ? maxCalls : Math.min(maxToolCalls, maxCalls);
  return { calls, perCall, prices, fixed: false } satisfies HostedToolPlan;
}

/**
 * Chat's web search: a search model searches once for every request (OpenAI's documentation: it "always retrieves
 * information from the web"), and its `url_citation` annotations are the sources one search found, not calls. So one
 * call is reserved and charged per request.
 */
export function hostedChatPlan(options: unknown, model: Model): HostedToolPlan | undefined {
  const search = options == null ? undefined : model.hostedTools.get('web_search');
  if (!search) return undefined;
  return { calls: 1, perCall: search.perCallTokens, prices: new Map(), fixed: true };
}

/** Tokens a plan reserves. */
export const reservedToolTokens = (plan: HostedToolPlan | undefined): number => (plan ? plan.calls * plan.perCall : 0);

/**
 * The hosted tool calls of a Responses answer's `output` (every `*_call` item but the client's function and custom
 * tool calls), by item type; undefined when the answer has no output list to read.
 */
export function hostedCalls(output: unknown): string[] | undefined {
  if (!Array.isArray(output)) return undefined;
  const calls: string[] = [];
  for (const item of output as unknown[]) {
    const type = typeOf(item);
    if (typeof type === 'string' && type.endsWith('_call') && type !== 'function_call' && type !== 'custom_tool_call') calls.push(type);
  }
  return calls;
}
