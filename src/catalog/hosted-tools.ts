/**
 * A model's hosted tools (`hosted_tools` in the models file): the tool types run by the upstream itself (web search,
 * file search, a code interpreter…) that this model may be asked for, each with the tokens one call costs. Without an
 * entry a hosted tool is refused: its calls would add input the reservation never saw and fees `usage` never shows.
 */
import { z } from 'zod';

/** Calls one request may make to hosted tools when its entry names no `max_calls`. */
export const DEFAULT_MAX_TOOL_CALLS = 5;

export const hostedToolsSchema = z
  .record(
    z.string().regex(/^[a-z][a-z0-9_]*$/, 'must be a tool type such as web_search'),
    z.strictObject({
      /** Tokens charged per call the answer reports (charged as they are, not weighted). */
      per_call_tokens: z.number().int().positive(),
      /** Most calls one request may make (sent upstream as `max_tool_calls`). Default 5. */
      max_calls: z.number().int().positive().default(DEFAULT_MAX_TOOL_CALLS),
      /** file_search: the vector stores any account may search (they are the operator's, shared). Default none. */
      vector_store_ids: z.array(z.string().min(1)).optional(),
      /** code_interpreter: the containers any account may name (the operator's, shared). Default none. */
      containers: z.array(z.string().min(1)).optional(),
      /** mcp (required there): the hosts a request's `server_url` may name; every other host is refused. */
      allowed_hosts: z.array(z.string().min(1)).min(1, 'must list at least one host').optional(),
      /** mcp: let `allowed_hosts` name private, loopback and link-local addresses (refused by default). Default false. */
      allow_private_hosts: z.boolean().default(false),
    }),
  )
  .superRefine((tools, ctx) => {
    for (const type of ['function', 'custom'])
      if (type in tools)
        ctx.addIssue({ code: 'custom', path: [type], message: 'function and custom tools always pass: they are not hosted tools' });
    // The upstream calls whatever server_url a request names: without a list, a client could aim it anywhere.
    if (tools.mcp && tools.mcp.allowed_hosts === undefined)
      ctx.addIssue({ code: 'custom', path: ['mcp', 'allowed_hosts'], message: "is required: the hosts a request's server_url may name" });
  });

/** One allowed hosted tool, resolved. */
export interface HostedTool {
  perCallTokens: number;
  maxCalls: number;
  /** The operator's vector-store or container ids this tool may name; every other id is refused. */
  sharedIds: ReadonlySet<string>;
  /** mcp: the hosts `server_url` may name (lower case), and whether private addresses among them pass. */
  allowedHosts: ReadonlySet<string> | undefined;
  allowPrivateHosts: boolean;
}

/** The allowed hosted tools by type; empty when the model allows none (the default). */
export type HostedTools = ReadonlyMap<string, HostedTool>;

export function hostedToolsOf(entry: z.output<typeof hostedToolsSchema> | undefined): HostedTools {
  const tools = new Map<string, HostedTool>();
  for (const [type, t] of Object.entries(entry ?? {})) {
    const sharedIds = new Set([...(t.vector_store_ids ?? []), ...(t.containers ?? [])]);
    const allowedHosts = t.allowed_hosts && new Set(t.allowed_hosts.map((h) => h.toLowerCase()));
    tools.set(type, {
      perCallTokens: t.per_call_tokens,
      maxCalls: t.max_calls,
      sharedIds,
      allowedHosts,
      allowPrivateHosts: t.allow_private_hosts,
    });
  }
  return tools;
}
