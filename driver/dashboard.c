/* dashboard.html: one self-contained page (no network, no external script or style)
 * that shows what a compile did: the graph summary and the error of a failed compile,
 * the per-pass table of report.json, the schedule as a timeline, LM use over the
 * schedule, the nodes that take the most cycles, and the biggest DRAM transfers.
 *
 * The page is data plus a small renderer: the data is one JSON object in a
 * <script type="application/json"> element (report.json's tree, the schedule events of
 * trace.json, the schedule's record of LM residency, the DRAM transfers of the final
 * graph), drawn as SVG by inline script. It recomputes nothing the schedule decided.
 * The page marks <body data-rendered="..."> with what it drew, and lists any script
 * error it caught in #errors, so a headless browser test can check both.
 *
 * Large graphs are cut for the browser's sake, and the page says so: the timeline keeps
 * the first MAX_EVENTS events, LM use at most MAX_POINTS points (each the largest use in
 * its stretch of the schedule), the tables their top entries.
 *
 * It embeds wall times (from report.json), so unlike the other artifacts it is not
 * byte-identical across runs. */
#include "driver.h"
#include "ops.h"
#include "scheduler.h"
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_EVENTS = 4000, MAX_POINTS = 1500, TOP_NODES = 40, TOP_TRANSFERS = 30 };

/* the schedule's events, those of trace.json (the scheduler keeps them: reading the
 * file back took a tenth of a large compile): [name, op or step, track, start, cycles] */
static void timeline(MNBuf *b, MNCompile *c, int *total) {
    const SchedState *st = c->sched;
    *total = st ? st->nevents : 0;
    buf_append(b, "[", 1);
    for (int k = 0; st && k < st->nevents && k < MAX_EVENTS; k++) {
        const SchedEvent *e = &st->events[k];
        buf_append(b, k ? ",[" : "[", k ? 2 : 1);
        buf_json_string(b, e->name);
        buf_append(b, ",", 1);
        buf_json_string(b, e->what);
        buf_printf(b, ",%d,%lld,%lld]", e->track, (long long)e->start, (long long)e->cycles);
    }
    buf_append(b, "]", 1);
}

/* LM0 and LM1 long words held after each event of the schedule, as the schedule
 * recorded them (SchedState.res_lw); at most MAX_POINTS points, each the largest in its
 * stretch: [event, lm0, lm1]; the largest held in each bank into load */
static void lm_use(MNBuf *b, const SchedState *st, int64_t load[2]) {
    buf_append(b, "[", 1);
    int n = st->nres, stride = (n + MAX_POINTS - 1) / MAX_POINTS;
    if (stride < 1) stride = 1;
    int64_t best[2] = {0, 0};
    load[0] = load[1] = 0;
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 2; k++) {
            int64_t u = st->res_lw[2 * i + k];
            if (u > best[k]) best[k] = u;
            if (u > load[k]) load[k] = u;
        }
        if ((i + 1) % stride == 0 || i == n - 1) {
            buf_printf(b, "%s[%d,%lld,%lld]", i + 1 > stride ? "," : "", i, (long long)best[0], (long long)best[1]);
            best[0] = best[1] = 0;
        }
    }
    buf_append(b, "]", 1);
}

static int by_second_desc(const void *a, const void *b) {
    double x = ((const double *)a)[1], y = ((const double *)b)[1];
    return x < y ? 1 : x > y ? -1 : ((const double *)a)[0] < ((const double *)b)[0] ? -1 : 1;
}

