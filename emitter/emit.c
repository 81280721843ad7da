/* Code Emit's driver: which path takes each node of the scheduled graph, the walk over
 * the schedule that checks and emits every node where it runs, and the program linked
 * and assembled into model.app (GPFNApp) with the host's tensors.
 *
 * The paths, one file each: elementwise.c (the vector path: elementwise ops, renames and
 * copies), gather.c (data that moves between PEs: combine into the L1BM, broadcast into
 * a scratch range of every PE's LM0, T-indirect picks by a per-PE index table),
 * window.c (reductions, pools, products, run-time Gather: folds over rows of a scratch),
 * matmul.c (products on the MAB matrix unit; a Conv arrives lowered to an im2col gather
 * and a Gemm, planners/conv_lower.c), transfer.c (downloads, uploads, Time-Slice's
 * splits and concats of layout images in DRAM, isa/app.h). walk.c keeps the LM
 * residency at each node; measure.c serves the scheduler (MNCompile.code).
 *
 * Each node's code is a segment of its own whose operands address graph values
 * relative to them ($lm{id}8); the linker (link.c) resolves and joins the segments.
 * Compute nodes are emitted per group of 4 long words (one per cycle of a step). Each
 * step obeys the hazards the emulator enforces (docs/vsm.md section 6): one read port
 * per LM bank (a second operand in the same bank goes through GRF1 first), a write to a
 * bank is read from that bank only 3 steps later (nops are inserted when an output
 * shares a bank with an input), GRF results are read 2 steps later.
 *
 * Op coverage is partial and said so: a graph with a node that has no emitter here is
 * still compiled (the scheduled l3ir and the rest are written) but gets no model.app,
 * and the log and report.json name every such node's op (ops.h's types column says
 * which element types each op has code for). */
#include "emit.h"
#include "emit_impl.h"
#include "plan.h"
#include "memo.h"
#include "params.h"
#include "scheduler.h"
#include "app.h"
#include "layout.h"
#include "ops.h"
#include "version.h"
#include "vsm.h"
#include "timing.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

const char *emit_bank_reg(const MNValue *v) { return v->loc == MN_LOC_LM1 ? "ln" : "lm"; }

bool emit_image_of(const MNCompile *c, const MNValue *v, AppLayoutImage *im, MNLayout *l) {
    char err[300];
    return layout_get(v, l) && app_layout_image(l, &c->machine, im, err, sizeof err);
}

/* The write mask of a 4-long-word access at long word a of a value of num_lw: every
 * step moves 4 long words, and those past the value belong to its LM neighbours */
const char *emit_tail_mask(int64_t num_lw, int64_t a) {
    static const char *m[4] = {"/1000", "/1100", "/1110", ""};
    int64_t r = num_lw - a;
    return r >= 4 ? "" : r <= 0 ? "/0000" : m[r - 1];
}

/* why a node that only moves data (MN_GATHER) cannot be emitted: a Slice that keeps
 * every element on its PE and slot is a copy, a Gather by indices computed at run time a
 * window op; the rest are gathers */
