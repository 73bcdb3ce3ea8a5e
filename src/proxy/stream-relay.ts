/**
 * Relays a streamed answer (SSE) to the client as it arrives, through the SseTap that rewrites its model name and
 * finds its usage; the client's backpressure pauses the upstream. The usage line waits for its charge, so that it can
 * show it (charge-shown.ts): the relay asks its `charge` port then, and the stream goes on once the store took it. A
 * client that leaves is read on for the usage (upstream-drain.ts) within the model's bound. `relay` resolves with how
 * the stream went (relay-outcome.ts), and the exchange settles that.
 */
import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { Answer } from '../upstreams/attempt';
import type { AnswerRelayContext, RelayPorts } from './exchange-context';
import type { ShownCharge } from './charge-shown';
import { lineTooLong } from './line-cap';
import type { StreamDialect } from './pipeline/endpoint';
import { CLIENT_CLOSED, closedEarly, type AnswerHead, type RelayOutcome } from './relay-outcome';
import { SseTap, type Usage } from './sse-tap';
import { drainedEstimate, UpstreamDrain, type DrainOutcome } from './upstream-drain';

/** What the stream told its relay, in the order it happened. */
type StreamEvent =
  /** The whole usage passed: the stream waits at its line until it is shown its charge. */
  | { kind: 'usage'; usage: Usage }
  /** The upstream's stream ended; the client's ends after the settlement (`last`: its last bytes). */
  | { kind: 'ended' }
  /** The upstream's stream broke off (reset, closed, timed out) while the client was still there. */
  | { kind: 'broken'; err: NodeJS.ErrnoException }
  /** The client left (read on for the usage until `drained`, when it was). */
  | { kind: 'client-gone'; drained?: DrainOutcome };

export class StreamRelay {
  private readonly tap: SseTap;
  /** Whether the first bytes of the answer left for the client (the ports were told). */
  private firstEventSent = false;
  /** The usage line waits for its charge, and whether the upstream's stream has ended. */
  private charging = false;
  private upstreamEnded = false;
  /** The client left: nothing more is written. */
  private gone = false;
  /** Set once the client left and the stream is read on for its usage (upstream-drain.ts). */
  private drain: UpstreamDrain | undefined;
  private told = false;
  /** What the tap still held when the upstream ended: the client's stream's last bytes. */
  private last: Buffer | undefined;
  /** Who waits for the stream's next event, and an event no one waited for yet. */
  private waiting: ((event: StreamEvent) => void) | undefined;
  private pending: StreamEvent | undefined;

  constructor(
    private readonly res: ServerResponse,
    private readonly upstream: Answer,
    private readonly body: Readable,
    private readonly ctx: AnswerRelayContext,
    private readonly ports: RelayPorts,
    dialect: StreamDialect,
  ) {
    const { model, hideUsageChunk, echoedChars } = ctx;
    const count = ports.count;
    this.tap = new SseTap({
      model: model.idJson,
      dropUsageChunk: hideUsageChunk,
      parkUsage: !hideUsageChunk,
      dialect,
      count,
      skipChars: echoedChars,
    });
  }

  /** Writes the head, relays the body, and resolves with how the stream went once it is over for the client. */
  async relay(head: AnswerHead): Promise<RelayOutcome> {
    const status = head.status;
    this.start(head);
    this.res.once('close', this.clientLeft);
    this.ports.activeStreams.inc();
    try {
      let event = await this.next();
      if (event.kind !== 'usage') return this.outcome(event, status, false);
      this.showCharge(this.ports.charge(event.usage, status));
      event = await this.next();
      return this.outcome(event, status, true);
    } finally {
      this.res.off('close', this.clientLeft);
      this.ports.activeStreams.dec();
    }
  }

