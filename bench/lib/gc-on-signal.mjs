// Preloaded into the gateway by bench:gateway (node --expose-gc --import): SIGUSR2 runs a full
// garbage collection, so the memory reading that follows is of live objects, not of garbage not
// yet collected on a busy machine.
process.on('SIGUSR2', () => {
  globalThis.gc?.();
  globalThis.gc?.();
});