static const char *moves_why(const MNCompile *c, const MNNode *n, Walk *w) {
    if ((n->in[0]->loc != MN_LOC_LM0 && n->in[0]->loc != MN_LOC_LM1) ||
        (n->out[0]->loc != MN_LOC_LM0 && n->out[0]->loc != MN_LOC_LM1))
        return "not in LM";
    if ((n->op == OP_Slice && emit_slice_copy(c, n)) || emit_transpose_copy(c, n) ||
        emit_concat_copy(c, n)) { /* every element keeps its PE and slot: copied long word by long word */
        w->scopy[w->pos] = true;
        return NULL;
    }
    if (n->op == OP_Gather) { /* every index known and in range */
        const MNTensor *kt = emit_konst_of(n->in[1]);
        if (!kt) { /* a window op over the rows of the axis */
            const char *ww = window_why((MNCompile *)c, (MNNode *)n, w);
            if (ww) return ww;
            w->win[w->pos] = true;
            return NULL;
        }
        int ax = (int)ir_attr_int(n, "axis", 0);
        int64_t dim = n->in[0]->type.dims[ax < 0 ? ax + n->in[0]->type.rank : ax];
        for (int64_t i = 0; i < kt->numel; i++) {
            int64_t j = (int64_t)ir_tensor_get_f(kt, i);
            if (j < -dim || j >= dim) return "an index out of range";
        }
    }
    if (emit_turn_take(c, n, w)) return NULL; /* 8 x 8 blocks turned inside every MAB */
    const char *why;
    if (emit_rowmove_take(c, n, w, &why)) return why; /* whole rows between L1Bs */
    why = emit_moves_why(c, n, w);
    if (why && emit_blockmove_take(c, n, w)) return NULL; /* whole blocks of a MAB, where a gather cannot */
    if (why && emit_quadmove_take(c, n, w)) return NULL; /* single addresses of a MAB, where a gather cannot */
    return why;
}

static const char *vector_why(const MNCompile *c, const MNNode *n, Walk *w) {
    if (emit_cast_node(n)) return emit_cast_why(c, n, w);
    if ((n->op == OP_Concat || n->op == OP_Split || n->op == OP_Slice || n->op == OP_Gather) &&
        emit_tile_chan_node(c, n)) {
        w->tile[w->pos] = true;
        return emit_tile_chan_why(c, n, w);
    }
    if (plan_tile_op(n->op) && emit_tile_node(c, n)) { /* (a DepthToSpace on tiles moves no data between MABs) */
        w->tile[w->pos] = true;
        return emit_tile_why(c, n, w);
    }
    if (emit_treereduce_node(c, n) && !emit_treereduce_why(c, n, w)) { /* folded over the tree levels */
        w->tred[w->pos] = true;
        return NULL;
    }
    if (emit_embed_node(n)) { /* rows of a table in DRAM through the DAR */
        w->embed[w->pos] = true;
        return emit_embed_why(c, n, w);
    }
    if (mn_op_has(n->op, MN_GATHER)) return moves_why(c, n, w);
    switch (n->op) {
    case OP_MNCoreForget: return NULL;
    case OP_MNCoreLayoutSwitch:
        if (emit_tile_retile_node(c, n)) { /* between two grids of tiles */
            w->tile[w->pos] = true;
            return emit_tile_retile_why(c, n, w);
        }
        return emit_rename_why(c, n, w);
    case OP_MNCoreInputSplit:
    case OP_MNCoreOutputConcat: return emit_piece_why(c, n);
    case OP_MNCoreDownload:
    case OP_MNCoreUpload:
    case OP_MNCoreMove: {
        const MNValue *x = n->in[0], *y = n->out[0];
        if (x->dtype != y->dtype || !x->lay || !layout_equal(x, y)) return "a transfer that changes layout";
        if (layout_timed(x) || layout_timed(y))
            return "a transfer of a time-sliced value (its pieces move by splits and concats)";
        return NULL;
    }
    default: break;
    }
    if ((n->op == OP_MatMul || n->op == OP_Gemm) && !emit_matrix_why(c, n, w)) {
        w->mat[w->pos] = true;
        return NULL;
    }
    if (emit_rows_node(c, n) && !emit_rows_why(c, n, w)) { /* else the window path's tables */
        w->rows[w->pos] = true;
        return NULL;
    }
    if (window_op(n) && emit_stencil_node(c, n)) {
        w->sten[w->pos] = true;
        return emit_stencil_why(c, n, w);
    }
    if (window_op(n)) return window_why((MNCompile *)c, (MNNode *)n, w);
    return emit_ew_why(c, n, w);
}

/* Why node n cannot be emitted here (NULL: it can). An elementwise op that the vector
 * path cannot take (operands laid out otherwise, more than two, bounds computed at run
 * time) may still be a window op, each operand a row. */
