/** Measures one running target: paced open streams (RSS, CPU), max req/s at fixed concurrency, fixed-rate latency and TTFB. */
import { performance } from 'node:perf_hooks';
import { closedLoop, holdStreams, openLoop, percentile, type Endpoint, type Sample } from './load';
import { cpuMs, machineBusyMs, rssKiB, syscalls } from './proc-stats';
import { closeWindow, openWindow, type Waits } from './tail';
import { optionalPhase } from './optional-phase';
import { embeddingsBody, endpoint, jsonBody, messagesStreamBody, responsesStreamBody, settings, streamBody } from './workload';

export interface Figures {
  jsonRps: number;
  /** Target CPU time per request over a max-req/s window. */
  jsonCpuUs: number;
  /** Share of one core the target used in that window: well below 100 % means the load generator was the limit. */
  jsonBusyPct: number;
  /** Read and write system calls per request in that window. */
  jsonSyscalls: number;
  streamRps: number;
  streamCpuUs: number;
  streamBusyPct: number;
  streamSyscalls: number;
  jsonP50Ms: number;
  jsonP99Ms: number;
  jsonTtfbP50Ms: number;
  jsonTtfbP99Ms: number;
  jsonTtfbP999Ms: number;
  streamP50Ms: number;
  streamP99Ms: number;
  streamTtfbP50Ms: number;
  streamTtfbP99Ms: number;
  streamTtfbP999Ms: number;
  /**
   * What the target's event loop waited on at the fixed rates (see tail.ts): its delay, the GC pauses, and how many of
   * the slowest requests had a GC pause inside them. NaN for a target that does not serve these figures.
   */
  jsonLoopDelayP99Ms: number;
  jsonLoopDelayMaxMs: number;
  jsonGcPct: number;
  jsonGcMaxMs: number;
  jsonSlowWithGcPct: number;
  streamLoopDelayP99Ms: number;
  streamLoopDelayMaxMs: number;
  streamGcPct: number;
  streamGcMaxMs: number;
  streamSlowWithGcPct: number;
  /** VmRSS growth while the paced streams were open, per open stream (both read after a full GC, for node targets). */
  rssPerStreamKiB: number;
  /** Target CPU time per paced stream (about one upstream event per read, as from a real model server). */
  pacedCpuUs: number;
  /**
   * Target CPU time per request at the fixed JSON rate (and per stream at the fixed stream rate): every target under
   * the same load, so requests live about as long in each. At max req/s a target whose requests wait longer (on Redis,
   * on a busier load core) keeps more of them alive across scavenges and pays for it in GC; at a fixed rate it does not.
   */
  jsonRateCpuUs: number;
  streamRateCpuUs: number;
  /** Embeddings of 64 inputs (answers of about 460 KB): max req/s and target CPU per request; NaN where not served. */
  embeddingsRps: number;
  embeddingsCpuUs: number;
  /** Responses API streams (typed events, the model inside each event's response): max streams/s, CPU per stream. */
  responsesStreamRps: number;
  responsesStreamCpuUs: number;
  /** Anthropic's Messages API, streamed: NaN where the target does not serve it (an earlier build). */
  messagesStreamRps: number;
  messagesStreamCpuUs: number;
  /** CPU that processes other than the benchmark's used while this target was measured, in % of one core. */
  othersPct: number;
  /** Requests that got no 200 with a body, over every phase. */
  failed: number;
}

