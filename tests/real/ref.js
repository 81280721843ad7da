// Reference outputs for tests/real/run.py: node ref.js MODEL INPUTS.json OUT.json
// INPUTS.json: [{name, dims, type, data}] (type float32, int64 or int32; float32 when absent);
// OUT.json gets {name, dims, data} for every output;
// stdout one JSON line, {session_ms}: the session's creation (tests/zoo/run.py prints it).
// onnxruntime runs with all graph optimisations, on the CPU.
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

async function main() {
  const [model, inPath, outPath] = process.argv.slice(2);
  const feeds = {};
  for (const t of JSON.parse(fs.readFileSync(inPath, 'utf8'))) {
    const kind = t.type || 'float32';
    const data = kind === 'int64' ? BigInt64Array.from(t.data, (v) => BigInt(v))
      : kind === 'int32' ? Int32Array.from(t.data) : Float32Array.from(t.data);
    feeds[t.name] = new ort.Tensor(kind, data, t.dims);
  }
  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(model, { graphOptimizationLevel: 'all', executionProviders: ['cpu'] });
  const sessionMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const res = await session.run(feeds);
  const out = session.outputNames.map((n) => ({ name: n, dims: res[n].dims, data: Array.from(res[n].data) }));
  fs.writeFileSync(outPath, JSON.stringify(out));
  console.log(JSON.stringify({ session_ms: sessionMs }));
}

main().catch((e) => {
  console.error('ref.js: ' + e.message);
  process.exit(1);
});
