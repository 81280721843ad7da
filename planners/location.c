/* Location planner, initial pass: what must live where before any layout exists.
 *
 * Graph inputs and outputs are exchanged with the host through DRAM (kind InOut);
 * parameters and folded constants are DRAM images written at load time, except
 * one-element constants, which the emitter can place in instructions as immediates
 * (kind IMM), and constants only the compiler reads (a Reshape's shape, Slice bounds,
 * reduction axes: also IMM, they never move). Everything else is left to the location planner that runs after the
 * layout planner, when num_lw and the LM capacity are known. */
#include "plan.h"
#include "ops.h"
#include <stdlib.h>

/* Is input k of n read only by the compiler (a target shape, axes, pads, repeats,
 * sizes)? Such a constant never moves: the emitter takes its values. */
static bool compile_time_operand(const MNNode *n, int k) {
    if (mn_op_has(n->op, MN_REDUCE)) return k == 1; /* the axes */
    switch (n->op) {
    case OP_Reshape:
    case OP_Expand:
    case OP_Squeeze:
    case OP_Unsqueeze:
    case OP_Tile:
    case OP_Split: return k == 1;
    case OP_Slice: return k >= 1; /* starts, ends, axes, steps */
    case OP_Pad: return k == 1 || k == 3; /* pads, axes (the fill value is data) */
    case OP_Resize:
    case OP_Upsample: return k >= 1; /* roi, scales, sizes */
    case OP_ConstantOfShape: return k == 0;
    default: return false;
    }
}

bool plan_location_initial(MNCompile *c) {
    MNGraph *g = c->g;
    int dram = 0, imm = 0, io = 0, ct = 0;
    ir_recount_uses(g);
    /* constants that only the compiler reads: every use a compile-time operand */
    int *data_uses = xcalloc((size_t)g->nvalues + 1, sizeof(int));
    for (int i = 0; i < g->nnodes; i++)
        for (int k = 0; k < g->nodes[i]->nin; k++) {
            const MNValue *v = g->nodes[i]->in[k];
            if (v && !compile_time_operand(g->nodes[i], k)) data_uses[v->id]++;
        }
    for (int i = 0; i < g->nvalues; i++) {
        MNValue *v = g->values[i];
        if (!v->nuses && !v->producer) continue; /* an unused initializer */
        if (v->is_input || v->is_output) {
            v->loc_kind = MN_LOC_KIND_INOUT;
            v->loc = MN_LOC_DRAM;
            io++;
        } else if (v->konst && v->konst->numel != 1 && !data_uses[v->id]) { /* an empty one too (ReduceSum's axes) */
            v->loc_kind = MN_LOC_KIND_IMM;
            v->loc = MN_LOC_IMM;
            ct++;
        } else if (v->konst && v->konst->numel == 1) {
            v->loc_kind = MN_LOC_KIND_IMM;
            v->loc = MN_LOC_IMM;
            imm++;
        } else if (v->konst) {
            v->loc_kind = MN_LOC_KIND_DRAM;
            v->loc = MN_LOC_DRAM;
            dram++;
        }
    }
    free(data_uses);
    mn_figure(c, "inout_values", io);
    mn_figure(c, "dram_parameters", dram);
    mn_figure(c, "immediates", imm);
    mn_figure(c, "compile_time_constants", ct);
    mn_log(c, 0,
           "locations: %d graph inputs/outputs, %d parameters in DRAM, %d immediates, %d constants read only by the "
           "compiler",
           io, dram, imm, ct);
    return true;
}

/* Location planner: DRAM or LM for every value, once layouts give their sizes (the
 * pass before Time-Slice decides the kinds; the pass after it, "sliced", places the new
 * slices and inserts the transfers).
 *
 * Every node computes from and into LM. A value a node reads that lives in DRAM (a
 * parameter, a graph input) is brought in by one MNCoreDownload placed before its first
 * reader and shared by all of them; a graph output is produced into LM and written out
 * by an MNCoreUpload right after its producer (later readers use the LM copy). A value
 * whose layout needs more long words than one LM holds stays in DRAM for Time-Slice to
 * split; what Time-Slice could not split is counted. LM0/LM1 banks are assigned later,
 * from the schedule. */
static MNValue *copy_value(MNGraph *g, const MNValue *v, const char *suffix, int *counter) {
    MNValue *n = ir_value_new(g, arena_printf(g->arena, "%s_%s_%d", v->name, suffix, ++*counter));
    n->type = v->type;
    n->dtype = v->dtype;
    n->lay = v->lay;
    n->layout = v->layout;
    n->layout_kind = v->layout_kind;
    n->padded_shape = v->padded_shape;
    n->num_lw = v->num_lw;
    return n;
}

static int64_t lm_capacity(const MNCompile *c) { return machine_lm_cap(&c->machine); }

