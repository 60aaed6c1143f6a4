// Preloaded into the gateway by bench:gateway (node --expose-gc --import): SIGUSR2 runs a full
// garbage collection, so the memory reading that follows is of live objects, not of garbage not
// yet collected on a busy machine; then, when BENCH_MEMORY_FILE names a file, it writes there the
// process's own view of its heap (process.memoryUsage()), to tell live objects from heap V8 keeps.
import { writeFileSync } from 'node:fs';

process.on('SIGUSR2', () => {
  globalThis.gc?.();
  globalThis.gc?.();
  const file = process.env.BENCH_MEMORY_FILE;
  if (file) writeFileSync(file, JSON.stringify(process.memoryUsage()));
});