export interface Window {
  rps: number;
  cpuUs: number;
  busyPct: number;
  syscalls: number;
  failed: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A pause between phases, so settlements and GC of one phase do not land in the next one's window. */
const PAUSE_MS = 300;

/** One max-req/s window, with the target's CPU time and system calls over exactly that window. */
async function window(pid: number, e: Endpoint): Promise<Window> {
  const cpu0 = cpuMs(pid);
  const sys0 = syscalls(pid);
  const r = await closedLoop(e, settings.connections, settings.maxWindowMs);
  const cpu = cpuMs(pid) - cpu0;
  return {
    rps: r.completed / (r.elapsedMs / 1000),
    cpuUs: (cpu * 1000) / r.completed,
    busyPct: (100 * cpu) / r.elapsedMs,
    syscalls: (syscalls(pid) - sys0) / r.completed,
    failed: r.failed,
  };
}

/** The best of `repeats` windows: the most req/s and the least CPU per request each machine-noise allowed. */
async function saturate(pid: number, e: Endpoint): Promise<Window> {
  if (settings.repeats === 1) return window(pid, e);
  const runs: Window[] = [];
  for (let i = 0; i < settings.repeats; i++) {
    runs.push(await window(pid, e));
    await sleep(PAUSE_MS);
  }
  const fastest = runs.reduce((a, b) => (b.rps > a.rps ? b : a));
  return {
    rps: fastest.rps,
    cpuUs: Math.min(...runs.map((r) => r.cpuUs)),
    busyPct: fastest.busyPct,
    syscalls: Math.min(...runs.map((r) => r.syscalls)),
    failed: runs.reduce((n, r) => n + r.failed, 0),
  };
}

function latencies(samples: Sample[]): { p50: number; p99: number; ttfbP50: number; ttfbP99: number; ttfbP999: number; failed: number } {
  const ok = samples.filter((s) => s.ok);
  const total = ok.map((s) => s.totalMs);
  const ttfb = ok.map((s) => s.ttfbMs);
  return {
    p50: percentile(total, 50),
    p99: percentile(total, 99),
    ttfbP50: percentile(ttfb, 50),
    ttfbP99: percentile(ttfb, 99),
    ttfbP999: percentile(ttfb, 99.9),
    failed: samples.length - ok.length,
  };
}

/** The target's RSS, after a full GC when it can be asked for one: V8's heap slack would otherwise swamp the signal. */
async function collectedRss(pid: number, collectGarbage: (() => void) | undefined): Promise<number> {
  if (collectGarbage) {
    collectGarbage();
    await sleep(300);
  }
  return rssKiB(pid);
}

/** RSS of the target while the streams are open: the median of a few samples once they have all begun. */
async function rssWhileOpen(pid: number, collectGarbage: (() => void) | undefined): Promise<number> {
  await sleep(300);
  const samples: number[] = [];
  for (let i = 0; i < 3; i++) samples.push(await collectedRss(pid, collectGarbage));
  return percentile(samples, 50);
}

export interface TargetUnderTest {
  pid: number;
  port: number;
  /** The API key to send (any well-formed one for targets that do not check). */
  key: string;
  /** Asks the target for a full GC, when it can do one (the bench's node servers can). */
  collectGarbage?: () => void;
  /** The side port of its event-loop and GC figures (loop-stats.ts), when it serves them. */
  statsPort?: number;
}

function waitsLine(w: Waits): string {
  if (Number.isNaN(w.gcPct)) return 'no event-loop figures';
  return (
    `event-loop delay p99 ${w.loopDelayP99Ms.toFixed(1)} ms, max ${w.loopDelayMaxMs.toFixed(1)} ms; GC ${w.gcPct.toFixed(1)} % of the ` +
    `window, longest ${w.gcMaxMs.toFixed(1)} ms; ${w.slowWithGcPct.toFixed(0)} % of the slowest 1 % had a GC pause inside`
  );
}

export async function measure(target: TargetUnderTest, log: (line: string) => void): Promise<Figures> {
  const { pid, port, key, collectGarbage, statsPort } = target;
  const json = endpoint(port, key, jsonBody);
  const stream = endpoint(port, key, streamBody);
  const paced = endpoint(port, key, streamBody, { 'x-mock-chunk-delay-ms': String(settings.pacedChunkDelayMs) });
  let failed = 0;
  // Everything this process started (the target included) is a descendant of it; the rest of the machine is noise.
  const began = performance.now();
  const ours0 = cpuMs(process.pid);
  const machine0 = machineBusyMs();

  // RSS first, after a light warm-up: a heap already grown by full load would hide what the open streams cost.
  failed += (await closedLoop(json, 4, settings.lightWarmupMs / 2)).failed;
  failed += (await closedLoop(stream, 4, settings.lightWarmupMs / 2)).failed;
  await sleep(PAUSE_MS);
  const rssBefore = await collectedRss(pid, collectGarbage);
  const held = await holdStreams(paced, settings.openStreams, () => rssWhileOpen(pid, collectGarbage));
  const rssPerStreamKiB = (held.during - rssBefore) / held.open;
  failed += held.failed;
  await sleep(PAUSE_MS);
  // CPU per paced stream from a second batch of its own: the full GCs asked for while reading RSS are not the
  // target's own work, and would weigh on it by the size of its heap.
  const cpuBefore = cpuMs(pid);
  const timed = await holdStreams(paced, settings.openStreams, async () => undefined);
  const pacedCpuUs = ((cpuMs(pid) - cpuBefore) * 1000) / timed.completed;
  failed += timed.failed;
  log(`${held.open} paced streams open: ${rssPerStreamKiB.toFixed(1)} KiB each; ${pacedCpuUs.toFixed(0)} µs CPU each`);
  await sleep(PAUSE_MS);

  failed += (await closedLoop(json, settings.connections, (settings.warmupMs * 2) / 3)).failed;
  failed += (await closedLoop(stream, settings.connections, settings.warmupMs / 3)).failed;
  await sleep(PAUSE_MS);
  const jsonMax = await saturate(pid, json);
  log(`JSON: ${jsonMax.rps.toFixed(0)} req/s, ${jsonMax.cpuUs.toFixed(0)} µs CPU/request, target ${jsonMax.busyPct.toFixed(0)} % busy`);
  const streamMax = await saturate(pid, stream);
  log(
    `stream: ${streamMax.rps.toFixed(0)} streams/s, ${streamMax.cpuUs.toFixed(0)} µs CPU/stream, target ${streamMax.busyPct.toFixed(0)} % busy`,
  );
  failed += jsonMax.failed + streamMax.failed;

  const atRate = async (e: Endpoint, rate: number) => {
    const cpu0 = cpuMs(pid);
    const began = await openWindow(statsPort);
    const r = await openLoop(e, rate, settings.rateWindowMs);
    const waits = await closeWindow(statsPort, began, r.samples);
    return { ...latencies(r.samples), cpuUs: ((cpuMs(pid) - cpu0) * 1000) / r.sent, waits };
  };
  const jsonLat = await atRate(json, settings.jsonRate);
  log(
    `JSON at ${settings.jsonRate}/s: TTFB p50 ${jsonLat.ttfbP50.toFixed(2)} ms, p99 ${jsonLat.ttfbP99.toFixed(2)} ms, ${jsonLat.cpuUs.toFixed(0)} µs CPU/request; ${waitsLine(jsonLat.waits)}`,
  );
  const streamLat = await atRate(stream, settings.streamRate);
  log(
    `stream at ${settings.streamRate}/s: TTFB p50 ${streamLat.ttfbP50.toFixed(2)} ms, p99 ${streamLat.ttfbP99.toFixed(2)} ms, ${streamLat.cpuUs.toFixed(0)} µs CPU/stream; ${waitsLine(streamLat.waits)}`,
  );
  failed += jsonLat.failed + streamLat.failed;
  const embeddings = await optionalPhase(saturate, pid, endpoint(port, key, embeddingsBody, {}, '/v1/embeddings'), 'embeddings', log);
  const responses = await optionalPhase(
    saturate,
    pid,
    endpoint(port, key, responsesStreamBody, {}, '/v1/responses'),
    'Responses stream',
    log,
  );
  const messagesStream = await optionalPhase(
    saturate,
    pid,
    endpoint(port, key, messagesStreamBody, { 'anthropic-version': '2023-06-01' }, '/v1/messages'),
    'Messages stream',
    log,
  );
  failed += embeddings.failed + responses.failed + messagesStream.failed;
  if (failed > 0) log(`WARNING: ${failed} requests failed`);
  // Tick accounting differs a little between /proc/stat and /proc/<pid>/stat: a quiet machine can come out below zero.
  const othersPct = Math.max(0, (100 * (machineBusyMs() - machine0 - (cpuMs(process.pid) - ours0))) / (performance.now() - began));
  log(`other processes on the machine used ${othersPct.toFixed(0)} % of a core meanwhile`);

  return {
    jsonRps: jsonMax.rps,
    jsonCpuUs: jsonMax.cpuUs,
    jsonBusyPct: jsonMax.busyPct,
    jsonSyscalls: jsonMax.syscalls,
    streamRps: streamMax.rps,
    streamCpuUs: streamMax.cpuUs,
    streamBusyPct: streamMax.busyPct,
    streamSyscalls: streamMax.syscalls,
    jsonP50Ms: jsonLat.p50,
    jsonP99Ms: jsonLat.p99,
    jsonTtfbP50Ms: jsonLat.ttfbP50,
    jsonTtfbP99Ms: jsonLat.ttfbP99,
    jsonTtfbP999Ms: jsonLat.ttfbP999,
    streamP50Ms: streamLat.p50,
    streamP99Ms: streamLat.p99,
    streamTtfbP50Ms: streamLat.ttfbP50,
    streamTtfbP99Ms: streamLat.ttfbP99,
    streamTtfbP999Ms: streamLat.ttfbP999,
    jsonLoopDelayP99Ms: jsonLat.waits.loopDelayP99Ms,
    jsonLoopDelayMaxMs: jsonLat.waits.loopDelayMaxMs,
    jsonGcPct: jsonLat.waits.gcPct,
    jsonGcMaxMs: jsonLat.waits.gcMaxMs,
    jsonSlowWithGcPct: jsonLat.waits.slowWithGcPct,
    streamLoopDelayP99Ms: streamLat.waits.loopDelayP99Ms,
    streamLoopDelayMaxMs: streamLat.waits.loopDelayMaxMs,
    streamGcPct: streamLat.waits.gcPct,
    streamGcMaxMs: streamLat.waits.gcMaxMs,
    streamSlowWithGcPct: streamLat.waits.slowWithGcPct,
    rssPerStreamKiB,
    pacedCpuUs,
    jsonRateCpuUs: jsonLat.cpuUs,
    streamRateCpuUs: streamLat.cpuUs,
    embeddingsRps: embeddings.rps,
    embeddingsCpuUs: embeddings.cpuUs,
    responsesStreamRps: responses.rps,
    responsesStreamCpuUs: responses.cpuUs,
    messagesStreamRps: messagesStream.rps,
    messagesStreamCpuUs: messagesStream.cpuUs,
    othersPct,
    failed,
  };
}

/**
 * JSON max req/s and CPU per request alone (the worker-group comparison), `warmupMs` of load and then one window, over one
 * process or several separate ones at once, the connections split evenly between them: CPU is the sum of
 * theirs, req/s the sum of what they completed. Two single processes on one core measured this way show what sharing
 * a core costs without node:cluster in the picture.
 */
export async function jsonThroughputSplit(targets: TargetUnderTest[], warmupMs: number): Promise<Window> {
  const each = Math.max(1, Math.floor(settings.connections / targets.length));
  const endpoints = targets.map((t) => endpoint(t.port, t.key, jsonBody));
  await Promise.all(endpoints.map((e) => closedLoop(e, each, warmupMs)));
  await sleep(PAUSE_MS);
  const cpu0 = targets.map((t) => cpuMs(t.pid));
  const sys0 = targets.map((t) => syscalls(t.pid));
  const runs = await Promise.all(endpoints.map((e) => closedLoop(e, each, settings.maxWindowMs)));
  const cpu = targets.reduce((sum, t, i) => sum + cpuMs(t.pid) - cpu0[i], 0);
  const calls = targets.reduce((sum, t, i) => sum + syscalls(t.pid) - sys0[i], 0);
  const completed = runs.reduce((n, r) => n + r.completed, 0);
  const elapsedMs = Math.max(...runs.map((r) => r.elapsedMs));
  return {
    rps: completed / (elapsedMs / 1000),
    cpuUs: (cpu * 1000) / completed,
    busyPct: (100 * cpu) / elapsedMs,
    syscalls: calls / completed,
    failed: runs.reduce((n, r) => n + r.failed, 0),
  };
}
