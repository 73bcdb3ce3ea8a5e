/**
 * One http-proxy-middleware instance per upstream base URL, each with its own keep-alive pool. Responses are handled
 * by the request's Exchange (selfHandleResponse), so nothing reaches the client unmetered.
 */
import { Agent as HttpAgent, type ClientRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { NextFunction, Request, Response } from 'express';
import { createProxyMiddleware, type Plugin } from 'http-proxy-middleware';

/** What answers one proxied request: the metered Exchange, or a plain relay of a stored-state route. */
export interface UpstreamHandler {
  /** The upstream path under its base URL (`/chat/completions`), with any query string. */
  readonly path: string;
  attach(proxyReq: ClientRequest): void;
  respond(proxyRes: IncomingMessage): void;
  fail(err: NodeJS.ErrnoException): void;
}

/**
 * Each request's handler, found again from http-proxy's events, which name the request. Kept on the request itself, not
 * in a WeakMap: V8's scavenges hold a WeakMap's values strongly, so every exchange (with its request, response and
 * bodies) would outlive its request until a full GC, and be promoted first (twice the bytes promoted per request).
 */
const HANDLER = Symbol('tokenmeter.upstreamHandler');
interface Handled {
  [HANDLER]?: UpstreamHandler;
}
const handlerOf = (req: IncomingMessage): UpstreamHandler | undefined => (req as Handled)[HANDLER];

export interface UpstreamOptions {
  /** Base URL including /v1. */
  url: string;
  /** Idle keep-alive sockets to keep. */
  maxFreeSockets: number;
}

export interface Upstream {
  url: string;
  /** Sends `req` (whose headers and body the caller prepared) to `<url><handler.path>`; `handler` answers the client. */
  send(req: Request, res: Response, next: NextFunction, handler: UpstreamHandler): Promise<void>;
  close(): void;
}

export function createUpstream(options: UpstreamOptions): Upstream {
  const target = new URL(options.url);
  const agentOptions = { keepAlive: true, maxFreeSockets: options.maxFreeSockets, scheduling: 'lifo' as const };
  const agent = target.protocol === 'https:' ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions);
  /** Wires http-proxy's events to the request's handler; replaces the default plugins (they would answer on their own). */
  const handlerPlugin: Plugin<Request, Response> = (proxyServer) => {
    proxyServer.on('proxyReq', (proxyReq: ClientRequest, req: IncomingMessage) => handlerOf(req)?.attach(proxyReq));
    proxyServer.on('proxyRes', (proxyRes: IncomingMessage, req: IncomingMessage) => handlerOf(req)?.respond(proxyRes));
    proxyServer.on('error', (err: Error, req: IncomingMessage) => handlerOf(req)?.fail(err as NodeJS.ErrnoException));
  };
  const forward = createProxyMiddleware<Request, Response>({
    target: options.url,
    changeOrigin: true,
    agent,
    selfHandleResponse: true,
    xfwd: false,
    ejectPlugins: true,
    plugins: [handlerPlugin],
    // The upstream URL already ends in /v1; http-proxy appends this path to it.
    pathRewrite: (_path, req) => handlerOf(req)?.path ?? '/',
  });
  const send = (req: Request, res: Response, next: NextFunction, handler: UpstreamHandler): Promise<void> => {
    (req as Handled)[HANDLER] = handler;
    return forward(req, res, next);
  };
  return { url: options.url, send, close: () => agent.destroy() };
}

/**
 * Sends a request to `upstream` again (Exchange.fail: a pooled connection the upstream had closed). Made here rather
 * than as an arrow in the route handler: there it would put the request, the response and `next` in the handler's own
 * scope, which is created before the reservation is awaited and so is often old enough to be promoted by a scavenge,
 * and it would take them (and everything they hold) into the old generation with it.
 */
export function resender(upstream: Upstream, req: Request, res: Response, next: NextFunction): (handler: UpstreamHandler) => void {
  return (handler) => void upstream.send(req, res, next, handler).catch(next);
}

/** Upstreams by base URL, made on first use. */
export class Upstreams {
  private readonly byUrl = new Map<string, Upstream>();
  constructor(private readonly maxFreeSockets: number) {}

  get(url: string): Upstream {
    let u = this.byUrl.get(url);
    if (!u) {
      u = createUpstream({ url, maxFreeSockets: this.maxFreeSockets });
      this.byUrl.set(url, u);
    }
    return u;
  }

  close(): void {
    for (const u of this.byUrl.values()) u.close();
  }
}