/* the DRAM transfers of the final graph, largest first: [node, kind, value, bytes, cycles] */
static void transfers(MNBuf *b, MNCompile *c, int *total) {
    const MNGraph *g = c->g;
    double(*t)[2] = xmalloc(sizeof(double[2]) * (size_t)(g->nnodes + 1));
    int n = 0;
    for (int i = 0; i < g->nnodes; i++) {
        const MNNode *nd = g->nodes[i];
        if ((nd->op == OP_MNCoreDownload || nd->op == OP_MNCoreUpload) && nd->nin > 0 && nd->in[0]) {
            t[n][0] = i;
            t[n][1] = (double)sim_dram_bytes(nd->in[0]);
            n++;
        }
    }
    qsort(t, (size_t)n, sizeof t[0], by_second_desc);
    buf_append(b, "[", 1);
    for (int k = 0; k < n && k < TOP_TRANSFERS; k++) {
        const MNNode *nd = g->nodes[(int)t[k][0]];
        const MNValue *v = nd->op == OP_MNCoreDownload ? nd->in[0] : nd->out[0] ? nd->out[0] : nd->in[0];
        buf_append(b, k ? ",[" : "[", k ? 2 : 1);
        buf_json_string(b, nd->name);
        buf_printf(b, ",\"%s\",", nd->op == OP_MNCoreDownload ? "download" : "upload");
        buf_json_string(b, nd->in[0]->name);
        buf_printf(b, ",%lld,%lld]", (long long)t[k][1], (long long)sim_dram_cycles(&c->machine, v));
    }
    buf_append(b, "]", 1);
    *total = n;
    free(t);
}

static const char page_head[] =
    "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'; style-src "
    "'unsafe-inline'; img-src data:\">\n"
    "<title>mncc dashboard</title>\n<style>\n"
    "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:1400px}\n"
    "h1{font-size:1.4em}h2{font-size:1.1em;margin-top:1.6em;border-bottom:1px solid #ccc}\n"
    "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ddd;padding:2px "
    "8px;text-align:left;vertical-align:top}\n"
    "td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}.err{background:#fee;border:1px solid "
    "#c00;padding:.6em;white-space:pre-wrap}\n"
    ".ok{color:#060}.bad{color:#c00}.note{color:#666;font-size:.9em}svg{background:#fafafa;border:1px solid #ddd}\n"
    "</style></head>\n<body>\n<h1>mncc dashboard</h1>\n<div id=\"errors\"></div>\n<div id=\"app\"></div>\n"
    "<script id=\"data\" type=\"application/json\">";

