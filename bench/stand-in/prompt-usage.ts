/**
 * The stand-in's prompt counts: each request's actual prompt counted with the proxy's own tokenizer (o200k_base), as
 * a model server counts its prompt, so "Hello" costs what it says rather than a fixed figure.
 */
import { countText } from '../../src/metering/estimate';

/** Chat's framing per message and the reply's priming (the same published accounting the proxy estimates with). */
const PER_MESSAGE = 4;
const REPLY_PRIMING = 3;
/** Counts kept per request body: the bench sends the same few bodies thousands of times, and must find the mock cheap. */
const REMEMBERED = 512;
const counts = new Map<string, number>();

/** What the model reads of a value: every string in it but the names of roles and part types. */
function textOf(value: unknown, into: string[]): string[] {
  if (typeof value === 'string') into.push(value);
  else if (Array.isArray(value)) for (const v of value) textOf(v, into);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) if (k !== 'role' && k !== 'type' && k !== 'image_url' && k !== 'id') textOf(v, into);
  }
  return into;
}

const tokensOf = (value: unknown): number => textOf(value, []).reduce((sum, text) => sum + countText(text), 0);

/** One prompt per input: a string, or an array of token ids (its length). */
export function promptTokensOfItem(item: unknown): number {
  return Array.isArray(item) && typeof item[0] === 'number' ? item.length : tokensOf(item);
}

/** The prompt of a batch endpoint (/completions' `prompt`, /embeddings' `input`): one string, token ids, or a list. */
export function batchOf(value: unknown): unknown[] {
  if (Array.isArray(value) && value.length > 0 && typeof value[0] !== 'number') return value;
  return [value ?? ''];
}

function remember(key: string, count: () => number): number {
  let n = counts.get(key);
  if (n === undefined) {
    if (counts.size >= REMEMBERED) counts.clear();
    n = count();
    counts.set(key, n);
  }
  return n;
}

/** Prompt tokens of a request to `path`, its raw body `raw` (the memo's key) parsed as `body`. */
export function promptTokens(path: string, raw: string, body: Record<string, unknown>): number {
  return remember(`${path}\n${raw}`, () => {
    if (path === '/v1/chat/completions') {
      const messages = Array.isArray(body.messages) ? body.messages : [];
      return messages.reduce((sum: number, m) => sum + PER_MESSAGE + tokensOf(m), REPLY_PRIMING);
    }
    if (path === '/v1/messages' || path === '/v1/messages/count_tokens') {
      const messages = Array.isArray(body.messages) ? body.messages : [];
      const system = body.system === undefined ? 0 : PER_MESSAGE + tokensOf(body.system);
      return messages.reduce((sum: number, m) => sum + PER_MESSAGE + tokensOf(m), REPLY_PRIMING + system + tokensOf(body.tools ?? []));
    }
    if (path.endsWith('/rerank')) {
      // Each document is read with the query: a pair per document.
      const documents = Array.isArray(body.documents) ? body.documents : [];
      return documents.reduce((sum: number, d) => sum + tokensOf(body.query ?? '') + tokensOf(d), 0);
    }
    if (path.endsWith('/score')) return tokensOf(body.text_1 ?? '') + tokensOf(body.text_2 ?? '');
    if (path === '/v1/responses') {
      const input = typeof body.input === 'string' ? [body.input] : Array.isArray(body.input) ? body.input : [];
      return input.reduce((sum: number, item) => sum + PER_MESSAGE + tokensOf(item), REPLY_PRIMING + tokensOf(body.instructions ?? ''));
    }
    const batch = batchOf(path === '/v1/completions' ? body.prompt : body.input);
    return batch.reduce((sum: number, item) => sum + promptTokensOfItem(item), 0);
  });
}