  private start({ status, headers }: AnswerHead): void {
    const { res, tap, body, upstream } = this;
    res.writeHead(status, headers);
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
      if (this.gone) return;
      const out = tap.push(chunk);
      // An endless line: broken off (the body's error ends the stream as a reset would), never buffered whole.
      if (tap.overlong) return void body.destroy(lineTooLong(tap.lineCap));
      this.tellAnswer();
      if (!this.firstEventSent && out.length > 0) {
        this.firstEventSent = true;
        this.ports.firstEvent();
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
    upstream.res.once('close', () => {
      if (upstream.res.complete) return;
      if (this.drain) return this.drain.finish('broken');
      this.report({ kind: 'broken', err: closedEarly('stream') });
    });
  }

  /** What the settlement is told of the stream's last event (`charged`: at its usage line already). */
  private outcome(event: StreamEvent, status: number, charged: boolean): RelayOutcome {
    const { res, tap, upstream } = this;
    const streamed = () => tap.streamedCompletionTokens();
    switch (event.kind) {
      // A second usage event cannot come (the tap parks one line); were it to, the stream is over as if ended.
      case 'usage':
      case 'ended':
        if (!charged)
          return {
            kind: 'served',
            status,
            usage: tap.chargeableUsage,
            estimate: streamed,
            reply: { kind: 'end', last: this.last },
          };
        if (!res.writableEnded) res.end(this.last);
        return { kind: 'charged' };
      case 'broken': {
        // The client's stream ends with an error event; what was sent is charged.
        const timedOut = upstream.timedOut();
        if (!res.writableEnded) {
          tap.abandon();
          res.end(tap.errorEvent(timedOut));
        }
        upstream.res.destroy();
        const failure = { kind: timedOut ? ('timeout' as const) : ('mid_stream' as const), err: event.err };
        if (charged) return { kind: 'charged', failure };
        return {
          kind: 'served',
          status: res.statusCode,
          usage: tap.chargeableUsage,
          estimate: streamed,
          reply: { kind: 'over' },
          failure,
        };
      }
      case 'client-gone': {
        const drained = event.drained;
        if (drained) upstream.res.destroy();
        if (charged) return { kind: 'charged' };
        // Read on and still without usage: hidden work may have used all the output reserved.
        const estimate = drained ? () => drainedEstimate(streamed(), this.ctx.reservedOutput) : streamed;
        return {
          kind: 'served',
          status: CLIENT_CLOSED,
          usage: tap.chargeableUsage,
          estimate,
          reply: { kind: 'over' },
          drained,
        };
      }
    }
  }

  /**
   * Sends the parked usage line showing its charge, and what followed it (ending the stream if the upstream ended
   * meanwhile). Undefined `charge`: settled already, and the line stays parked.
   */
  private showCharge(charge: Promise<ShownCharge> | undefined): void {
    charge?.then((c) => {
      this.charging = false;
      const { res, tap } = this;
      if (this.gone || res.writableEnded) return;
      const out = tap.unpark(c);
      if (this.upstreamEnded) {
        res.end(out.length > 0 ? Buffer.concat([out, tap.end()]) : tap.end());
        this.report({ kind: 'ended' });
      } else if (out.length > 0) res.write(out);
    });
  }

  /**
   * The client left: read on, forwarding nothing, until the stream's whole usage arrives or it ends, within the
   * model's bound; unless there is nothing to read on for (a bound of 0, a stream that ended or whose whole usage
   * passed): then the upstream is let go at once, and the model server stops generating.
   */
  private readonly clientLeft = (): void => {
    this.gone = true;
    const boundMs = this.ports.drainMs();
    if (boundMs <= 0 || this.upstreamEnded || this.tap.wholeUsage) {
      this.upstream.res.destroy();
      this.upstream.req.destroy();
      return this.report({ kind: 'client-gone' });
    }
    this.drain = new UpstreamDrain(boundMs, (drained) => this.report({ kind: 'client-gone', drained }));
    // A full client socket had paused the upstream; it never drains now.
    this.body.resume();
  };

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
    const onAnswer = this.ctx.onAnswer;
    if (answerId === undefined || this.told || !onAnswer) return;
    this.told = true;
    const usage = this.tap.usage;
    onAnswer(answerId, usage && usage.promptTokens + usage.completionTokens);
  }

  private ended(): void {
    const { res, tap } = this;
    if (this.gone || res.writableEnded) return;
    this.upstreamEnded = true;
    // The usage line waits for its charge: showCharge ends the stream.
    if (this.charging) return;
    const last = tap.end();
    if (!tap.parked) {
      this.last = last;
      return this.report({ kind: 'ended' });
    }
    if (last.length > 0) res.write(last);
    this.charging = true;
    this.report({ kind: 'usage', usage: tap.usage as Usage });
  }

  /** Hands the event to whoever waits for it, or keeps it for the next who asks. */
  private report(event: StreamEvent): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    if (waiting) waiting(event);
    else this.pending ??= event;
  }

  private next(): Promise<StreamEvent> {
    const pending = this.pending;
    this.pending = undefined;
    if (pending) return Promise.resolve(pending);
    return new Promise((resolve) => (this.waiting = resolve));
  }
}
