/** What a process knows of its place in the worker group: its slot, and the settlement journal that slot owns. */
import cluster from 'node:cluster';

/** Set by the primary for each worker it forks; a replacement gets the slot of the worker it replaces. */
export const WORKER_ID_VARIABLE = 'TOKENMETER_WORKER_ID';

/** This process's place: worker `id` of `count` (1 of 1 outside a cluster). */
export interface WorkerSlot {
  id: number;
  count: number;
}

export function workerSlot(env: NodeJS.ProcessEnv, count: number): WorkerSlot {
  if (!cluster.isWorker) return { id: 1, count: 1 };
  const id = Number(env[WORKER_ID_VARIABLE]);
  return { id: Number.isInteger(id) && id > 0 ? id : 1, count };
}

/**
 * The journal file of one worker. `{worker}` in the name is replaced by the worker's number; without it, worker 1
 * keeps the name as given (so a single process's journal is replayed after moving to WORKERS > 1) and worker N > 1
 * appends `.N`. A replacement worker takes its slot's file, and so replays what the dead worker left there.
 */
export function journalFor(file: string, slot: WorkerSlot): string {
  if (file.includes('{worker}')) return file.replaceAll('{worker}', String(slot.id));
  return slot.id === 1 ? file : `${file}.${slot.id}`;
}
