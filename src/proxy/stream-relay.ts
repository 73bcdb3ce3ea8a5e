/**
 * Relays a streamed answer (SSE) to the client as it arrives, through the SseTap that rewrites its model name and
 * finds its usage; the client's backpressure pauses the upstream. It returns how the stream went, and the exchange
 * settles that: the usage line waits for its charge, so that it can show it (charge-shown.ts), so a stream whose whole
 * usage passed returns `usage` first and, once shown its charge (`showCharge`), how it ended.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { downstreamResponseHeaders } from '../http/http-headers';
import type { ShownCharge } from './charge-shown';
import type { AnswerIds, StreamDialect } from './pipeline/endpoint';
import type { CountTexts } from '../metering/output-count';
import { lineTooLong } from './line-cap';
import { SseTap, type Usage } from './sse-tap';
import { UpstreamDrain, type DrainOutcome } from './upstream-drain';

/** How a stream went, as far as its relay saw. */
export type StreamOutcome =
  /** The whole usage passed: the stream waits at its line until `showCharge`. */
  | { kind: 'usage'; usage: Usage }
  /**
   * The upstream's stream ended (`usage`: the upstream's, if it sent one). The client's ends with `end()`, after the
   * settlement: a response ended first would look, to the exchange, answered by someone else.
   */
  | { kind: 'ended'; usage: Usage | undefined }
  /** The upstream's stream broke off (reset, closed, timed out) while the client was still there. */
  | { kind: 'broken'; err: NodeJS.ErrnoException }
  /** The client left and the stream was read on for its usage (`detach`) until `drained`. */
  | { kind: 'client-gone'; drained: DrainOutcome; usage: Usage | undefined };

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
  /** The endpoint's record of an answer the upstream stores (with its tokens, if known): told once, before the client can see its id. */
  onAnswer?: (answer: AnswerIds, tokens: number | undefined) => void;
  /** Aborted when the client left and the stream is not read on: nothing more is written or reported as ended. */
  signal: AbortSignal;
}

export class StreamRelay {
  readonly tap: SseTap;
  /** When the first bytes of the answer left for the client (performance.now()), once they did. */
  firstEventAt: number | undefined;
  /** The usage line waits for its charge (showCharge), and whether the upstream's stream has ended. */
  private charging = false;
  private upstreamEnded = false;
  /** Set once the client left and the stream is read on for its usage (upstream-drain.ts): nothing more is written. */
  private drain: UpstreamDrain | undefined;
  /** The body, paused while the client's socket is full. */
  private body: Readable | undefined;
  private told = false;
  /** What the tap still held when the upstream ended: the client's stream's last bytes (`end()`). */
  private last: Buffer | undefined;
  /** Who waits for the stream's next outcome, and an outcome no one waited for yet. */
  private waiting: ((outcome: StreamOutcome) => void) | undefined;
  private pending: StreamOutcome | undefined;

  constructor(
    private readonly res: ServerResponse,
    private readonly options: StreamOptions,
  ) {
    const { modelJson, hideUsage, dialect, count, echoedChars } = options;
    this.tap = new SseTap({ model: modelJson, dropUsageChunk: hideUsage, parkUsage: !hideUsage, dialect, count, skipChars: echoedChars });
  }

  /** Writes the head and relays the body; resolves with the stream's first outcome. */
  run(status: number, proxyRes: IncomingMessage, body: Readable): Promise<StreamOutcome> {
    const { res, tap } = this;
    this.body = body;
    res.writeHead(status, downstreamResponseHeaders(proxyRes.headers));
    // The headers usually leave with the first event (one write, not two); a model slow to its first token gets
    // them on their own, at the end of this turn of the event loop.
    const flush = setImmediate(() => res.flushHeaders());
    let waiting = false;
    const resume = () => {
      waiting = false;
      body.resume();
    };
    body.on('data', (chunk: Buffer) => {
      if (this.drain) return this.drained(chunk, this.drain);
      const out = tap.push(chunk);
      // An endless line: broken off (the body's error ends the stream as a reset would), never buffered whole.
      if (tap.overlong) return void body.destroy(lineTooLong(tap.lineCap));
      this.tellAnswer();
      if (this.firstEventAt === undefined && out.length > 0) {
        this.firstEventAt = performance.now();
        clearImmediate(flush);
      }
      // Backpressure: a slow reader pauses the upstream instead of making us buffer its stream.
      if (out.length > 0 && !res.write(out) && !waiting) {
        waiting = true;
        body.pause();
        res.once('drain', resume);
      }
      if (tap.parked && !this.charging) {
        this.charging = true;
        this.report({ kind: 'usage', usage: tap.usage as Usage });
      }
    });
    body.once('end', () => (this.drain ? this.drain.finish('ended') : this.ended()));
    body.once('error', (err: NodeJS.ErrnoException) => (this.drain ? this.drain.finish('broken') : this.report({ kind: 'broken', err })));
    proxyRes.once('close', () => {
      if (proxyRes.complete) return;
      if (this.drain) return this.drain.finish('broken');
      this.report({ kind: 'broken', err: Object.assign(new Error('upstream closed the stream'), { code: 'ECONNRESET' }) });
    });
    return this.next();
  }

