// onnxruntime's outputs (onnxruntime-node): node ort_ref.js MODEL INPUTS.json OUT.json
// (the mncc package's reference, and that of tests/real/run.py and tests/zoo/run.py)
// INPUTS.json: [{name, dims, type, data}] (type one of ARRAYS' names; float32 when absent);
// OUT.json gets {name, dims, type, data} for every output (int64 as numbers);
// stdout one JSON line, {session_ms}: the session's creation (tests/zoo/run.py prints it).
// onnxruntime runs with all graph optimisations, on the CPU.
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

// the element types an input may have, by onnxruntime's names
const ARRAYS = {
  float32: Float32Array, float64: Float64Array, int8: Int8Array, uint8: Uint8Array, int16: Int16Array,
  uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array, int64: BigInt64Array, bool: Uint8Array,
};

async function main() {
  const [model, inPath, outPath] = process.argv.slice(2);
  const feeds = {};
  for (const t of JSON.parse(fs.readFileSync(inPath, 'utf8'))) {
    const kind = t.type || 'float32';
    const Arr = ARRAYS[kind];
    if (!Arr) throw new Error('input ' + t.name + ': no tensor type ' + kind);
    const data = kind === 'int64' ? BigInt64Array.from(t.data, (v) => BigInt(v))
      : kind === 'bool' ? Uint8Array.from(t.data, (v) => (v ? 1 : 0)) : Arr.from(t.data);
    feeds[t.name] = new ort.Tensor(kind, data, t.dims);
  }
  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(model, { graphOptimizationLevel: 'all', executionProviders: ['cpu'] });
  const sessionMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const res = await session.run(feeds);
  const out = session.outputNames.map((n) => ({
    name: n, dims: res[n].dims, type: res[n].type,
    data: Array.from(res[n].data, (v) => (typeof v === 'bigint' ? Number(v) : v)),
  }));
  fs.writeFileSync(outPath, JSON.stringify(out));
  console.log(JSON.stringify({ session_ms: sessionMs }));
}

main().catch((e) => {
  console.error('ort_ref.js: ' + e.message);
  process.exit(1);
});
