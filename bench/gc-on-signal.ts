/**
 * Imported by the bench's node servers: when started with --expose-gc, SIGUSR2 runs a full GC (before RSS is read).
 * With BENCH_MEMORY_FILE set, it then writes where the memory is (process.memoryUsage(), in bytes) to that file, so
 * the memory probe (bench/rss.ts) can tell the JS heap from what lives outside it.
 */
import { writeFileSync } from 'node:fs';

const gc = (globalThis as { gc?: () => void }).gc;
const file = process.env.BENCH_MEMORY_FILE;
if (gc)
  process.on('SIGUSR2', () => {
    gc();
    if (file) writeFileSync(file, JSON.stringify(process.memoryUsage()));
  });
