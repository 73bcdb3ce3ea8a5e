/**
 * A real OpenAI-compatible HTTP upstream for tests: answers chat completions as JSON or SSE (honouring
 * stream_options.include_usage and max_tokens), records what it received, and notices when a request is aborted.
 * Like real servers it can answer under its own name for the model (a snapshot, a tag), compressed or pretty-printed.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createBrotliCompress, createDeflate, createGzip, type Gzip } from 'node:zlib';
import { completionsReply, embeddingsReply, responsesReply, storedResponseReply } from './endpoint-replies';

export interface UpstreamCall {
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, any>;
  /** The body's bytes as they arrived. */
  raw: Buffer;
  /** Set when the proxy closed the request before the response finished. */
  aborted: boolean;
}

export type Behaviour = (call: UpstreamCall, req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

export interface TestUpstream {
  /** Base URL including /v1. */
  url: string;
  calls: UpstreamCall[];
  behave(b: Behaviour): void;
  /** Resolves when some request has been aborted by the proxy. */
  aborted(): Promise<UpstreamCall>;
  close(): Promise<void>;
}

/** What the test upstream reports as prompt tokens: below our estimate for chatBody()'s prompt, as with real tokenizers. */
export const PROMPT_TOKENS = 9;

export function words(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `w${i} `);
}

const chunkOf = (model: string, delta: Record<string, unknown>, finish: string | null, withUsageNull: boolean) =>
  JSON.stringify({
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created: 1700000000,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...(withUsageNull ? { usage: null } : {}),
  });

/** How a real server may dress its answer, whatever the client asked for. */
export interface AnswerStyle {
  /** The model name the upstream answers with, from the name it was asked for (OpenAI: `gpt-4o-2024-08-06`). */
  answerAs?: (asked: string) => string;
  /** Compress the body although we asked for identity (Content-Encoding). */
  encoding?: 'gzip' | 'deflate' | 'br';
}

/** The response body stream, compressed when the style says so; each write is flushed so SSE events keep flowing. */
function bodyWriter(res: ServerResponse, style: AnswerStyle): { write(s: string): void; end(s?: string): void } {
  if (!style.encoding) return { write: (s) => res.write(s), end: (s) => res.end(s) };
  const z: Gzip =
    style.encoding === 'gzip' ? createGzip() : style.encoding === 'deflate' ? createDeflate() : (createBrotliCompress() as unknown as Gzip);
  z.pipe(res);
  return {
    write: (s) => {
      z.write(s);
      z.flush();
    },
    end: (s) => z.end(s),
  };
}

/** SSE like vLLM: one token per chunk, a usage chunk with `choices: []` when asked, then [DONE]. */
export function streamReply(
  options: {
    tokens?: string[];
    delayMs?: number;
    usage?: 'honour' | 'never';
    /** More fields of the usage chunk's `usage` (`prompt_tokens_details`, …). */
    usageExtra?: Record<string, unknown>;
    /** The usage chunk's prompt tokens. Default PROMPT_TOKENS. */
    promptTokens?: number;
    done?: boolean;
    /** Sending stops after the first chunk until this resolves. */
    holdAfterFirst?: Promise<void>;
  } & AnswerStyle = {},
): Behaviour {
  return async (call, _req, res) => {
    const model = options.answerAs ? options.answerAs(call.body.model) : call.body.model;
    const limit = call.body.max_tokens ?? call.body.max_completion_tokens ?? Infinity;
    const tokens = (options.tokens ?? words(5)).slice(0, limit);
    const includeUsage = options.usage !== 'never' && call.body.stream_options?.include_usage === true;
    const headers = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' };
    res.writeHead(200, options.encoding ? { ...headers, 'content-encoding': options.encoding } : headers);
    const body = bodyWriter(res, options);
    const write = (data: string) => body.write(`data: ${data}\n\n`);
    write(chunkOf(model, { role: 'assistant', content: '' }, null, includeUsage));
    if (options.holdAfterFirst) await options.holdAfterFirst;
    for (const t of tokens) {
      if (call.aborted) return;
      if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
      if (call.aborted) return;
      write(chunkOf(model, { content: t }, null, includeUsage));
    }
    write(chunkOf(model, {}, tokens.length < (options.tokens ?? words(5)).length ? 'length' : 'stop', includeUsage));
    if (includeUsage) {
      write(
        JSON.stringify({
          id: 'chatcmpl-test',
          object: 'chat.completion.chunk',
          created: 1700000000,
          model,
          choices: [],
          usage: {
            prompt_tokens: options.promptTokens ?? PROMPT_TOKENS,
            completion_tokens: tokens.length,
            total_tokens: (options.promptTokens ?? PROMPT_TOKENS) + tokens.length,
            ...options.usageExtra,
          },
        }),
      );
    }
    if (options.done !== false) write('[DONE]');
    body.end();
  };
}