static const char page_tail[] =
    "</script>\n<script>\n"
    "'use strict';\n"
    "const caught = [];\n"
    "window.addEventListener('error', e => { caught.push(String(e.message)); showErrors(); });\n"
    "function showErrors() { const d = document.getElementById('errors'); d.className = caught.length ? 'err' : '';\n"
    "  d.textContent = caught.length ? 'dashboard script errors:\\n' + caught.join('\\n') : ''; }\n"
    "const NS = 'http://www.w3.org/2000/svg';\n"
    "function el(tag, attrs, text) { const e = document.createElement(tag); for (const k in attrs || {}) "
    "e.setAttribute(k, attrs[k]);\n"
    "  if (text !== undefined) e.textContent = text; return e; }\n"
    "function sv(tag, attrs, text) { const e = document.createElementNS(NS, tag); for (const k in attrs || {}) "
    "e.setAttribute(k, attrs[k]);\n"
    "  if (text !== undefined) e.textContent = text; return e; }\n"
    "function fmt(x) { return typeof x === 'number' ? (Number.isInteger(x) ? x.toLocaleString('en') : x.toFixed(2)) : "
    "String(x); }\n"
    "function table(head, rows, numeric) { const t = el('table'), tr = el('tr');\n"
    "  head.forEach((h, i) => tr.appendChild(el('th', numeric && numeric[i] ? {class: 'n'} : {}, h))); "
    "t.appendChild(tr);\n"
    "  rows.forEach(r => { const q = el('tr'); r.forEach((c, i) => q.appendChild(el('td', numeric && numeric[i] ? "
    "{class: 'n'} : {}, fmt(c)))); t.appendChild(q); });\n"
    "  return t; }\n"
    "function section(app, title, note) { app.appendChild(el('h2', {}, title)); if (note) app.appendChild(el('p', "
    "{class: 'note'}, note)); }\n"
    "const D = JSON.parse(document.getElementById('data').textContent), R = D.report, app = "
    "document.getElementById('app');\n"
    "const drawn = [];\n"
    "function summary() {\n"
    "  section(app, 'Compile');\n"
    "  const g = R.graph || {}, m = R.machine || {};\n"
    "  const st = el('p'); st.appendChild(el('b', {class: R.status === 'ok' ? 'ok' : 'bad'}, 'status: ' + R.status));\n"
    "  st.appendChild(document.createTextNode('  ' + R.model + ' on ' + (m.name || '?') + ' (' + fmt(m.pes || 0) + ' "
    "PEs), mncc ' + R.compiler_version));\n"
    "  app.appendChild(st);\n"
    "  if (R.error) app.appendChild(el('div', {class: 'err', id: 'compile-error'}, R.error.kind + ' in pass ' + "
    "R.error.pass + ':\\n' + R.error.message));\n"
    "  if (R.model_app) app.appendChild(el('p', {}, 'model.app: ' + R.model_app));\n"
    "  const rows = [['opset', g.opset], ['nodes loaded', g.nodes_loaded], ['folded into constants', g.nodes_folded], "
    "['removed as dead', g.nodes_removed_dead], ['nodes now', g.nodes]];\n"
    "  if (g.opset !== undefined) app.appendChild(table(['graph', ''], rows.filter(r => r[1] !== undefined), [false, "
    "true]));\n"
    "  const io = [];\n"
    "  (g.inputs || []).forEach(v => io.push(['input', v.name, v.dtype, '[' + (v.shape || []).join(',') + ']']));\n"
    "  (g.outputs || []).forEach(v => io.push(['output', v.name, v.dtype, '[' + (v.shape || []).join(',') + ']']));\n"
    "  if (io.length) app.appendChild(table(['', 'value', 'type', 'shape'], io));\n"
    "  const opts = Object.keys(R.options || {}).filter(k => R.options[k].source !== 'default').map(k => [k, "
    "String(R.options[k].value), R.options[k].source]);\n"
    "  if (opts.length) app.appendChild(table(['option', 'value', 'from'], opts));\n"
    "}\n"
    "function passes() {\n"
    "  section(app, 'Passes');\n"
    "  const rows = (R.passes || []).map(p => [p.name, p.status, p.nodes, p.values, p.wall_ms,\n"
    "    Object.keys(p.figures || {}).map(k => k + '=' + fmt(p.figures[k])).join(', ')]);\n"
    "  app.appendChild(table(['pass', 'status', 'nodes', 'values', 'ms', 'figures'], rows, [false, false, true, true, "
    "true, false]));\n"
    "}\n"
    "function timeline() {\n"
    "  const ev = D.timeline; if (!ev.length) return;\n"
    "  section(app, 'Schedule timeline', ev.length < D.timeline_total ? 'the first ' + ev.length + ' of ' + "
    "D.timeline_total + ' events' : ev.length + ' events; hover for the node');\n"
    "  const tracks = ['compute', 'DRAM transfer', 'tree transfer'], W = 1300, H = 30, L = 110;\n"
    "  const end = Math.max(1, ...ev.map(e => e[3] + e[4])), s = sv('svg', {width: W, height: H * tracks.length + 30, "
    "id: 'plot-timeline'});\n"
    "  const colors = {reload: '#d62728', spill: '#ff7f0e', move: '#9467bd', recompute: '#8c564b'};\n"
    "  tracks.forEach((t, i) => s.appendChild(sv('text', {x: 4, y: i * H + 20, 'font-size': 12}, t)));\n"
    "  ev.forEach(e => { const x = L + (W - L - 10) * e[3] / end, w = Math.max(0.5, (W - L - 10) * e[4] / end);\n"
    "    const r = sv('rect', {x: x, y: e[2] * H + 5, width: w, height: H - 10, fill: colors[e[1]] || ['#1f77b4', "
    "'#2ca02c', '#17becf'][e[2]] || '#888'});\n"
    "    r.appendChild(sv('title', {}, e[0] + ' (' + e[1] + '): ' + fmt(e[4]) + ' cycles from ' + fmt(e[3]))); "
    "s.appendChild(r); });\n"
    "  s.appendChild(sv('text', {x: L, y: H * tracks.length + 22, 'font-size': 11}, '0'));\n"
    "  [['node', '#1f77b4'], ['reload', colors.reload], ['spill', colors.spill], ['move', colors.move], ['recompute', "
    "colors.recompute]].forEach(([t, c], j) =>\n"
    "    s.appendChild(sv('text', {x: L + 200 + 90 * j, y: H * tracks.length + 22, 'font-size': 11, fill: c}, t)));\n"
    "  s.appendChild(sv('text', {x: W - 10, y: H * tracks.length + 22, 'font-size': 11, 'text-anchor': 'end'}, "
    "fmt(end) + ' cycles'));\n"
    "  app.appendChild(s); drawn.push('timeline');\n"
    "}\n"
    "function lmUse() {\n"
    "  const p = D.lm_use; if (!p.length) return;\n"
    "  section(app, 'LM use over the schedule', 'long words per PE held in LM0 and LM1 after each event of the "
    "schedule, as it recorded them (most held: ' + fmt(D.lm_load[0]) + ' and ' + fmt(D.lm_load[1]) + '; addresses up "
    "to ' + fmt(D.lm_peak[0]) + ' and ' + fmt(D.lm_peak[1]) + '; of ' + fmt(D.lm_capacity[0]) + ' each)');\n"
    "  const W = 1300, H = 220, L = 60, n = Math.max(1, p[p.length - 1][0]), top = Math.max(1, ...D.lm_capacity, "
    "...p.map(q => Math.max(q[1], q[2])));\n"
    "  const s = sv('svg', {width: W, height: H + 30, id: 'plot-lm'}), X = i => L + (W - L - 10) * i / n, Y = v => H - "
    "(H - 10) * v / top;\n"
    "  s.appendChild(sv('line', {x1: L, x2: W - 10, y1: Y(D.lm_capacity[0]), y2: Y(D.lm_capacity[0]), stroke: '#c00', "
    "'stroke-dasharray': '4 3'}));\n"
    "  [[1, '#1f77b4', 'LM0'], [2, '#ff7f0e', 'LM1']].forEach(([k, c, name], j) => {\n"
    "    s.appendChild(sv('polyline', {fill: 'none', stroke: c, 'stroke-width': 1.5, points: p.map(q => X(q[0]) + ',' "
    "+ Y(q[k])).join(' ')}));\n"
    "    s.appendChild(sv('text', {x: L + 10 + 60 * j, y: H + 22, fill: c, 'font-size': 12}, name)); });\n"
    "  s.appendChild(sv('text', {x: 4, y: Y(top) + 10, 'font-size': 11}, fmt(top)));\n"
    "  s.appendChild(sv('text', {x: 4, y: H, 'font-size': 11}, '0'));\n"
    "  s.appendChild(sv('text', {x: W - 10, y: H + 22, 'font-size': 11, 'text-anchor': 'end'}, 'event ' + fmt(n)));\n"
    "  app.appendChild(s); drawn.push('lm');\n"
    "}\n"
    "function nodeCycles() {\n"
    "  const ev = D.timeline.filter(e => e[2] === 0 || !['reload', 'spill', 'move'].includes(e[1])).slice().sort((a, "
    "b) => b[4] - a[4] || (a[0] < b[0] ? -1 : 1)).slice(0, D.top_nodes);\n"
    "  if (!ev.length) return;\n"
    "  section(app, 'Cycles per node', 'the ' + ev.length + ' scheduled nodes that take the most cycles');\n"
    "  const W = 1300, B = 16, L = 360, top = Math.max(1, ev[0][4]), s = sv('svg', {width: W, height: B * ev.length + "
    "10, id: 'plot-nodes'});\n"
    "  ev.forEach((e, i) => { s.appendChild(sv('text', {x: 4, y: i * B + 13, 'font-size': 11}, (e[0] + ' (' + e[1] + "
    "')').slice(0, 58)));\n"
    "    s.appendChild(sv('rect', {x: L, y: i * B + 3, width: Math.max(1, (W - L - 110) * e[4] / top), height: B - 4, "
    "fill: '#1f77b4'}));\n"
    "    s.appendChild(sv('text', {x: L + (W - L - 110) * e[4] / top + 6, y: i * B + 13, 'font-size': 11}, "
    "fmt(e[4]))); });\n"
    "  app.appendChild(s); drawn.push('nodes');\n"
    "}\n"
    "function dram() {\n"
    "  if (!D.transfers.length) return;\n"
    "  section(app, 'Biggest DRAM transfers', D.transfers.length + ' of ' + D.transfers_total + ' downloads and "
    "uploads, largest first (cycles: the cost model\\'s)');\n"
    "  app.appendChild(table(['node', 'kind', 'value', 'bytes', 'cycles'], D.transfers, [false, false, false, true, "
    "true]));\n"
    "}\n"
    "[summary, passes, timeline, lmUse, nodeCycles, dram].forEach(f => { try { f(); } catch (e) { caught.push(f.name + "
    "': ' + e); showErrors(); } });\n"
    "document.body.dataset.rendered = drawn.join(' ') || 'none';\n"
    "</script>\n</body></html>\n";

