// Run with --expose-gc: creates monitors, forgets 40 of them, collects garbage and reports how many
// streams the core still holds. The test puts the package entry's URL in the import below.
const Original = WebAssembly.Instance;
let instance;
WebAssembly.Instance = class extends Original {
  constructor(module, imports) {
    super(module, imports);
    // The detection module's instance (the memory-dedup module is loaded alongside it).
    if ('dw_stream_count' in this.exports) instance = this;
  }
};
const api = await import('__DIST__');
await api.initDedupWasm();
const count = () => instance.exports.dw_stream_count();
const kept = api.createStreamingDedup();
kept.feedChunk('still in use');
(() => {
  for (let i = 0; i < 40; i++) api.createStreamingDedup().feedChunk('forgotten monitor ' + i);
})();
const created = count();
for (let i = 0; i < 50 && count() > 1; i++) {
  globalThis.gc();
  await new Promise((r) => setTimeout(r, 20));
}
kept.feedChunk(' and still usable');
console.log(JSON.stringify({ created, kept: 1, afterGc: count() }));