/** A non-streamed completion with usage (prompt PROMPT_TOKENS or `promptTokens`, completion = number of tokens produced). */
export function jsonReply(
  options: {
    tokens?: string[];
    usage?: boolean;
    pretty?: boolean;
    promptTokens?: number;
    /** More fields of `usage` (`prompt_tokens_details`, …). */
    usageExtra?: Record<string, unknown>;
  } & AnswerStyle = {},
): Behaviour {
  return (call, _req, res) => {
    const limit = call.body.max_tokens ?? call.body.max_completion_tokens ?? Infinity;
    const tokens = (options.tokens ?? words(5)).slice(0, limit);
    const prompt = options.promptTokens ?? PROMPT_TOKENS;
    const body = {
      id: 'chatcmpl-test',
      object: 'chat.completion',
      created: 1700000000,
      model: options.answerAs ? options.answerAs(call.body.model) : call.body.model,
      choices: [{ index: 0, message: { role: 'assistant', content: tokens.join('') }, finish_reason: 'stop' }],
      ...(options.usage === false
        ? {}
        : {
            usage: { prompt_tokens: prompt, completion_tokens: tokens.length, total_tokens: prompt + tokens.length, ...options.usageExtra },
          }),
    };
    // Pretty-printed as some servers do, with a space before the colon too, so a rewrite must keep the whitespace.
    const text = options.pretty ? JSON.stringify(body, null, 2).replace('"model":', '"model" :') + '\n' : JSON.stringify(body);
    if (options.encoding) {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': options.encoding });
      return bodyWriter(res, options).end(text);
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  };
}

/** By path: chat (JSON or SSE depending on the request's `stream`), or the other endpoints as vLLM answers them. */
export const defaultReply: Behaviour = (call, req, res) => {
  const path = call.path;
  if (path.startsWith('/v1/completions')) return completionsReply()(call, req, res);
  if (path.startsWith('/v1/embeddings')) return embeddingsReply()(call, req, res);
  if (path.startsWith('/v1/responses/')) return storedResponseReply(call, req, res);
  if (path.startsWith('/v1/responses')) return responsesReply()(call, req, res);
  return call.body.stream ? streamReply()(call, req, res) : jsonReply()(call, req, res);
};

export async function startUpstream(initial: Behaviour = defaultReply): Promise<TestUpstream> {
  let behaviour = initial;
  const calls: UpstreamCall[] = [];
  const abortWaiters: ((c: UpstreamCall) => void)[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let body: Record<string, any> = {};
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        body = { unparseable: raw.toString('utf8') };
      }
      const call: UpstreamCall = { path: req.url ?? '', headers: req.headers, body, raw, aborted: false };
      calls.push(call);
      res.on('close', () => {
        if (!res.writableFinished) {
          call.aborted = true;
          for (const w of abortWaiters.splice(0)) w(call);
        }
      });
      Promise.resolve(behaviour(call, req, res)).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    calls,
    behave: (b) => {
      behaviour = b;
    },
    aborted: () => {
      const already = calls.find((c) => c.aborted);
      return already ? Promise.resolve(already) : new Promise((resolve) => abortWaiters.push(resolve));
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