const char *emit_why_not(const MNCompile *c, const MNNode *n, Walk *w) {
    w->win[w->pos] = false;
    w->msplit[w->pos] = false;
    w->scopy[w->pos] = false;
    w->sten[w->pos] = false;
    w->rows[w->pos] = false;
    w->rmove[w->pos] = false;
    w->bmove[w->pos] = false;
    w->turn[w->pos] = false;
    w->qmove[w->pos] = false;
    w->embed[w->pos] = false;
    w->tred[w->pos] = false;
    w->tile[w->pos] = false;
    const char *why = vector_why(c, n, w);
    if (!why || !window_elementwise(n)) return why;
    const char *wwhy = window_why((MNCompile *)c, (MNNode *)n, w);
    if (wwhy) return strcmp(why, "no emitter") ? why : wwhy; /* the window path's reason where it is the only one */
    w->win[w->pos] = true;
    return NULL;
}

/* ---- the app ---- */

/* A value the host exchanges: a layout image, or (a constant without a layout, such as
 * a folded Shape output, or an input nothing reads) a row-major image in group 0. */
static bool host_tensor(MNCompile *c, ZSTD_CCtx *zc, const MNValue *v, AppTensor *t, bool param, char *err,
                        size_t errlen) {
    memset(t, 0, sizeof *t);
    if (!v->layout) { /* unread inputs and folded outputs have none */
        if (!v->konst && !v->is_input) {
            snprintf(err, errlen, "'%s' has no layout", v->name);
            return false;
        }
        t->name = v->name;
        t->onnx_dtype = v->type.elem;
        t->rank = v->host ? v->host->rank : v->type.rank;
        t->shape = v->host ? v->host->dims : v->type.dims;
        t->mn_dtype = mn_dtype_name(v->dtype);
        t->layout = "RowMajor";
        t->location = "DRAM";
        t->group = 0;
        t->address = (uint64_t)(v->addr > 0 ? v->addr : 0);
        t->num_lw = app_image_lw(t->mn_dtype, ir_shape_numel(&v->type));
        return !param || emit_param_image(c, zc, v, t, err, errlen);
    }
    t->name = v->name;
    t->onnx_dtype = v->type.elem;
    t->rank = v->host ? v->host->rank : v->type.rank; /* the host's shape; the layout's may be a view of it */
    t->shape = v->host ? v->host->dims : v->type.dims;
    t->mn_dtype = mn_dtype_name(v->dtype);
    t->layout = v->layout;
    t->location = "DRAM";
    t->group = -1;
    t->address = (uint64_t)v->addr;
    t->num_lw = app_layout_image_lw(v->layout, &c->machine, err, errlen);
    if (!t->num_lw) return false;
    return !param || emit_param_image(c, zc, v, t, err,
                                      errlen); /* every group's part, one after another; one part when they are alike */
}

static void free_packed(AppTensor *t, int n) {
    for (int i = 0; i < n; i++) free((void *)t[i].zstd);
}

