/**
 * One http-proxy-middleware instance per upstream base URL, each with its own keep-alive pool. Responses are handled
 * by the request's Exchange (selfHandleResponse), so nothing reaches the client unmetered.
 */
import { Agent as HttpAgent, type ClientRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { createProxyMiddleware, type Plugin } from 'http-proxy-middleware';
import type { Exchange } from './exchange';

export interface UpstreamOptions {
  /** Base URL including /v1. */
  url: string;
  /** Idle keep-alive sockets to keep. */
  maxFreeSockets: number;
}

export interface Upstream {
  url: string;
  /** Forwards `req` (whose headers and body the caller prepared) to `<url>/chat/completions`. */
  forward: RequestHandler;
  close(): void;
}

function exchangeOf(res: ServerResponse): Exchange | undefined {
  return (res as Response).locals?.exchange as Exchange | undefined;
}

/** Wires http-proxy's events to the request's Exchange; replaces the default plugins (they would answer on their own). */
const exchangePlugin: Plugin<Request, Response> = (proxyServer) => {
  proxyServer.on('proxyReq', (proxyReq: ClientRequest, _req: IncomingMessage, res: ServerResponse) => exchangeOf(res)?.attach(proxyReq));
  proxyServer.on('proxyRes', (proxyRes: IncomingMessage, _req: IncomingMessage, res: ServerResponse) => exchangeOf(res)?.respond(proxyRes));
  proxyServer.on('error', (err: Error, _req: IncomingMessage, res: ServerResponse | unknown) => {
    const exchange = exchangeOf(res as ServerResponse);
    if (exchange) exchange.fail(err as NodeJS.ErrnoException);
  });
};

export function createUpstream(options: UpstreamOptions): Upstream {
  const target = new URL(options.url);
  const agentOptions = { keepAlive: true, maxFreeSockets: options.maxFreeSockets, scheduling: 'lifo' as const };
  const agent = target.protocol === 'https:' ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions);
  const forward = createProxyMiddleware<Request, Response>({
    target: options.url,
    changeOrigin: true,
    agent,
    selfHandleResponse: true,
    xfwd: false,
    ejectPlugins: true,
    plugins: [exchangePlugin],
    // The upstream URL already ends in /v1; http-proxy appends this path to it.
    pathRewrite: () => '/chat/completions',
  });
  return { url: options.url, forward, close: () => agent.destroy() };
}

/**
 * Sends a request through `forward` again (Exchange.fail: a pooled connection the upstream had closed). Made here
 * rather than as an arrow in the route handler: there it would put the request, the response and `next` in the
 * handler's own scope, which is created before the reservation is awaited and so is often old enough to be promoted
 * by a scavenge, and it would take them (and everything they hold) into the old generation with it.
 */
export function resender(forward: RequestHandler, req: Request, res: Response, next: NextFunction): () => void {
  return () => void Promise.resolve(forward(req, res, next)).catch(next);
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