/* LM for every produced value that fits one LM, DRAM for the others; values that
 * already have a kind keep it. */
static void assign_kinds(MNCompile *c, int *in_lm, int *over) {
    MNGraph *g = c->g;
    int64_t cap = lm_capacity(c);
    for (int i = 0; i < g->nvalues; i++) {
        MNValue *v = g->values[i];
        if (!v->producer || v->is_output || v->loc_kind != MN_LOC_KIND_UNKNOWN) continue;
        if (v->num_lw >= 0 && v->num_lw <= cap) {
            v->loc_kind = MN_LOC_KIND_LM;
            ++*in_lm;
        } else {
            v->loc_kind = MN_LOC_KIND_DRAM;
            v->loc = MN_LOC_DRAM;
            ++*over;
        }
    }
}

/* The most LM one node needs at once: its operands and results (immediates aside).
 * Before Time-Slice this can exceed an LM many times over; after it, it should not. */
static int64_t peak_node_lw(const MNGraph *g) {
    int64_t peak = 0;
    for (int i = 0; i < g->nnodes; i++) {
        const MNNode *n = g->nodes[i];
        if (n->op == OP_MNCoreInputSplit || n->op == OP_MNCoreOutputConcat || n->op == OP_MNCoreDownload ||
            n->op == OP_MNCoreUpload)
            continue; /* they stream between DRAM and LM */
        int64_t t = 0;
        for (int k = 0; k < n->nin + n->nout; k++) {
            const MNValue *v = k < n->nin ? n->in[k] : n->out[k - n->nin];
            if (k < n->nin && plan_streamed(n, k)) continue; /* read from DRAM by the node */
            bool again = false;
            for (int j = 0; j < k && v; j++) again |= (j < n->nin ? n->in[j] : n->out[j - n->nin]) == v;
            if (v && !again && v->loc_kind != MN_LOC_KIND_IMM && v->num_lw > 0) t += v->num_lw;
        }
        if (t > peak) peak = t;
    }
    return peak;
}

bool plan_location(MNCompile *c) {
    int in_lm = 0, over = 0, larger = 0;
    assign_kinds(c, &in_lm, &over);
    /* the LM the graph asks for before Time-Slice: every value a node touches, once
     * (immediates aside), and how many of them, graph inputs and outputs included, are
     * larger than one LM; location_sliced reports the same demand after the split */
    MNGraph *g = c->g;
    int64_t demand = 0, cap = lm_capacity(c);
    for (int i = 0; i < g->nvalues; i++) {
        const MNValue *v = g->values[i];
        if ((!v->nuses && !v->producer) || v->loc_kind == MN_LOC_KIND_IMM || v->num_lw <= 0) continue;
        demand += v->num_lw;
        larger += v->num_lw > cap;
    }
    mn_figure(c, "values_in_lm", in_lm);
    mn_figure(c, "values_over_lm_capacity", over);
    mn_figure(c, "values_larger_than_lm", larger);
    mn_figure(c, "lm_demand_lw", demand);
    mn_figure(c, "lm_peak_node_lw", peak_node_lw(g));
    mn_log(c, 0, "locations: %d values fit LM, %d are larger than one LM (%lld LW) and go to Time-Slice", in_lm, over,
           (long long)lm_capacity(c));
    return true;
}

/* Only these read DRAM: a download copies a value in, a split cuts its pieces out, a
 * concat gathers the pieces the scheduler stored in their places, and a product streams
 * its B. */
static bool reads_dram(const MNNode *n, int k) {
    return n->op == OP_MNCoreDownload || n->op == OP_MNCoreInputSplit || n->op == OP_MNCoreOutputConcat ||
           plan_streamed(n, k); /* a concat gathers stored pieces */
}

int plan_lm_misfits(const MNGraph *g, const MNMachine *m, MNBuf *why) {
    int64_t cap = machine_lm_cap(m);
    int bad = 0;
    for (int i = 0; i < g->nnodes; i++) {
        const MNNode *n = g->nodes[i];
        if (n->op == OP_MNCoreDownload || n->op == OP_MNCoreUpload) continue; /* the node on the other side is named */
        for (int k = 0; k < n->nin + n->nout; k++) {
            const MNValue *v = k < n->nin ? n->in[k] : n->out[k - n->nin];
            if (!v || !mn_dtype_bytes(v->dtype)) continue;
            bool in = k < n->nin, lm = v->loc_kind == MN_LOC_KIND_LM;
            bool wrong = lm ? v->num_lw > cap : in && !reads_dram(n, k) && v->loc_kind != MN_LOC_KIND_IMM;
            if (!wrong) continue;
            if (why && bad < 8) /* the message stays one readable line */
                buf_printf(why, "%snode '%s' (%s) %s '%s' (%lld LW per PE%s)", bad ? ", " : "", n->name, n->op_type,
                           in ? "reads" : "writes", v->name, (long long)v->num_lw, lm ? "" : ", in DRAM");
            else if (why && bad == 8)
                buf_printf(why, ", ...");
            bad++;
        }
    }
    return bad;
}

