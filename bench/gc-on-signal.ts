/** Imported by the bench's node servers: when started with --expose-gc, SIGUSR2 runs a full GC (before RSS is read). */
const gc = (globalThis as { gc?: () => void }).gc;
if (gc) process.on('SIGUSR2', () => gc());
