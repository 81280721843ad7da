// onnxruntime's session creation, for bench/suite.py: node ort_session.js REPEATS MODEL...
// Prints one JSON line per model: {model, first_ms, warm_ms: [...]} (or {model, error}).
// first_ms is the first session this process creates (what a fresh process pays, the
// runtime's one-time set-up included); warm_ms are the ones after it. Node's own start
// and the module load are not counted. Every session has all graph optimisations.
'use strict';
const path = require('path');
const ort = require(path.resolve(process.env.ORT_NODE_DIR || '.', 'node_modules', 'onnxruntime-node'));

async function time(model) {
  const t0 = process.hrtime.bigint();
  const s = await ort.InferenceSession.create(model, { graphOptimizationLevel: 'all', executionProviders: ['cpu'] });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  await s.release();
  return ms;
}

async function main() {
  const [reps, ...models] = process.argv.slice(2);
  for (const model of models) {
    try {
      const first = await time(model);
      const warm = [];
      for (let i = 0; i < Number(reps); i++) warm.push(await time(model));
      console.log(JSON.stringify({ model, first_ms: first, warm_ms: warm }));
    } catch (e) {
      console.log(JSON.stringify({ model, error: String(e.message || e).split('\n')[0] }));
    }
  }
}

main();
