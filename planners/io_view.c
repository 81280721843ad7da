/* I/O views: a graph input read only through a view (Reshape, Flatten, Squeeze, Unsqueeze)
 * is the viewed value on the machine, and a graph output made by a view of a value read by
 * nothing else is that value.
 *
 * The host writes every input, and reads every output, as a layout image (isa/app.c's
 * codec), placing the elements in row-major order, which a view keeps. So the host can
 * lay the input out in the view's shape for free, where on the machine the view would
 * be a layout change of every element: a 1-D signal of 220000 samples, one row replicated
 * on every MAB, becomes 22000 rows of 10 on tiles (pool_lower.c's 1-D pools) without ever
 * being whole in a PE. The value keeps its name and takes the view's type; `host` keeps
 * the shape the host passes, which the app records (emitter/emit.c) and mnemu checks.
 * A constant read only through a view (a lowering's Reshape of a frozen input) becomes the
 * view's constant: its data as it is, the view's dims. Left alone: a value that is also a graph output (or input), a view of another element
 * type or count (none are: a view keeps both). */
#include "plan.h"
#include "ops.h"

static bool is_view(const MNNode *n) {
    return mn_op_has(n->op, MN_VIEW) && n->nout == 1 && n->out[0] && n->nin >= 1 && n->in[0];
}

/* the same elements: its element type and count, every dim static */
static bool same_elements(const MNType *a, const MNType *b) {
    if (a->elem != b->elem || a->rank < 0 || b->rank < 0) return false;
    for (int k = 0; k < a->rank; k++)
        if (a->dims[k] < 0) return false;
    for (int k = 0; k < b->rank; k++)
        if (b->dims[k] < 0) return false;
    return ir_shape_numel(a) == ir_shape_numel(b);
}

static void keep_host_type(MNGraph *g, MNValue *v) {
    if (v->host) return; /* a view of a view: the first shape is the host's */
    MNType *h = ARENA_NEW(g->arena, MNType);
    *h = v->type;
    v->host = h;
}

static bool rewrite(MNCompile *c, MNNode *n) {
    MNGraph *g = c->g;
    MNValue *x = n->in[0], *v = n->out[0];
    if (!same_elements(&x->type, &v->type)) return false;
    if (x->is_input && !x->producer && !x->konst && !x->is_output && x->nuses == 1 && !v->is_output) {
        /* the input is the view: its readers read the input itself */
        keep_host_type(g, x);
        x->type = v->type;
        for (int i = 0; i < g->nnodes; i++)
            for (int k = 0; k < g->nodes[i]->nin; k++)
                if (g->nodes[i]->in[k] == v) g->nodes[i]->in[k] = x;
        x->nuses = v->nuses;
        v->nuses = 0;
        n->dead = true;
        return true;
    }
    if (x->konst && !x->producer && !x->is_output && x->nuses == 1 && !v->is_output) {
        /* a constant's view is the constant (its data in row-major order, the view's dims) */
        MNTensor *t = ARENA_NEW(g->arena, MNTensor);
        *t = *x->konst;
        t->rank = v->type.rank;
        t->dims = v->type.dims;
        v->konst = t;
        v->is_initializer = true;
        v->producer = NULL;
        x->nuses = 0;
        n->dead = true;
        return true;
    }
    MNNode *p = x->producer;
    if (v->is_output && !v->is_input && v->nuses == 1 && p && !p->dead && !x->is_input && !x->is_output && !x->konst &&
        x->nuses == 1) {
        /* the output is the viewed value: its producer writes the output */
        keep_host_type(g, v);
        v->type = x->type;
        p->out[x->producer_out] = v;
        v->producer = p;
        v->producer_out = x->producer_out;
        x->producer = NULL;
        x->nuses = 0;
        n->dead = true;
        return true;
    }
    return false;
}

bool plan_io_views(MNCompile *c) {
    int total = 0, done;
    do /* a chain of views, taken one a round (the outputs' from their end) */
        total += done = plan_replace_nodes(c, is_view, rewrite);
    while (done);
    mn_figure(c, "io_views", total);
    if (total) mn_log(c, 0, "I/O views: %d views of graph inputs and outputs laid out by the host", total);
    return true;
}
