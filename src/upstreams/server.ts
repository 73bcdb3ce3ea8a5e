/** One upstream server of a pool: its keep-alive connections, the requests it has in flight, and its health. */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { ServerSpec } from '../catalog/pool-spec';

export class UpstreamServer {
  readonly agent: HttpAgent;
  readonly https: boolean;
  readonly hostname: string;
  readonly port: number;
  /** The base path (`/v1`) that request paths are appended to. */
  readonly basePath: string;
  /** The URL's query (`?api-version=…`, or ''), kept on every call. */
  readonly query: string;
  /** scheme://host:port: how metrics, the operator's API and logs name it (its URL may hold secrets). */
  readonly label: string;
  weight: number;
  maxConcurrent: number | undefined;
  /** Requests sent and not yet ended (a stream counts until its last byte). */
  inFlight = 0;
  /** Failed by the active health check (true until a check says otherwise: a new server is trusted). */
  unhealthy = false;
  /** Ejected by the outlier detector until this time (ms since the epoch); 0: not ejected. */
  ejectedUntil = 0;
  /** Ejections in a row without a success between them: each one is longer. */
  ejections = 0;
  /** The current run of failures, and when it began. */
  failures = 0;
  failingSince = 0;
  lastError: { message: string; at: number } | undefined;
  /** Left the pool in a reload: its connections close once its last request ends. */
  private retired = false;

  constructor(
    readonly url: string,
    spec: ServerSpec,
    maxFreeSockets: number,
  ) {
    const target = new URL(url);
    this.https = target.protocol === 'https:';
    this.hostname = target.hostname.replace(/^\[|\]$/g, '');
    this.port = target.port ? Number(target.port) : this.https ? 443 : 80;
    this.basePath = target.pathname.replace(/\/+$/, '');
    this.query = target.search;
    this.label = spec.label;
    const agentOptions = { keepAlive: true, maxFreeSockets, scheduling: 'lifo' as const };
    this.agent = this.https ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions);
    this.weight = spec.weight;
    this.maxConcurrent = spec.maxConcurrent;
  }

  /** The path a request for `path` (under the base URL, perhaps with a query of its own) is sent to. */
  pathFor(path: string): string {
    if (this.query === '') return this.basePath + path;
    return this.basePath + path + (path.includes('?') ? `&${this.query.slice(1)}` : this.query);
  }

  /** Its settings after a reload; its state (in flight, health) stays. */
  update(spec: ServerSpec): void {
    this.weight = spec.weight;
    this.maxConcurrent = spec.maxConcurrent;
  }

  /** Healthy by the last check and not ejected. */
  available(now: number): boolean {
    return !this.unhealthy && this.ejectedUntil <= now;
  }

  hasSlot(): boolean {
    return this.maxConcurrent === undefined || this.inFlight < this.maxConcurrent;
  }

  ejected(now: number): boolean {
    return this.ejectedUntil > now;
  }

  started(): void {
    this.inFlight++;
  }

  ended(): void {
    this.inFlight--;
    if (this.retired && this.inFlight === 0) this.agent.destroy();
  }

  noteError(message: string): void {
    this.lastError = { message, at: Date.now() };
  }

  /** Out of the pool: requests under way finish on their connections, which close after the last one. */
  retire(): void {
    this.retired = true;
    if (this.inFlight === 0) this.agent.destroy();
  }

  close(): void {
    this.agent.destroy();
  }
}