/* node n's code, at the walk's position (emit_why_not accepted it there) */
void emit_node(Em *e, const MNNode *n, const Walk *wk) {
    switch (n->op) {
    case OP_MNCoreForget: break;
    case OP_MNCoreDownload: emit_transfer(e, n->in[0], n->out[0], true); break;
    case OP_MNCoreUpload: emit_transfer(e, n->out[0], n->in[0], false); break;
    case OP_MNCoreMove: emit_bank_move(e, n); break;
    case OP_MNCoreInputSplit:
    case OP_MNCoreOutputConcat: emit_pieces(e, n); break;
    default:
        if (emit_cast_node(n))
            emit_cast(e, n);
        else if (wk->mat[wk->pos])
            emit_matrix(e, n, wk);
        else if (wk->tile[wk->pos] &&
                 (n->op == OP_Concat || n->op == OP_Split || n->op == OP_Slice || n->op == OP_Gather))
            emit_tile_chan(e, n, wk);
        else if (wk->tile[wk->pos] && n->op == OP_MNCoreLayoutSwitch)
            emit_tile_retile(e, n, wk);
        else if (wk->tile[wk->pos])
            emit_tile(e, n, wk);
        else if (wk->rows[wk->pos])
            emit_rows(e, n);
        else if (wk->rmove[wk->pos])
            emit_rowmove(e, n, wk->scr[wk->pos]);
        else if (wk->bmove[wk->pos])
            emit_blockmove(e, n);
        else if (wk->turn[wk->pos])
            emit_turn(e, n);
        else if (wk->qmove[wk->pos])
            emit_quadmove(e, n);
        else if (wk->embed[wk->pos])
            emit_embed(e, n, wk->scr[wk->pos]);
        else if (wk->tred[wk->pos])
            emit_treereduce(e, n, wk->scr[wk->pos]);
        else if (wk->sten[wk->pos])
            emit_stencil(e, n, wk);
        else if (wk->scopy[wk->pos] && n->op == OP_Concat)
            emit_concat(e, n);
        else if (wk->scopy[wk->pos])
            emit_elementwise(e, n);
        else if (window_op(n) || wk->win[wk->pos])
            window_emit(e, (MNNode *)n, wk);
        else if (emit_moves_data(n) ||
                 ((n->op == OP_MNCoreLayoutSwitch || mn_op_has(n->op, MN_VIEW)) && !emit_is_copy(e->c, n)))
            emit_gather(e, n, wk);
        else
            emit_elementwise(e, n);
        break;
    }
}

static bool emit_all(MNCompile *c);

bool emit_program(MNCompile *c) {
    c->emit_memo = memo_new();
    bool ok = emit_all(c);
    memo_free(c->emit_memo);
    c->emit_memo = NULL;
    return ok;
}

/* model.app's bytes while it is written: the app's own and those it refers to */
typedef struct {
    MNBuf own;
    MNSpan *span, *cspan, *rspan;
    MNBufs code, rel;
    AppTensor *params; /* their images */
    int nparams;
} AppOut;

static void app_out_free(void *p) {
    AppOut *o = p;
    buf_free(&o->own);
    free(o->span);
    free(o->cspan);
    free(o->rspan);
    bufs_free(&o->code);
    bufs_free(&o->rel);
    free_packed(o->params, o->nparams);
    free(o);
}

static void text_free(void *p) {
    bufs_free(p);
    free(p);
}

static void em_linked_free(EmLinked *l) { bufs_free(&l->text), bufs_free(&l->code), bufs_free(&l->rel); }

/* the pieces as spans (malloc'd) */
static MNSpan *spans_of(const MNBufs *l, int *n) {
    MNSpan *s = xmalloc(sizeof(MNSpan) * (size_t)(l->n + 1));
    for (int k = 0; k < l->n; k++) s[k] = (MNSpan){l->part[k].data ? l->part[k].data : "", l->part[k].len};
    *n = l->n;
    return s;
}