/* The data as one JSON object: the report through cJSON, the long arrays (thousands of
 * events) written directly, which printing them as cJSON trees took a twentieth of a
 * large compile */
bool mn_dashboard_write(MNCompile *c) {
    if (!c->out_dir) return true;
    cJSON *rep = mn_report_json(c);
    char *rj = cJSON_PrintUnformatted(rep);
    cJSON_Delete(rep);
    if (!rj) die("cJSON_PrintUnformatted failed");
    int nt = 0, nd = 0;
    int64_t load[2] = {0, 0}, peak[2] = {0, 0};
    bool scheduled = false;
    for (int i = 0; i < c->npasses; i++) scheduled |= !strcmp(c->passes[i].name, "schedule") && c->passes[i].ok;
    MNBuf j = {0};
    buf_printf(&j, "{\"report\":%s,\"timeline\":", rj);
    free(rj);
    if (scheduled)
        timeline(&j, c, &nt);
    else
        buf_append(&j, "[]", 2);
    buf_printf(&j, ",\"timeline_total\":%d,\"lm_use\":", nt);
    if (scheduled && c->sched && c->sched->res_lw) {
        lm_use(&j, c->sched, load);
        peak[0] = c->sched->peak_lw[0];
        peak[1] = c->sched->peak_lw[1];
    } else
        buf_append(&j, "[]", 2);
    buf_printf(
        &j,
        ",\"lm_load\":[%lld,%lld],\"lm_peak\":[%lld,%lld],\"lm_capacity\":[%lld,%lld],\"top_nodes\":%d,\"transfers\":",
        (long long)load[0], (long long)load[1], (long long)peak[0], (long long)peak[1], (long long)c->machine.lm0_lw,
        (long long)c->machine.lm1_lw, TOP_NODES);
    if (scheduled && c->g)
        transfers(&j, c, &nd);
    else
        buf_append(&j, "[]", 2);
    buf_printf(&j, ",\"transfers_total\":%d}", nd);
    MNBuf b = {0};
    buf_append(&b, page_head, sizeof page_head - 1);
    for (const char *p = j.data, *q; *p; p = q + 2) { /* "</" could close the script element early */
        if (!(q = strstr(p, "</"))) {
            buf_append(&b, p, strlen(p));
            break;
        }
        buf_append(&b, p, (size_t)(q - p));
        buf_append(&b, "<\\/", 3);
    }
    buf_append(&b, page_tail, sizeof page_tail - 1);
    buf_free(&j);
    bool ok = mn_art_write(c, "dashboard.html", b.data, b.len);
    buf_free(&b);
    return ok;
}
