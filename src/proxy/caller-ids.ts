/**
 * Every id a request names is the caller's: the one place that checks, for every route and field that takes an id of
 * state kept upstream (shared by all accounts behind the proxy's one upstream key). Anything not the caller's is the
 * same 404 as an id never seen, so ids cannot be probed; nothing is reserved or forwarded.
 *
 * - a stored response (`previous_response_id`, /v1/responses/{id}): recorded as the caller's when it was answered;
 * - an `item_reference`'s id, an `mcp_approval_response`'s `approval_request_id`: an item of one of the caller's stored
 *   responses (its output items, and the input items the caller listed);
 * - any other input item's `id` (a message, function call, reasoning… sent back): not another account's item (an id
 *   never recorded passes: it names nothing stored through this proxy, as with a `store: false` answer resent whole);
 * - a vector store (`file_search.vector_store_ids`) or container (`code_interpreter.container`): one the models
 *   file shares on that tool (tokenmeter has no path to create them, so none is an account's own);
 * - a file (`file_id` of an input part or a stored prompt's variable, a container's `file_ids`, chat's
 *   `file.file_id`): none (no upload path).
 */
import type { Model } from '../catalog/models';
import type { ChatRequest } from '../requests/chat-request';
import { apiError, type ApiError } from '../http/errors';
import type { ResponsesRequest } from '../requests/responses-request';
import type { ResponseOwner, ResponseOwners } from '../store/ports/response-owners';

const notFound = (noun: string, id: string, param: string): ApiError =>
  apiError('not_found', `No ${noun} with id '${id}' was found.`, param);

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null;

/** The stored response, when it is the caller's; else undefined (the 404's case). */
export async function callerResponse(owners: ResponseOwners, accountId: string, id: string): Promise<ResponseOwner | undefined> {
  const owner = await owners.get(id);
  return owner && owner.accountId === accountId ? owner : undefined;
}

/** The 404 of a response id that is not the caller's. */
export const responseNotFound = (id: string, param: string | null): ApiError =>
  apiError('not_found', `No response with id '${id}' was found.`, param);

/** The first file id in content parts (`file_id`, or chat's `file.file_id`): no file is any account's own. */
function fileRefusal(parts: unknown, at: string): ApiError | undefined {
  if (!Array.isArray(parts)) return undefined;
  for (let j = 0; j < parts.length; j++) {
    const part = parts[j] as unknown;
    if (!isObj(part)) continue;
    if (typeof part.file_id === 'string') return notFound('file', part.file_id, `${at}[${j}].file_id`);
    if (isObj(part.file) && typeof part.file.file_id === 'string') return notFound('file', part.file.file_id, `${at}[${j}].file.file_id`);
  }
  return undefined;
}

/** A file a stored prompt's variable names (an input part, as in the input). */
function variablesRefusal(variables: Record<string, unknown> | null | undefined): ApiError | undefined {
  for (const name in variables ?? {}) {
    const refused = fileRefusal([variables![name]], 'prompt.variables');
    if (refused) return { ...refused, param: `prompt.variables.${name}.file_id` };
  }
  return undefined;
}

/** The first vector store, container or file a tool names that the models file does not share on it. */
function toolIdRefusal(tools: readonly unknown[] | null | undefined, model: Model): ApiError | undefined {
  for (let i = 0; i < (tools?.length ?? 0); i++) {
    const tool = tools![i];
    if (!isObj(tool) || typeof tool.type !== 'string') continue;
    const shared = model.hostedTools.get(tool.type)?.sharedIds;
    const ok = (id: unknown) => typeof id === 'string' && shared?.has(id) === true;
    const stores = Array.isArray(tool.vector_store_ids) ? (tool.vector_store_ids as unknown[]) : [];
    for (let j = 0; j < stores.length; j++)
      if (!ok(stores[j])) return notFound('vector store', String(stores[j]), `tools[${i}].vector_store_ids[${j}]`);
    const container = tool.container;
    if (typeof container === 'string' && !ok(container)) return notFound('container', container, `tools[${i}].container`);
    const files = isObj(container) && Array.isArray(container.file_ids) ? (container.file_ids as unknown[]) : [];
    if (files.length > 0) return notFound('file', String(files[0]), `tools[${i}].container.file_ids[0]`);
  }
  return undefined;
}