static bool emit_all(MNCompile *c) {
    MNGraph *g = c->g;
    /* what cannot be emitted yet, all of it at once */
    MNBuf why = {0};
    int missing = 0, on_rows = 0, row_moves = 0, block_moves = 0, turns = 0, quad_moves = 0, embeds = 0, tree_folds = 0,
        l2b_splits = 0;
    int seen[OP_COUNT] = {0}, first[OP_COUNT];
    const char *first_why[OP_COUNT];
    Walk wk;
    emit_walk_init(&wk, g);
    for (int i = 0; i < g->nnodes; i++) {
        wk.pos = i;
        emit_walk_before(g, &wk, g->nodes[i]);
        const char *w = emit_why_not(c, g->nodes[i], &wk);
        emit_walk_after(g, &wk, g->nodes[i]);
        on_rows += !w && wk.rows[i];
        row_moves += !w && wk.rmove[i];
        block_moves += !w && wk.bmove[i];
        turns += !w && wk.turn[i];
        quad_moves += !w && wk.qmove[i];
        embeds += !w && wk.embed[i];
        tree_folds += !w && wk.tred[i];
        l2b_splits += !w && wk.msplit[i];
        if (!w) continue;
        missing++;
        int op = g->nodes[i]->op;
        if (seen[op]++) continue;
        first[op] = i;
        first_why[op] = w;
    }
    /* by kind in the order they first appear: how many, and the first one's reason and name */
    for (int i = 0; i < g->nnodes; i++) {
        int op = g->nodes[i]->op;
        if (!seen[op] || first[op] != i) continue;
        buf_printf(&why, "%s%s (%s, node '%s'", why.len ? ", " : "", g->nodes[i]->op_type, first_why[op],
                   g->nodes[i]->name);
        if (seen[op] > 1) buf_printf(&why, " and %d more", seen[op] - 1);
        buf_printf(&why, ")");
    }
    char perr[300];
    if (!missing && !emit_machine_ok(&c->machine, perr, sizeof perr)) {
        mn_log(c, 1, "no model.app: %s", perr);
        c->app_status = arena_printf(c->arena, "not written: %s", perr);
        c->no_program = arena_printf(c->arena, "%s", perr);
        buf_free(&why);
        emit_walk_free(&wk);
        return true;
    }
    mn_figure(c, "nodes_without_emitter", missing);
    mn_figure(c, "row_reductions_on_mabs", on_rows);
    mn_figure(c, "rows_moved_between_l1bs", row_moves);
    mn_figure(c, "blocks_moved_between_mabs", block_moves);
    mn_figure(c, "transposes_turned_in_mabs", turns);
    mn_figure(c, "quads_moved_between_mabs", quad_moves);
    mn_figure(c, "embeddings_through_the_dar", embeds);
    mn_figure(c, "reductions_over_the_tree", tree_folds);
    mn_figure(c, "products_split_over_l2bs", l2b_splits);
    if (missing) {
        mn_log(c, 1, "no model.app: the code emitter does not cover %d nodes yet: %s", missing, why.data);
        c->app_status = arena_printf(c->arena, "not written: the code emitter does not cover %s", why.data);
        c->no_program = arena_printf(c->arena, "the code emitter does not cover %d nodes: %s", missing, why.data);
        buf_free(&why);
        emit_walk_free(&wk);
        return true;
    }
    buf_free(&why);
    int nv0 = g->nvalues; /* the graph's values before the gather tables join them */
    /* link=concat: the code goes to the linker a part of some 256 KB at a time, linked
     * on the other threads while the rest is emitted; merge takes the whole text */
    bool merge = c->opt->ival[MN_OPT_link] == MN_LINK_MERGE;
    EmLinker *L = merge ? NULL : emit_linker_start(c);
    MNBuf b = {0}, hdr = {0};
    /* the tables go above every DRAM value the address planner placed */
    Em e = {.c = c, .b = &b, .dram_top = (c->sched->dram_top + 63) / 64 * 64};
    buf_printf(L ? &hdr : &b, "# %s, compiled by mncc %s for %s\n", g->file, mncc_version, c->machine.name);
    int lo = 0, nseg = 0, segcap = 256;
    size_t *seg = xmalloc(sizeof(size_t) * (size_t)segcap); /* [i - lo]: where node i's code begins in b */
    for (int i = 0; i < g->nnodes; i++) {
        const MNNode *n = g->nodes[i];
        if (i % 64 == 63 && !mn_memory_ok(c)) {
            emit_walk_free(&wk);
            emit_smap_cache_free(&e);
            if (L) emit_linker_abort(L);
            free(seg);
            buf_free(&b);
            buf_free(&hdr);
            return false;
        }
        wk.pos = i;
        if (nseg + 2 > segcap) seg = xrealloc(seg, sizeof(size_t) * (size_t)(segcap *= 2));
        seg[nseg++] = b.len;
        buf_printf(&b, "# %s %s\n", n->op_type, n->name);
        emit_node(&e, n, &wk);
        if (L && b.len >= ((size_t)256 << 10) && i + 1 < g->nnodes) {
            seg[nseg] = b.len;
            emit_linker_add(L, &b, seg, lo, i + 1);
            lo = i + 1;
            nseg = 0;
            segcap = 256;
            seg = xmalloc(sizeof(size_t) * (size_t)segcap);
        }
    }
    emit_walk_free(&wk);
    emit_smap_cache_free(&e);
    seg[nseg] = b.len;
    EmLinked lp; /* the program in its parts */
    EmLink lk;
    bool linked_ok;
    if (L) {
        emit_linker_add(L, &b, seg, lo, g->nnodes);
        linked_ok = emit_linker_finish(L, hdr.data ? hdr.data : "", hdr.len, &lp, &lk);
    } else {
        linked_ok = emit_link(c, b.data, seg, &lp, &lk);
        free(seg);
    }
    buf_free(&b);
    buf_free(&hdr);
    if (!linked_ok) {
        em_linked_free(&lp);
        return false;
    }
    mn_figure(c, "link_merged_pairs", lk.pairs);
    mn_figure(c, "link_steps_saved", lk.steps_saved);
    if (c->opt->ival[MN_OPT_link] == MN_LINK_MERGE)
        mn_log(c, 0, "link: merge joined %d transfer nodes with a compute neighbour, %lld of %lld steps saved",
               lk.pairs, (long long)lk.steps_saved, (long long)lk.steps_concat);
    char err[600];
    if (c->opt->ival[MN_OPT_verify]) { /* the text model.vsm holds assembles to the program encoded */
        MNBuf text = {0}, code = {0};
        bufs_join(&lp.text, &text);
        bufs_join(&lp.code, &code);
        VProgram q = {0};
        if (!vsm_parse("model.vsm", text.data, &q, err, sizeof err)) die("emitted VSM does not assemble: %s", err);
        MNBuf y = {0};
        vsm_encode(&q, &y);
        if (code.len != y.len || memcmp(code.data, y.data, y.len))
            die("model.vsm does not assemble to the program the linker built");
        buf_free(&y);
        buf_free(&text);
        buf_free(&code);
        vsm_program_free(&q);
    }
    MNApp app = {0};
    Arena *a = c->arena;
    app.compiler = "mncc";
    app.version = mncc_version;
    app.machine = c->machine.name;
    app.machine_json = "";
    FILE *mf = fopen(c->machine.source, "rb");
    if (mf) {
        MNBuf mj = {0};
        char chunk[4096];
        for (size_t k; (k = fread(chunk, 1, sizeof chunk, mf)) > 0;) buf_append(&mj, chunk, k);
        fclose(mf);
        buf_append(&mj, "", 1);
        app.machine_json = arena_strdup(a, mj.data);
        buf_free(&mj);
    }
    int64_t nsteps = lk.nsteps;
    app.code_format = "VSMB";
    app.code_version = VSMB_VERSION;
    AppOut *ao = xcalloc(1, sizeof *ao); /* what model.app's write reads: freed once written */
    ao->code = lp.code;
    ao->rel = lp.rel;
    app.code_spans = ao->cspan = spans_of(&ao->code, &app.ncode_spans);
    app.reloc_spans = ao->rspan = spans_of(&ao->rel, &app.nreloc_spans);
    app.vsm = NULL; /* the text is model.vsm; the app holds the code (mndump disassembles it) */
    app.inputs = ARENA_ARRAY(a, AppTensor, g->ninputs + 1);
    app.outputs = ARENA_ARRAY(a, AppTensor, g->noutputs + 1);
    app.params = ARENA_ARRAY(a, AppTensor, g->nvalues + 1); /* the gather tables are values too */
    /* the linker's records, their symbols numbered in the order the records first name them */
    int *sym_of = xmalloc(sizeof(int) * (size_t)(g->nvalues + 1));
    for (int i = 0; i < g->nvalues; i++) sym_of[i] = -1;
    app.symbols = ARENA_ARRAY(a, const char *, g->nvalues + 1);
    for (int k = 0; k < ao->rel.n; k++) {
        AppRelocRec *rr = (AppRelocRec *)ao->rel.part[k].data;
        for (size_t i = 0; i < ao->rel.part[k].len / sizeof(AppRelocRec); i++) {
            AppRelocRec *r = &rr[i];
            if (r->symbol >= (uint32_t)g->nvalues) die("relocation to value %u of %d", r->symbol, g->nvalues);
            if (sym_of[r->symbol] < 0) {
                sym_of[r->symbol] = app.nsymbols;
                app.symbols[app.nsymbols++] = g->values[r->symbol]->name;
            }
            r->symbol = (uint32_t)sym_of[r->symbol];
        }
    }
    free(sym_of);
    app.nreloc_recs = (int)lp.nrelocs;
    mn_figure(c, "relocations", lp.nrelocs);
    bool ok = true;
    ZSTD_CCtx *zc = ZSTD_createCCtx();
    if (!zc) die("out of memory (zstd)");
    for (int i = 0; ok && i < g->ninputs; i++)
        ok = host_tensor(c, zc, g->inputs[i], &app.inputs[app.ninputs++], false, err, sizeof err);
    for (int i = 0; ok && i < g->noutputs; i++)
        ok = host_tensor(c, zc, g->outputs[i], &app.outputs[app.noutputs++], false, err, sizeof err);
    /* parameters and outputs that are constants (the host writes them), then the tables */
    for (int i = 0; ok && i < nv0; i++)
        if (emit_is_param(g->values[i]))
            ok = host_tensor(c, zc, g->values[i], &app.params[app.nparams++], true, err, sizeof err);
    for (int i = 0; ok && i < e.ntables; i++)
        ok = host_tensor(c, zc, e.tables[i], &app.params[app.nparams++], true, err, sizeof err);
    ZSTD_freeCCtx(zc);
    if (ok && e.dram_top > c->machine.dram_lw) {
        ok = false;
        snprintf(err, sizeof err, "the gather tables need DRAM up to %lld LW", (long long)e.dram_top);
    }
    ao->params = app.params;
    ao->nparams = app.nparams;
    if (!ok) {
        bufs_free(&lp.text);
        app_out_free(ao);
        return diag_error(&c->diag, DIAG_UNSUPPORTED, "%s: cannot describe the program's DRAM interface: %s", g->file,
                          err);
    }
    mn_figure(c, "vsm_lines", nsteps);
    if (!c->out_dir) { /* nowhere to write it (the test-data sweep): not built either */
        bufs_free(&lp.text);
        app_out_free(ao);
        mn_log(c, 0, "code: %lld VSM lines", (long long)nsteps);
        return true;
    }
    /* model.vsm is written in the background while model.app is built; both from the
     * linker's parts where they lie */
    MNBufs *text = xmalloc(sizeof *text);
    *text = lp.text;
    int ntspan;
    MNSpan *tspan = spans_of(text, &ntspan);
    ok = mn_art_write_segs(c, "model.vsm", tspan, ntspan, text_free, text);
    free(tspan);
    size_t olen = 0;
    if (ok) {
        int nspan;
        ao->span = app_write_spans(a, &app, &ao->own, &nspan);
        for (int k = 0; k < nspan; k++) olen += ao->span[k].n;
        ok = mn_art_write_segs(c, "model.app", ao->span, nspan, app_out_free, ao);
    } else
        app_out_free(ao);
    if (!ok) {
        if (!c->app_status) c->app_status = "not written: an artifact's write failed";
        return false;
    }
    mn_log(c, 0, "code: %lld VSM lines, model.app %zu bytes", (long long)nsteps, olen);
    c->app_status = "written";
    return true;
}
