/**
 * Anthropic's server tools on /v1/messages (`web_search_20250305`, `code_execution_20250522`, …): the hosted-tool rules
 * (hosted-tools.ts) in the Messages API's terms. A tool with no `type` (or `custom`) is the client's own and passes;
 * any other is refused unless the model's `hosted_tools` names its type, versioned or not (`web_search`). Allowed, each
 * is capped by `max_uses` (its entry's `max_calls`), the calls reserved up front and charged per call `usage`'s
 * `server_tool_use` reports.
 */
import type { HostedTool } from '../../catalog/hosted-tools';
import type { Model } from '../../catalog/models';
import { apiError, type ApiError } from '../../http/errors';
import type { HostedToolPlan } from '../hosted-tool-plan';

interface Tool {
  type?: string;
  max_uses?: unknown;
}

const clientTool = (type: string | undefined) => type === undefined || type === 'custom';

/** `web_search_20250305` → `web_search`: the name server_tool_use counts its calls by. */
const baseName = (type: string) => type.replace(/_\d{8}$/, '');

function allowed(model: Model, type: string): HostedTool | undefined {
  return model.hostedTools.get(type) ?? model.hostedTools.get(baseName(type));
}

/** The first server tool the model does not allow, refused; else undefined. */
export function serverToolRefusal(tools: readonly Tool[] | undefined, model: Model): ApiError | undefined {
  for (let i = 0; i < (tools?.length ?? 0); i++) {
    const type = tools![i].type;
    if (clientTool(type) || allowed(model, type as string)) continue;
    return apiError(
      'invalid_request_error',
      `${model.id} does not allow the server tool '${String(type)}' here; only the client's own tools pass.`,
      `tools[${i}].type`,
    );
  }
  return undefined;
}

/** The calls each allowed server tool may make: the client's `max_uses`, never more than its entry's `max_calls`. */
function usesOf(tool: Tool, entry: HostedTool): number {
  const asked = tool.max_uses;
  return Number.isSafeInteger(asked) && (asked as number) >= 0 ? Math.min(asked as number, entry.maxCalls) : entry.maxCalls;
}

/** The plan of a request's server tool calls, or undefined when it names none. */
export function serverToolPlan(tools: readonly Tool[] | undefined, model: Model): HostedToolPlan | undefined {
  let calls = 0;
  let perCall = 0;
  const prices = new Map<string, number>();
  for (const tool of tools ?? []) {
    if (clientTool(tool.type)) continue;
    const entry = allowed(model, tool.type as string);
    if (!entry) continue;
    calls += usesOf(tool, entry);
    perCall = Math.max(perCall, entry.perCallTokens);
    const item = `${baseName(tool.type as string)}_call`;
    prices.set(item, Math.max(prices.get(item) ?? 0, entry.perCallTokens));
  }
  return perCall === 0 ? undefined : { calls, perCall, prices, fixed: false };
}

/** The tools as sent upstream: each server tool capped at the calls reserved for it. */
export function cappedTools(tools: readonly Tool[] | undefined, model: Model): Tool[] | undefined {
  if (!tools) return undefined;
  return tools.map((tool) => {
    const entry = clientTool(tool.type) ? undefined : allowed(model, tool.type as string);
    return entry ? { ...tool, max_uses: usesOf(tool, entry) } : tool;
  });
}
