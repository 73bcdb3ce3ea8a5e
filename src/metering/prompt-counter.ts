/**
 * The tokenizer off the event loop. A text short enough to count in a few milliseconds is counted in place; a longer
 * one in a worker thread (started at start or on first need, holding its own tokenizer, never holding the process open), within a
 * time budget and behind a bounded queue, so that no request, however it is built, stalls the others.
 */
import { Worker } from 'node:worker_threads';
import { threadEntry } from '../cluster/thread-entry';
import { countText } from './estimate';
import type { PromptMeasure } from './prompt-measure';

/** Up to this many characters a prompt is counted in place: about 3 ms of tokenizing on a loaded core. */
export const SYNC_CHARS = 2048;
/** The worker's time a count may take (from when the worker takes it up); past it, the count is given up. */
export const COUNT_BUDGET_MS = 2000;
/** Counts waiting for the worker beyond this many are refused at once. */
export const MAX_QUEUED = 8;
/** Time allowed for the worker to start and load its tokenizer, on a loaded machine. */
const WORKER_START_MS = 10_000;
/** The worker's heap: the tokenizer's tables (~15 MB) and a few prompts of up to the body limit. */
const WORKER_HEAP_MB = 256;

/** Why a count was not made: its budget ran out, the queue was full, or the worker failed (or was closed). */
export type CountFailure = 'over_budget' | 'busy' | 'failed';

export interface CountJob {
  id: number;
  texts: readonly string[];
  /** The worker stops counting this long after it took the job up. */
  budgetMs: number;
}

/** `counts` undefined: the deadline passed first. */
export interface CountReply {
  id: number;
  counts: number[] | undefined;
}

export interface CounterOptions {
  /** Characters counted in place (default SYNC_CHARS). */
  syncChars?: number;
  /** Default COUNT_BUDGET_MS. */
  budgetMs?: number;
  /** Default MAX_QUEUED. */
  maxQueued?: number;
}

// Compiled, the worker is the .js beside this file; run from source (the tests), tsx compiles it in the worker too.
const WORKER = threadEntry(__filename, 'count-worker');

export class TokenCounter {
  private readonly syncChars: number;
  private readonly budgetMs: number;
  private readonly maxQueued: number;
  private worker: Worker | undefined;
  /** Counts waiting, by id: the worker they were sent to, and what to do with the answer. */
  private readonly jobs = new Map<number, { worker: Worker; done: (result: number[] | CountFailure) => void }>();
  private nextId = 0;
  private closed = false;

  constructor(options: CounterOptions = {}) {
    this.syncChars = options.syncChars ?? SYNC_CHARS;
    this.budgetMs = options.budgetMs ?? COUNT_BUDGET_MS;
    this.maxQueued = options.maxQueued ?? MAX_QUEUED;
  }

  /** Starts the worker now (its tokenizer loads meanwhile), so that the first long count does not wait for it. */
  warm(): void {
    if (!this.closed) this.worker ??= this.start();
  }

  /** The tokenizer's count of each text (at once when they are short), or why it was not made. */
  count(texts: readonly string[]): number[] | Promise<number[] | CountFailure> {
    let chars = 0;
    for (const text of texts) chars += text.length;
    if (chars <= this.syncChars) return texts.map((text) => countText(text));
    if (this.closed) return Promise.resolve('failed');
    if (this.jobs.size >= this.maxQueued) return Promise.resolve('busy');
    const worker = (this.worker ??= this.start());
    const id = this.nextId++;
    return new Promise((resolve) => {
      // The worker stops at its budget between pieces; this timer is for a worker that cannot (it is then ended). It
      // allows for every count queued ahead, and for the worker's start (its tokenizer loads before the first job).
      const watchdog = setTimeout(
        () => {
          this.finish(id, 'over_budget');
          if (this.worker === worker) void this.stop(worker);
        },
        (this.jobs.size + 1) * this.budgetMs + WORKER_START_MS,
      );
      watchdog.unref();
      const done = (result: number[] | CountFailure) => {
        clearTimeout(watchdog);
        resolve(result);
      };
      this.jobs.set(id, { worker, done });
      const job: CountJob = { id, texts, budgetMs: this.budgetMs };
      worker.postMessage(job);
    });
  }

  /** Ends the worker; counts still waiting fail, and later ones that need the worker too. */
  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    if (worker) await this.stop(worker);
  }

  private start(): Worker {
    const worker = new Worker(WORKER.file, {
      execArgv: WORKER.execArgv,
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
    });
    worker.unref();
    worker.on('message', (reply: CountReply) => this.finish(reply.id, reply.counts ?? 'over_budget'));
    // An error ends the worker too: every count it held fails, and the next one starts a new worker.
    worker.on('error', () => {});
    worker.on('exit', () => {
      if (this.worker === worker) this.worker = undefined;
      for (const [id, job] of this.jobs) if (job.worker === worker) this.finish(id, 'failed');
    });
    return worker;
  }

  private stop(worker: Worker): Promise<number> {
    this.worker = undefined;
    return worker.terminate();
  }

  private finish(id: number, result: number[] | CountFailure): void {
    const job = this.jobs.get(id);
    this.jobs.delete(id);
    job?.done(result);
  }
}

/** A refusal's words for each failure. */
export const COUNT_FAILURES: Record<CountFailure, string> = {
  over_budget: 'could not be counted in time',
  busy: 'could not be counted: too many long prompts are being counted',
  failed: 'could not be counted',
};

/**
 * Counts the prompt (once) with `counter`: undefined when it is exact, else why it could not be; a promise only when
 * the worker counts it.
 */
export function countPrompt(counter: TokenCounter, prompt: PromptMeasure): CountFailure | undefined | Promise<CountFailure | undefined> {
  if (prompt.exact) return undefined;
  const counts = counter.count(prompt.texts());
  if (Array.isArray(counts)) return put(prompt, counts);
  return counts.then((result) => (typeof result === 'string' ? result : put(prompt, result)));
}

function put(prompt: PromptMeasure, counts: readonly number[]): undefined {
  prompt.counted(counts);
  return undefined;
}
