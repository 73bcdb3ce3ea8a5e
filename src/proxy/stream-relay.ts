/**
 * Relays a streamed answer (SSE) to the client as it arrives, through the SseTap that rewrites its model name and
 * finds its usage; the client's backpressure pauses the upstream. The usage line waits for its charge, so that it can
 * show it (charge-shown.ts): the charge's continuation sends it and what followed, and ends the stream if the upstream
 * ended meanwhile.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { downstreamResponseHeaders } from '../http/http-headers';
import type { ShownCharge } from './charge-shown';
import type { AnswerIds, StreamDialect } from './pipeline/endpoint';
import type { CountTexts } from '../metering/output-count';
import { SseTap, type Usage } from './sse-tap';
import { UpstreamDrain, type DrainOutcome } from './upstream-drain';

/** What a stream relay asks of its exchange. */
export interface StreamHost {
  /** The exchange settled or released already. */
  finished(): boolean;
  /** The client went away. */
  clientGone(): boolean;
  /** The first bytes of the answer leave for the client. */
  firstEvent(): void;
  /** Charges the stream's usage (`estimate`: our count of what it streamed, asked only without usage). */
  settle(usage: Usage | undefined, estimate: () => number | Promise<number>): Promise<ShownCharge> | undefined;
  /** The stream names an id the upstream stores (called before the client gets it). */
  answered(answer: AnswerIds, usage: Usage | undefined): void;
  /** Reading on after the client left (`detach`) stopped, for `outcome`: charge the usage, else the drain's estimate. */
  drained(outcome: DrainOutcome): void;
  fail(err: NodeJS.ErrnoException): void;
}

export interface StreamOptions {
  /** The client's model name as JSON bytes (what the tap writes in place of the upstream's). */
  modelJson: Buffer;
  /** Drop the usage line: only we asked for it. */
  hideUsage: boolean;
  dialect: StreamDialect;
  /** Counts the streamed text when no usage comes (long text off the event loop). */
  count: CountTexts;
  /** Characters at the stream's start that echo the prompt (completions' `echo`): not output. */
  echoedChars: number;
}

export class StreamRelay {
  readonly tap: SseTap;
  /** The usage line waits for its charge (charge()), and whether the upstream's stream has ended. */
  private charging = false;
  private upstreamEnded = false;
  /** Set once the client left and the stream is read on for its usage (upstream-drain.ts): nothing more is written. */
  private drain: UpstreamDrain | undefined;
  /** The body, paused while the client's socket is full. */
  private body: Readable | undefined;

  constructor(
    private readonly res: ServerResponse,
    options: StreamOptions,
    private readonly host: StreamHost,
  ) {
    const { modelJson, hideUsage, dialect, count, echoedChars } = options;
    this.tap = new SseTap({ model: modelJson, dropUsageChunk: hideUsage, parkUsage: !hideUsage, dialect, count, skipChars: echoedChars });
  }

  /** Writes the head and relays the body until it ends. */
  start(status: number, proxyRes: IncomingMessage, body: Readable): void {
    const { res, tap, host } = this;
    this.body = body;
    res.writeHead(status, downstreamResponseHeaders(proxyRes.headers));
    // The headers usually leave with the first event (one write, not two); a model slow to its first token gets
    // them on their own, at the end of this turn of the event loop.
    const flush = setImmediate(() => res.flushHeaders());
    let first = true;
    let waiting = false;
    const resume = () => {
      waiting = false;
      body.resume();
    };
    body.on('data', (chunk: Buffer) => {
      if (this.drain) return this.drained(chunk, this.drain);
      const out = tap.push(chunk);
      if (tap.answerId !== undefined) host.answered(tap.answerId, tap.usage);
      if (first && out.length > 0) {
        first = false;
        clearImmediate(flush);
        host.firstEvent();
      }
      // Backpressure: a slow reader pauses the upstream instead of making us buffer its stream.
      if (out.length > 0 && !res.write(out) && !waiting) {
        waiting = true;
        body.pause();
        res.once('drain', resume);
      }
      if (tap.parked) this.charge();
    });
    body.once('end', () => (this.drain ? this.drain.finish('ended') : this.ended()));
    body.once('error', (err: NodeJS.ErrnoException) => (this.drain ? this.drain.finish('broken') : host.fail(err)));
    proxyRes.once('close', () => {
      if (proxyRes.complete) return;
      if (this.drain) return this.drain.finish('broken');
      host.fail(Object.assign(new Error('upstream closed the stream'), { code: 'ECONNRESET' }));
    });
  }

  /**
   * The client left: read on, forwarding nothing, until the stream's whole usage arrives or it ends, within `boundMs`;
   * the host is then told why it stopped (`drained`). False (nothing started) when there is nothing to read on for: a
   * bound of 0, a stream that ended or whose whole usage already passed.
   */
  detach(boundMs: number): boolean {
    if (boundMs <= 0 || this.upstreamEnded || this.tap.wholeUsage || this.body === undefined) return false;
    this.drain = new UpstreamDrain(boundMs, (outcome) => this.host.drained(outcome));
    // A full client socket had paused the upstream; it never drains now.
    this.body.resume();
    return true;
  }

  /** A chunk read after the client left: only its usage and text matter. */
  private drained(chunk: Buffer, drain: UpstreamDrain): void {
    if (drain.finished) return;
    const tap = this.tap;
    tap.push(chunk);
    // A stored answer's owner is recorded as when the client stays: it may continue from it.
    if (tap.answerId !== undefined) this.host.answered(tap.answerId, tap.usage);
    if (tap.wholeUsage) drain.finish('usage');
    else if (tap.done) drain.finish('ended');
  }

  /** Our count of what the stream carried, for an upstream that reported no usage. */
  readonly streamedTokens = () => this.tap.streamedCompletionTokens();

  /** The upstream stream broke after it began: end the client's stream with an error event. */
  broken(timedOut: boolean): void {
    if (this.res.writableEnded) return;
    this.tap.abandon();
    this.res.end(this.tap.errorEvent(timedOut));
  }

  private ended(): void {
    const { res, tap } = this;
    if (this.host.clientGone() || res.writableEnded) return;
    this.upstreamEnded = true;
    // The usage line waits for its charge: the charge's continuation ends the stream.
    if (this.charging) return;
    const last = tap.end();
    if (!tap.parked) {
      res.end(last);
      void this.host.settle(tap.chargeableUsage, this.streamedTokens);
      return;
    }
    if (last.length > 0) res.write(last);
    this.charge();
  }

  /**
   * The answer's whole usage has passed and waits in the tap: charge it now, then send its line showing the charge and
   * what followed it (ending the stream if the upstream ended meanwhile). Once per stream.
   */
  private charge(): void {
    if (this.charging || this.host.finished()) return;
    this.charging = true;
    const { res, tap } = this;
    const charged = this.host.settle(tap.usage, this.streamedTokens);
    charged?.then((c) => {
      this.charging = false;
      if (this.host.clientGone() || res.writableEnded) return;
      const out = tap.unpark(c);
      if (this.upstreamEnded) res.end(out.length > 0 ? Buffer.concat([out, tap.end()]) : tap.end());
      else if (out.length > 0) res.write(out);
    });
  }
}