bool plan_location_sliced(MNCompile *c) {
    MNGraph *g = c->g;
    int64_t cap = lm_capacity(c);
    int downloads = 0, uploads = 0, over = 0, in_lm = 0, counter = 0;
    int64_t lm_demand = 0;
    assign_kinds(c, &in_lm, &over);
    int nv = g->nvalues, nn = g->nnodes;
    for (int i = 0; i < nv; i++)
        if (g->values[i]->loc_kind == MN_LOC_KIND_LM) lm_demand += g->values[i]->num_lw > 0 ? g->values[i]->num_lw : 0;
    MNValue **dl = xcalloc((size_t)nv, sizeof(MNValue *)); /* the LM copy of a DRAM value */
    int nin_total = 0; /* each node, a download per input, an upload per output */
    for (int i = 0; i < nn; i++) nin_total += g->nodes[i]->nin;
    MNNode **order = ARENA_ARRAY(g->arena, MNNode *, nn + nin_total + 2 * g->noutputs + 1);
    int w = 0;
    for (int i = 0; i < nn; i++) {
        MNNode *n = g->nodes[i];
        for (int k = 0; k < n->nin && n->op != OP_MNCoreInputSplit; k++) { /* a split reads DRAM itself */
            MNValue *v = n->in[k];
            if (!v || v->id >= nv || plan_streamed(n, k)) continue; /* streamed by the node from DRAM */
            if (dl[v->id]) {
                n->in[k] = dl[v->id];
                continue;
            }
            bool in_dram = v->loc_kind == MN_LOC_KIND_DRAM || (v->loc_kind == MN_LOC_KIND_INOUT && !v->producer);
            if (!in_dram || (v->producer && v->loc_kind == MN_LOC_KIND_DRAM))
                continue; /* over capacity: for Time-Slice */
            MNNode *d = ir_node_new(g, "MNCoreDownload", 1, 1);
            d->name = arena_printf(g->arena, "%s_download", v->name);
            d->domain = "mncore";
            d->in[0] = v;
            MNValue *lv = copy_value(g, v, "Download", &counter);
            lv->loc_kind = MN_LOC_KIND_LM;
            lv->producer = d;
            d->out[0] = lv;
            dl[v->id] = lv;
            n->in[k] = lv;
            order[w++] = d;
            downloads++;
            lm_demand += v->num_lw > 0 ? v->num_lw : 0;
        }
        order[w++] = n;
        for (int k = 0; k < n->nout; k++) {
            MNValue *v = n->out[k];
            if (!v || !v->is_output || n->op == OP_MNCoreOutputConcat) continue; /* a concat writes DRAM itself */
            MNValue *lv = copy_value(g, v, "LM", &counter);
            lv->loc_kind = MN_LOC_KIND_LM;
            lv->producer = n;
            lv->producer_out = k;
            n->out[k] = lv;
            MNNode *u = ir_node_new(g, "MNCoreUpload", 1, 1);
            u->name = arena_printf(g->arena, "%s_upload", v->name);
            u->domain = "mncore";
            u->in[0] = lv;
            u->out[0] = v;
            v->producer = u;
            v->producer_out = 0;
            dl[v->id] = lv; /* later readers use the LM copy */
            order[w++] = u;
            uploads++;
        }
    }
    g->nnodes = 0; /* the new nodes were appended by ir_node_new: rebuild the order */
    for (int i = 0; i < w; i++) g->nodes[g->nnodes++] = order[i];
    free(dl);
    ir_recount_uses(g);
    mn_figure(c, "downloads", downloads);
    mn_figure(c, "uploads", uploads);
    mn_figure(c, "lm_demand_lw", lm_demand);
    mn_figure(c, "lm_peak_node_lw", peak_node_lw(g));
    mn_log(c, 0,
           "locations (sliced): %d downloads, %d uploads; every node computes on values that fit one LM (%lld LW)",
           downloads, uploads, (long long)cap);
    /* what still does not fit belongs to ops Time-Slice cannot cut that way: the model
     * needs a larger machine, and saying so beats emitting code that cannot run */
    MNBuf why = {0};
    int bad = plan_lm_misfits(g, &c->machine, &why);
    if (bad)
        diag_error(&c->diag, DIAG_RESOURCE,
                   "%s: does not fit machine '%s' (LM %lld LW per PE), and Time-Slice cannot cut these nodes further: "
                   "%d operands too large: %s",
                   g->file, c->machine.name, (long long)cap, bad, why.data);
    buf_free(&why);
    return !bad;
}