/** Chat: a file named in a message's content parts (nothing else in a chat request names stored state). */
export function chatIdRefusal(request: ChatRequest): ApiError | undefined {
  for (let i = 0; i < request.messages.length; i++) {
    const refused = fileRefusal(request.messages[i].content, `messages[${i}].content`);
    if (refused) return refused;
  }
  return undefined;
}

/** What a Responses request names that is the caller's: its previous response, and what its items by id can hold. */
export interface CallerIds {
  previous: ResponseOwner | undefined;
  /**
   * The tokens the upstream can expand the input items given by id into: each one's recorded size, the model's
   * context length for one recorded without a size or whose owner the archive could not tell; at most the context.
   */
  referenced: number;
}

/**
 * A Responses request: the first id it names that is not the caller's (its tools', its input's, then its previous
 * response), or what it names (CallerIds) when every id is. One store read for all items; none without ids.
 */
export async function responsesIdRefusal(
  owners: ResponseOwners,
  accountId: string,
  model: Model,
  request: ResponsesRequest,
): Promise<ApiError | CallerIds> {
  const refused = toolIdRefusal(request.tools, model) ?? variablesRefusal(request.prompt?.variables);
  if (refused) return refused;
  const input = typeof request.input === 'string' ? [] : request.input;
  const named: NamedId[] = [];
  for (let i = 0; i < input.length; i++) {
    const item = input[i] as Obj;
    const file = fileRefusal(item.content, `input[${i}].content`);
    if (file) return file;
    const reference = item.type === 'item_reference';
    if (typeof item.id === 'string') named.push({ id: item.id, param: `input[${i}].id`, strict: reference, sized: true });
    else if (reference) return notFound('item', String(item.id), `input[${i}].id`);
    // An approval answers an MCP call the caller's stored response asked about: that request item must be the caller's.
    if (typeof item.approval_request_id === 'string')
      named.push({ id: item.approval_request_id, param: `input[${i}].approval_request_id`, strict: true, sized: false });
  }
  const previousId = request.previous_response_id;
  let previous: ResponseOwner | undefined;
  if (previousId != null) {
    previous = await callerResponse(owners, accountId, previousId);
    if (!previous) return responseNotFound(previousId, 'previous_response_id');
  }
  if (named.length === 0) return { previous, referenced: 0 };
  const items = await owners.items(named.map((n) => n.id));
  let referenced = 0;
  for (let k = 0; k < named.length; k++) {
    const owner = items[k];
    // Never recorded passes unless it must be the caller's; another's is refused. Unknown (null: the archive did not
    // answer) is refused where the id must be the caller's (a reference), and passes on an item the request carries
    // whole (its content is the request's own): PostgreSQL down never refuses a stateless conversation's replay.
    if (owner === undefined && !named[k].strict) continue;
    if (owner === null && !named[k].strict) referenced += model.contextLength;
    else if (owner?.accountId !== accountId) return notFound('item', named[k].id, named[k].param);
    else if (named[k].sized) referenced += owner.tokens ?? model.contextLength;
  }
  // The upstream puts no more in the window than it holds, however many items are named.
  return { previous, referenced: Math.min(referenced, model.contextLength) };
}

/** An id a request names: where, whether it must be the caller's, whether the upstream expands it into the prompt. */
interface NamedId {
  id: string;
  param: string;
  strict: boolean;
  sized: boolean;
}

/** The ids of a stored response's input items, from the list `GET /v1/responses/{id}/input_items` answers. */
export function listedItemIds(listing: Buffer): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(listing.toString('utf8'));
  } catch {
    return [];
  }
  const data = isObj(parsed) && Array.isArray(parsed.data) ? (parsed.data as unknown[]) : [];
  return data.filter(isObj).flatMap((item) => (typeof item.id === 'string' ? [item.id] : []));
}

/**
 * The ids to record of an answer the upstream stored: its own and its output items'; undefined when it was not
 * stored (the answer or the request said `store: false`), so nothing is kept for it.
 */
export function storedAnswerIds(response: Obj | undefined): { id: string; itemIds: string[] } | undefined {
  if (typeof response?.id !== 'string' || response.store === false) return undefined;
  const itemIds: string[] = [];
  if (Array.isArray(response.output))
    for (const item of response.output as unknown[]) if (isObj(item) && typeof item.id === 'string') itemIds.push(item.id);
  return { id: response.id, itemIds };
}
