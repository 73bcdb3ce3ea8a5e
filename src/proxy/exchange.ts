/**
 * One metered request after its reservation, at one model: answers the client from the one server's answer the pool
 * handed on (JSON, SSE or error), aborts the upstream when the client leaves, and settles or releases the reservation
 * exactly once. Which server, and trying another, is the pool's (src/upstreams/pool.ts), before this sees an answer.
 */
import type { ClientRequest, IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { apiError, sendError, type ApiError } from '../http/errors';
import { charged } from '../http/request-context';
import { charge } from '../metering/metering';
import type { ShownCharge } from './charge-shown';
import { toolCharge } from './hosted-tool-plan';
import type { ExchangeContext, ExchangeDeps } from './exchange-context';
import type { StreamDialect } from './pipeline/endpoint';
export type { ExchangeContext, ExchangeDeps } from './exchange-context';
import type { JsonTap } from './json-tap';
import type { Usage } from './sse-tap';
import { StreamRelay } from './stream-relay';
import { collect, decoded } from './upstream-body';
import type { Answer } from '../upstreams/attempt';
import { upstreamErrorFrom, upstreamFailure } from './upstream-errors';
import { answerCharged, relayParsed, relayScanned, type AnswerOutcome } from './answer-relay';
import { drainedEstimate } from './upstream-drain';
import { settlementOf } from './settlement';

/** Status recorded for a request whose client went away before the answer was complete (nginx's convention). */
const CLIENT_CLOSED = 499;
/** An upstream error body longer than this is not read further: its message is in the first bytes. */
const ERROR_BODY_LIMIT = 64 * 1024;

export class Exchange {
  private finished = false;
  private clientGone = false;
  /** Aborts the pool's tries when the client leaves before an answer. */
  private readonly abort = new AbortController();
  readonly signal: AbortSignal = this.abort.signal;
  /** The server went silent past the idle timeout (its answer's own flag, once there is one). */
  private silent: () => boolean = () => false;
  private upstreamReq: ClientRequest | undefined;
  private upstreamRes: IncomingMessage | undefined;
  /** The relay of a streamed answer, once it began. */
  private stream: StreamRelay | undefined;
  /** The byte scan of a relayed JSON answer (embeddings), once it began. */
  private scan: JsonTap | undefined;
  private readonly started = performance.now();
  private firstTokenSeen = false;

  constructor(
    private readonly deps: ExchangeDeps,
    private readonly ctx: ExchangeContext,
    private readonly res: ServerResponse,
  ) {
    res.once('close', this.onClose);
  }

  private readonly onClose = () => this.clientClosed();

  /** Whether the client left (or another exchange took over). */
  get gone(): boolean {
    return this.clientGone || this.finished;
  }

  /** The pool's one answer: from here everything that goes wrong with it is this exchange's. */
  answered(answer: Answer): void {
    this.upstreamReq = answer.req;
    this.silent = answer.timedOut;
    answer.req.on('error', (err: NodeJS.ErrnoException) => this.fail(err));
    this.respond(answer.res);
  }

  /**
   * A fallback model takes over: its own reservation replaces this one (same request id), so nothing is released;
   * this exchange just lets go of the client and its lease.
   */
  handOver(): void {
    this.res.off('close', this.onClose);
    this.finished = true;
    this.ctx.lease.stop();
  }

  /** The pool could not answer: every try failed before an answer (`status`: the last one's, drained). */
  unanswered(err: NodeJS.ErrnoException | undefined, timedOut: boolean, status: number | undefined): void {
    if (this.finished) return;
    this.deps.metrics.upstreamErrors.inc({ model: this.ctx.model.id, kind: status ? 'status' : timedOut ? 'timeout' : 'connect' });
    this.deps.logger.warn({ requestId: this.ctx.requestId, err: err?.code ?? err?.message, status }, 'upstream request failed');
    if (status !== undefined || !err) return this.refuse(upstreamErrorFrom(status ?? 502, undefined));
    this.refuse(upstreamFailure(err, timedOut));
  }

  /** The upstream answered: pass it on by kind. */
  private respond(proxyRes: IncomingMessage): void {
    this.upstreamRes = proxyRes;
    this.deps.metrics.upstreamDuration.observe({ model: this.ctx.model.id }, (performance.now() - this.started) / 1000);
    if (this.clientGone) {
      proxyRes.destroy();
      return;
    }
    let body = decoded(proxyRes);
    if (body === undefined) {
      proxyRes.destroy();
      return this.refuse(
        apiError('upstream_error', `The upstream sent an unsupported content-encoding (${proxyRes.headers['content-encoding']}).`),
      );
    }
    const status = proxyRes.statusCode ?? 502;
    if (status < 200 || status >= 300) return this.relayError(status, body);
    const type = proxyRes.headers['content-type'] ?? '';
    const dialect = this.ctx.stream && type.includes('text/event-stream') ? this.ctx.answer.stream : undefined;
    if (this.ctx.translation) body = this.ctx.translation.answer(body, dialect !== undefined, this.deps.upstreamResponseLimit);
    if (dialect) return void this.relayStream(status, proxyRes, body, dialect);
    if (this.ctx.answer.relay === 'scan') return void this.relayScan(status, proxyRes, body);
    void this.relayJson(status, proxyRes, body);
  }

  /** The answer broke off (reset, timed out) while being read. */
  private fail(err: NodeJS.ErrnoException): void {
    if (this.clientGone) return;
    // A stream may have been charged at its usage line and still be passing what follows it.
    if (this.stream) return this.res.writableEnded ? undefined : this.streamBroken(err);
    if (this.finished) return;
    if (this.scan) return this.scanBroken(err);
    this.deps.metrics.upstreamErrors.inc({ model: this.ctx.model.id, kind: this.silent() ? 'timeout' : 'connect' });
    this.deps.logger.warn({ requestId: this.ctx.requestId, err: err.code ?? err.message }, 'upstream answer failed');
    this.refuse(upstreamFailure(err, this.silent()));
  }

  private clientClosed(): void {
    if (this.finished) return;
    // Answered by someone else (an error raised before the upstream answered): nothing served, nothing charged.
    if (this.res.writableFinished) return this.release();
    this.clientGone = true;
    const stream = this.stream;
    // A stream is read on for its usage (upstream-drain.ts), unless the bound is 0 or the process is stopping.
    if (stream?.detach(this.deps.shuttingDown() ? 0 : this.ctx.model.drainMs)) return;
    this.firstToken();
    // The model server must stop generating: abort the upstream request at once (or the pool's tries, if no answer).
    this.abort.abort();
    this.upstreamRes?.destroy();
    this.upstreamReq?.destroy();
    if (stream) this.settle(stream.tap.chargeableUsage, CLIENT_CLOSED, stream.streamedTokens);
    else if (this.scan) this.settle(this.ctx.answer.usage({ usage: this.scan.usage }), CLIENT_CLOSED, () => 0);
    else this.release();
  }

  /** A streamed answer: relayed until its outcome, settled from it (the usage line first, to show its charge). */
  private async relayStream(status: number, proxyRes: IncomingMessage, body: Readable, dialect: StreamDialect): Promise<void> {
    const { model, hideUsageChunk, echoedChars, onAnswer } = this.ctx;
    const options = { modelJson: model.idJson, hideUsage: hideUsageChunk, dialect, count: this.deps.count, echoedChars, onAnswer };
    const relay = new StreamRelay(this.res, { ...options, signal: this.signal });
    this.stream = relay;
    this.deps.metrics.activeStreams.inc();
    let outcome = await relay.run(status, proxyRes, body);
    // The whole usage passed: charged now; its line then shows the charge, and the stream goes on to its end.
    if (outcome.kind === 'usage') outcome = await relay.showCharge(this.settle(outcome.usage, status, relay.streamedTokens));
    this.firstToken();
    switch (outcome.kind) {
      case 'ended':
        // A client that left without a drain was settled when it left (clientClosed).
        if (this.clientGone) return;
        void this.settle(outcome.usage, status, relay.streamedTokens);
        return relay.end();
      case 'broken':
        return this.fail(outcome.err);
      case 'client-gone':
        this.deps.metrics.streamDrains.inc({ outcome: outcome.drained });
        this.upstreamRes?.destroy();
        return void this.settle(outcome.usage, CLIENT_CLOSED, () => drainedEstimate(relay.streamedTokens(), this.ctx.reservedOutput));
    }
  }

  /** The time to the stream's first bytes, once per stream, when it had any. */
  private firstToken(): void {
    const at = this.stream?.firstEventAt;
    if (at === undefined || this.firstTokenSeen) return;
    this.firstTokenSeen = true;
    this.deps.metrics.timeToFirstToken.observe({ model: this.ctx.model.id }, (at - this.started) / 1000);
  }

  /** The upstream stream broke after it began: end the client's stream with an error event, charge what was sent. */
  private streamBroken(err: NodeJS.ErrnoException): void {
    const stream = this.stream as StreamRelay;
    this.deps.metrics.upstreamErrors.inc({ model: this.ctx.model.id, kind: this.silent() ? 'timeout' : 'mid_stream' });
    this.deps.logger.warn({ requestId: this.ctx.requestId, err: err.code ?? err.message }, 'upstream stream broke');
    stream.broken(this.silent());
    this.upstreamRes?.destroy();
    this.settle(stream.tap.chargeableUsage, this.res.statusCode, stream.streamedTokens);
  }

  /** A JSON answer, buffered and parsed whole. */
  private async relayJson(status: number, proxyRes: IncomingMessage, body: Readable): Promise<void> {
    const { model, answer, outputTokens } = this.ctx;
    this.answerEnded(status, await relayParsed(status, proxyRes, body, this.deps.upstreamResponseLimit, model, answer, outputTokens));
  }

  /** A JSON answer relayed as it arrives, scanned on bytes for its usage (embeddings: megabytes of floats). */
  private async relayScan(status: number, proxyRes: IncomingMessage, body: Readable): Promise<void> {
    const { model, answer } = this.ctx;
    const limit = this.deps.upstreamResponseLimit;
    const scanned = relayScanned(this.res, status, proxyRes, body, limit, model, answer, this.signal);
    this.scan = scanned.tap;
    this.answerEnded(status, await scanned.outcome);
  }

  /** Settles a non-streamed answer's outcome, then writes it showing its charge (or ends the one relayed already). */
  private answerEnded(status: number, outcome: AnswerOutcome): void {
    if (this.finished || this.clientGone) return;
    if (outcome.kind === 'refused') return this.refuse(outcome.error);
    if (outcome.kind === 'broken') return this.fail(outcome.err);
    // The endpoint records an answer the upstream stores before the client can see its id.
    const { answerId, usage } = outcome;
    if (answerId !== undefined) this.ctx.onAnswer?.(answerId, usage && usage.promptTokens + usage.completionTokens);
    const charged = this.settle(usage, status, outcome.estimate);
    const held = outcome.held;
    if (held === undefined) return void this.res.end();
    charged?.then((c) => answerCharged(this.res, held, c));
  }

  /** A scanned answer broke off after it began: the client's response is cut, the work the upstream did charged. */
  private scanBroken(err: NodeJS.ErrnoException): void {
    this.deps.metrics.upstreamErrors.inc({ model: this.ctx.model.id, kind: this.silent() ? 'timeout' : 'mid_stream' });
    this.deps.logger.warn({ requestId: this.ctx.requestId, err: err.code ?? err.message }, 'upstream answer broke');
    const scan = this.scan as JsonTap;
    this.upstreamRes?.destroy();
    this.res.destroy();
    this.settle(this.ctx.answer.usage({ usage: scan.usage }), this.res.statusCode, () => 0);
  }

  private relayError(status: number, body: Readable): void {
    this.deps.metrics.upstreamErrors.inc({ model: this.ctx.model.id, kind: 'status' });
    collect(
      body,
      ERROR_BODY_LIMIT,
      (buf) => {
        if (this.finished || this.clientGone) return;
        this.refuse(upstreamErrorFrom(status, buf));
      },
      (err) => this.fail(err),
    );
  }

  /** Answers with an error and returns the reservation: nothing was served, nothing is charged. */
  refuse(err: ApiError): void {
    if (this.finished) return;
    sendError(this.res, err);
    this.release();
  }

  private release(): void {
    if (this.finished) return;
    this.deps.meter.release(this.ctx.accountId, this.ctx.requestId);
    this.deps.meter.endModel(this.ctx.model, this.ctx.requestId, { kind: 'release' });
    this.end();
  }

  /**
   * Charges once: the upstream's usage when it reported one, else our counts (`estimate` runs only then). Resolves
   * with the charge to show once the store took it (its balance undefined when the store did not say at once).
   */
  private settle(usage: Usage | undefined, status: number, estimate: () => number | Promise<number>): Promise<ShownCharge> | undefined {
    if (this.finished) return undefined;
    this.finished = true;
    if (usage) return this.charge(usage, status, false);
    // Long texts are counted off the event loop; the lease is held (and the meter's drain waits) until they are charged.
    const counts = [this.ctx.promptTokens(), estimate()];
    const counted = ([promptTokens, completionTokens]: number[]) => this.charge({ promptTokens, completionTokens }, status, true);
    if (counts.every((n) => typeof n === 'number')) return counted(counts as number[]);
    return Promise.all(counts).then(counted);
  }

  private charge(usage: Usage, status: number, estimated: boolean): Promise<ShownCharge> {
    const { promptTokens, completionTokens } = usage;
    const cachedTokens = usage.cachedTokens ?? 0;
    const reasoningTokens = usage.reasoningTokens ?? 0;
    const tools = toolCharge(this.ctx.hostedTools, usage);
    const chargedTokens = charge(this.ctx.model, promptTokens, completionTokens, cachedTokens, usage.cacheWriteTokens) + tools.tokens;
    if (completionTokens > this.ctx.reservedOutput) this.overrun(completionTokens);
    const shown = { promptTokens, completionTokens, cachedTokens, reasoningTokens, chargedTokens, estimated };
    charged(this.res, shown);
    const balance = this.deps.meter.settle(settlementOf(this.ctx, shown, tools, status));
    this.deps.meter.endModel(this.ctx.model, this.ctx.requestId, { kind: 'settle', tokens: chargedTokens });
    // Only now: the meter's drain must see this settlement queued before it sees the request let go of its lease.
    this.end();
    return balance.then((b) => ({ chargedTokens, balance: b, toolTokens: tools.tokens }));
  }

  /** The upstream produced more than was reserved (it ignored the cap we sent): charged all the same, and told. */
  private overrun(completionTokens: number): void {
    const { model, endpoint, requestId, reservedOutput } = this.ctx;
    this.deps.metrics.outputOverrun.inc({ model: model.id, endpoint }, completionTokens - reservedOutput);
    this.deps.logger.warn({ requestId, model: model.id, reservedOutput, completionTokens }, 'upstream produced more than was reserved');
  }

  /** Marks the exchange finished: stops the lease renewal and the active-stream count. */
  private end(): void {
    this.finished = true;
    this.ctx.lease.stop();
    if (this.stream) this.deps.metrics.activeStreams.dec();
  }
}