  /**
   * Sends the parked usage line showing its charge, and what followed it (ending the stream if the upstream ended
   * meanwhile); resolves with how the stream then ended. Undefined `charge`: the exchange had finished already, and
   * the line stays parked.
   */
  showCharge(charge: Promise<ShownCharge> | undefined): Promise<StreamOutcome> {
    charge?.then((c) => {
      this.charging = false;
      const { res, tap } = this;
      if (this.options.signal.aborted || res.writableEnded) return;
      const out = tap.unpark(c);
      if (this.upstreamEnded) {
        res.end(out.length > 0 ? Buffer.concat([out, tap.end()]) : tap.end());
        this.report({ kind: 'ended', usage: tap.chargeableUsage });
      } else if (out.length > 0) res.write(out);
    });
    return this.next();
  }

  /**
   * The client left: read on, forwarding nothing, until the stream's whole usage arrives or it ends, within `boundMs`;
   * the stream's outcome is then `client-gone`. False (nothing started) when there is nothing to read on for: a bound
   * of 0, a stream that ended or whose whole usage already passed.
   */
  detach(boundMs: number): boolean {
    if (boundMs <= 0 || this.upstreamEnded || this.tap.wholeUsage || this.body === undefined) return false;
    this.drain = new UpstreamDrain(boundMs, (drained) => this.report({ kind: 'client-gone', drained, usage: this.tap.chargeableUsage }));
    // A full client socket had paused the upstream; it never drains now.
    this.body.resume();
    return true;
  }

  /** Our count of what the stream carried, for an upstream that reported no usage. */
  readonly streamedTokens = () => this.tap.streamedCompletionTokens();

  /** Ends the client's stream after an `ended` outcome was settled (nothing when the charge's line ended it already). */
  end(): void {
    if (!this.res.writableEnded) this.res.end(this.last);
  }

  /** The upstream stream broke after it began: end the client's stream with an error event. */
  broken(timedOut: boolean): void {
    if (this.res.writableEnded) return;
    this.tap.abandon();
    this.res.end(this.tap.errorEvent(timedOut));
  }

  /** A chunk read after the client left: only its usage and text matter. */
  private drained(chunk: Buffer, drain: UpstreamDrain): void {
    if (drain.finished) return;
    const tap = this.tap;
    tap.push(chunk);
    if (tap.overlong) return drain.finish('broken');
    // A stored answer's owner is recorded as when the client stays: it may continue from it.
    this.tellAnswer();
    if (tap.wholeUsage) drain.finish('usage');
    else if (tap.done) drain.finish('ended');
  }

  /** Tells the endpoint, once, that the upstream stores this answer, before the chunk naming it is written. */
  private tellAnswer(): void {
    const answerId = this.tap.answerId;
    if (answerId === undefined || this.told || !this.options.onAnswer) return;
    this.told = true;
    const usage = this.tap.usage;
    this.options.onAnswer(answerId, usage && usage.promptTokens + usage.completionTokens);
  }

  private ended(): void {
    const { res, tap } = this;
    if (this.options.signal.aborted || res.writableEnded) return;
    this.upstreamEnded = true;
    // The usage line waits for its charge: showCharge ends the stream.
    if (this.charging) return;
    const last = tap.end();
    if (!tap.parked) {
      this.last = last;
      return this.report({ kind: 'ended', usage: tap.chargeableUsage });
    }
    if (last.length > 0) res.write(last);
    this.charging = true;
    this.report({ kind: 'usage', usage: tap.usage as Usage });
  }

  /** Hands the outcome to whoever waits for it, or keeps it for the next who asks. */
  private report(outcome: StreamOutcome): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    if (waiting) waiting(outcome);
    else this.pending ??= outcome;
  }

  private next(): Promise<StreamOutcome> {
    const pending = this.pending;
    this.pending = undefined;
    if (pending) return Promise.resolve(pending);
    return new Promise((resolve) => (this.waiting = resolve));
  }
}
