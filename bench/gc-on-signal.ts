/**
 * Imported by the bench's node servers: when started with --expose-gc, SIGUSR2 runs a full GC (before RSS is read).
 * With BENCH_MEMORY_FILE set, it then writes where the memory is (process.memoryUsage(), in bytes) to that file, so
 * the memory probe (bench/rss.ts) can tell the JS heap from what lives outside it. With BENCH_ALLOC_PROFILE set, the
 * first SIGUSR2 starts V8's sampling heap profiler (counting what the scavenger collects too: every allocation, not
 * only what survives; with BENCH_ALLOC_SURVIVORS=1 only what outlives a scavenge) and the second writes its profile to
 * that file (`npm run bench:alloc -- --profile`, `--survivors`).
 */
import { renameSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const gc = (globalThis as { gc?: () => void }).gc;
const file = process.env.BENCH_MEMORY_FILE;
const profile = process.env.BENCH_ALLOC_PROFILE;
let session: Session | undefined;

function sampleAllocations(): void {
  if (session === undefined) {
    session = new Session();
    session.connect();
    const everything = process.env.BENCH_ALLOC_SURVIVORS !== '1';
    const options = { samplingInterval: 1024, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: everything };
    session.post('HeapProfiler.startSampling', options);
    return;
  }
  session.post('HeapProfiler.stopSampling', (err, result) => {
    if (err) return;
    // Whole or not at all: the bench reads the file as soon as it exists (a profile is megabytes).
    writeFileSync(`${profile}.part`, JSON.stringify(result.profile));
    renameSync(`${profile}.part`, profile as string);
  });
}

if (gc)
  process.on('SIGUSR2', () => {
    gc();
    if (file) writeFileSync(file, JSON.stringify(process.memoryUsage()));
    if (profile) sampleAllocations();
  });
