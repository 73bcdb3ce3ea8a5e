/**
 * Usage as the Messages API reports it: `input_tokens` (the prompt less its cache reads and writes),
 * `cache_creation_input_tokens`, `cache_read_input_tokens`, `output_tokens` (thinking included) and the server tools'
 * calls (`server_tool_use`). A stream says it twice: `message_start`'s (the prompt) and `message_delta`'s (cumulative,
 * the output and, from newer servers, the prompt again): the second completes the first.
 */
import type { Usage } from '../usage';

const count = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

/** `server_tool_use`'s `web_search_requests` → `web_search_call`: the item a call is priced by (server-tools.ts). */
function serverCalls(used: unknown): string[] | undefined {
  if (typeof used !== 'object' || used === null) return undefined;
  const calls: string[] = [];
  for (const [name, n] of Object.entries(used as Record<string, unknown>)) {
    if (!name.endsWith('_requests') || !count(n)) continue;
    const item = `${name.slice(0, -'_requests'.length)}_call`;
    // Bounded by the reservation's max_uses; a larger number is the upstream's error, charged per call all the same.
    for (let i = 0; i < Math.min(n, 10_000); i++) calls.push(item);
  }
  return calls;
}

/**
 * The usage in a Messages `usage` object, or undefined when it has no whole `output_tokens` (or no prompt, here or in
 * `previous`). `previous`: what message_start said, for a message_delta that leaves the prompt out.
 */
export function anthropicUsage(usage: unknown, previous?: Usage): Usage | undefined {
  if (typeof usage !== 'object' || usage === null) return undefined;
  const u = usage as Record<string, unknown>;
  if (!count(u.output_tokens)) return undefined;
  let input: number;
  let written: number;
  let read: number;
  if (count(u.input_tokens)) {
    input = u.input_tokens;
    written = count(u.cache_creation_input_tokens) ? u.cache_creation_input_tokens : (previous?.cacheWriteTokens ?? 0);
    read = count(u.cache_read_input_tokens) ? u.cache_read_input_tokens : (previous?.cachedTokens ?? 0);
  } else if (previous) {
    written = previous.cacheWriteTokens ?? 0;
    read = previous.cachedTokens ?? 0;
    input = previous.promptTokens - written - read;
  } else return undefined;
  const out: Usage = { promptTokens: input + written + read, completionTokens: u.output_tokens };
  if (read > 0) out.cachedTokens = read;
  if (written > 0) out.cacheWriteTokens = written;
  const calls = serverCalls(u.server_tool_use) ?? previous?.hostedCalls;
  if (calls) out.hostedCalls = calls;
  return out;
}
