/** The TokenCounter's thread: counts the texts of one job at a time, each job within its deadline. */
import { parentPort } from 'node:worker_threads';
import { countText, loadTokenizer, OverBudget } from './estimate';
import type { CountJob, CountReply } from './prompt-counter';

// The tokenizer's tables load before the first job is taken, so no job's budget pays for them.
loadTokenizer();

parentPort?.on('message', (job: CountJob) => {
  let reply: CountReply;
  try {
    const deadline = Date.now() + job.budgetMs;
    reply = { id: job.id, counts: job.texts.map((text) => countText(text, deadline)) };
  } catch (err) {
    if (!(err instanceof OverBudget)) throw err;
    reply = { id: job.id, counts: undefined };
  }
  parentPort?.postMessage(reply);
});
