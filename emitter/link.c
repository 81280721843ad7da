/* Linker: the per-node VSM segments of Code Emit joined into one program.
 *
 * Segments are relocatable: their operands address graph values relative to the value
 * ($lm{id}word, $d{id}lw); the linker adds the addresses the address planner chose and
 * records each such operand in model.app's relocation table (docs/vsm.md section 9).
 * Node-local scratch ranges and the index tables' LM rows stay absolute.
 *
 * concat (link=concat, the default) puts the segments one after another in schedule
 * order. Each node's code is spaced for its own hazards and ends drained (its last
 * writes are readable by the next node's first step), so that order is always correct.
 *
 * merge (link=merge) runs a transfer node (a Download, Upload, or a Time-Slice split or
 * concat: MV, L2BM and L1BM lines and the nops that wait for them) together with its compute neighbour in the
 * schedule (the L1Merge idea: DRAM time hidden behind compute). The pair must be
 * independent, which is decided from the instructions themselves, not from the values:
 * the footprints (every PE memory word, T, mask entry, L1BM, L2BM and DRAM long word and
 * MV tag each segment reads or writes) may not overlap where one of them writes, and
 * neither may read a forwarding register that the other's units set. Then the two
 * in-order streams are issued as one: a step of each in one line when the issue rules
 * allow it (vsm_step_rules, the emulator's own check), one of them alone otherwise; a
 * nop of one stream hosts a step of the other. Each stream advances by at most one of
 * its steps per line, so its own hazard distances can only grow. The one hazard between
 * the streams that disjoint footprints leave, LM's read after a write to any address
 * of the same LM, is checked line by line. While the transfer stream would wait for an
 * MV (its completion estimated from the machine's DRAM latency and bandwidth), the
 * compute stream runs alone. A pair that cannot be proved independent is concatenated.
 */
#include "emit.h"
#include "app.h"
#include "timing.h"
#include "isa.h"
#include "mv.h"
#include "ops.h"
#include "vsm.h"
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum { K_TAG = K_COUNT, NK }; /* MV tags, as one more resource */

typedef struct {
    int64_t lo, hi;
} Iv;
typedef struct {
    Iv *v;
    int n, cap;
} Ivs;
typedef struct {
    Ivs r[NK], w[NK];
    unsigned fw_read, fw_made; /* bit k: forwarding register K_ALUF + k */
    bool opaque; /* mask lines, debug lines, noforward, matrix registers */
} Foot;

typedef struct {
    const MNMachine *m;
    int64_t size[NK];
} Ctx;

static void iv_add(Ivs *s, int64_t lo, int64_t len, int64_t size) {
    if (len <= 0) return;
    if (len >= size) {
        lo = 0;
        len = size;
    }
    lo %= size;
    if (lo < 0) lo += size;
    for (int part = 0; part < 2 && len > 0; part++) {
        int64_t hi = lo + len < size ? lo + len : size;
        if (s->n == s->cap) s->v = xrealloc(s->v, sizeof(Iv) * (size_t)(s->cap = s->cap ? 2 * s->cap : 16));
        s->v[s->n++] = (Iv){lo, hi};
        len -= hi - lo;
        lo = 0;
    }
}

static int iv_cmp(const void *a, const void *b) {
    const Iv *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void iv_norm(Ivs *s) {
    if (s->n < 2) return;
    qsort(s->v, (size_t)s->n, sizeof(Iv), iv_cmp);
    int k = 0;
    for (int i = 1; i < s->n; i++)
        if (s->v[i].lo <= s->v[k].hi) {
            if (s->v[i].hi > s->v[k].hi) s->v[k].hi = s->v[i].hi;
        } else
            s->v[++k] = s->v[i];
    s->n = k + 1;
}

static bool iv_meet(const Ivs *a, const Ivs *b) {
    for (int i = 0, j = 0; i < a->n && j < b->n;) {
        if (a->v[i].hi <= b->v[j].lo)
            i++;
        else if (b->v[j].hi <= a->v[i].lo)
            j++;
        else
            return true;
    }
    return false;
}

/* a PE-side operand */
static void operand(const Ctx *c, Foot *f, const VOperand *o, bool write) {
    int k = o->kind;
    Ivs *s = write ? &f->w[k] : &f->r[k];
    if (vsm_is_pe_mem(k)) {
        if (o->amode == A_TIND) {
            iv_add(s, 0, c->size[k], c->size[k]);
            iv_add(&f->r[K_T], 0, 1, 1);
        } else
            for (int cy = 0; cy < 4; cy++) iv_add(s, vsm_op_addr(o, cy), o->width, c->size[k]);
    } else if (k == K_T)
        iv_add(s, 0, 1, 1);
    else if (k == K_OMR)
        iv_add(s, o->addr, 1, 32);
    else if (k >= K_ALUF && k <= K_MREADF)
        f->fw_read |= 1u << (k - K_ALUF);
    else if (k == K_MX || k == K_MY)
        f->opaque = true;
    if (write && o->mkind == M_ENTRY) iv_add(&f->r[K_OMR], o->mval, 1, 32);
}

static void expr_foot(const Ctx *c, Foot *f, const VExpr *x) {
    const VInsnInfo *in = &vsm_insns[x->insn];
    const VOperand *s = &x->src[0], *d = &x->dst[0];
    if (x->zkind == M_ENTRY) iv_add(&f->r[K_OMR], x->zval, 1, 32);
    switch (in->unit) {
    case U_NOP: return;
    case U_NOFWD: f->opaque = true; return;
    case U_WAIT: iv_add(&f->r[K_TAG], x->tag, 1, 256); return;
    case U_MWRITE:
    case U_MREAD: f->opaque = true; return;
    case U_L1BM: {
        bool down = s->kind == K_L1BM;
        const VOperand *b = down ? s : d;
        int64_t W = b->width == 4 ? 2 : 1, ppl = (int64_t)c->m->mab_per_l1b * c->m->pe_per_mab;
        int64_t span = x->insn == VI_l1bmd ? 4 * ppl * W : x->insn == VI_l1bmp ? 4 * W : 16 * W;
        iv_add(down ? &f->r[K_L1BM] : &f->w[K_L1BM], b->addr, span, c->size[K_L1BM]);
        if (down) {
            for (int i = 0; i < x->ndst; i++) operand(c, f, &x->dst[i], true);
            f->fw_made |= 1u << (K_LBF - K_ALUF);
        } else
            operand(c, f, s, false);
        return;
    }
    case U_L2BM: {
        if (x->insn == VI_l2bmdars || x->insn == VI_l2bmdarw) { /* the DAR: not a resource the merge tracks */
            f->opaque = true;
            return;
        }
        bool down = s->kind == K_L2BM;
        int64_t lc = down ? s->addr : d->addr, lb = down ? d->addr : s->addr, nj = c->m->l1b_per_l2b;
        int64_t cspan = x->insn == VI_l2bmd ? 32 * nj : 64, bspan = x->insn == VI_l2bmd ? 32 : 64;
        iv_add(down ? &f->r[K_L2BM] : &f->w[K_L2BM], lc, cspan, c->size[K_L2BM]);
        iv_add(down ? &f->w[K_L1BM] : &f->r[K_L1BM], lb, bspan, c->size[K_L1BM]);
        return;
    }
    case U_MV: {
        MvShape sh;
        char why[240];
        if (!mv_shape(x, c->m, &sh, why, sizeof why)) die("Code Emit wrote an MV line mnemu refuses: %s", why);
        int64_t lo, n;
        mv_range(x, &sh, c->m, false, &lo, &n);
        iv_add(&f->r[s->kind], lo, n, c->size[s->kind]);
        mv_range(x, &sh, c->m, true, &lo, &n);
        iv_add(&f->w[d->kind], lo, n, c->size[d->kind]);
        if (x->tag) iv_add(&f->w[K_TAG], x->tag, 1, 256);
        return;
    }
    case U_MAU:
        if (x->insn >= VI_mmulu && x->insn <= VI_mfma) f->opaque = true;
        f->fw_made |= 1u << (K_MAUF - K_ALUF);
        break;
    default: f->fw_made |= 1u << (K_ALUF - K_ALUF); break; /* the ALU */
    }
    for (int i = 0; i < x->nsrc; i++) operand(c, f, &x->src[i], false);
    for (int i = 0; i < x->ndst; i++) operand(c, f, &x->dst[i], true);
}

static void foot_of(const Ctx *c, const VProgram *p, Foot *f) {
    memset(f, 0, sizeof *f);
    for (int i = 0; i < p->nsteps; i++) {
        const VStep *s = &p->steps[i];
        if (s->kind != ST_STEP)
            f->opaque = true;
        else
            for (int k = 0; k < s->nexpr; k++) expr_foot(c, f, &s->e[k]);
    }
    for (int k = 0; k < NK; k++) {
        iv_norm(&f->r[k]);
        iv_norm(&f->w[k]);
    }
}

static void foot_free(Foot *f) {
    for (int k = 0; k < NK; k++) {
        free(f->r[k].v);
        free(f->w[k].v);
    }
}

static bool independent(const Foot *a, const Foot *b) {
    if (a->opaque || b->opaque || (a->fw_read & b->fw_made) || (b->fw_read & a->fw_made)) return false;
    for (int k = 0; k < NK; k++)
        if (iv_meet(&a->w[k], &b->r[k]) || iv_meet(&a->w[k], &b->w[k]) || iv_meet(&b->w[k], &a->r[k])) return false;
    return true;
}

/* one step of a stream (nop/N unrolled) */
typedef struct {
    const VStep *s;
    uint8_t lmr, lmw; /* LM banks read and written (bit 0 LM0, bit 1 LM1) */
    bool nop; /* nothing but nop (and wait) */
    int wait; /* the tag waited for, -1 */
    int mv_tag; /* an MV with that tag (0: untagged), -1 */
    const VExpr *mv;
    int cost;
} Unit;
typedef struct {
    Unit *u;
    int n, i;
} Stream;

static void stream_of(const VProgram *p, const int cost_of[VI_COUNT][8], Stream *st) {
    int n = 0;
    for (int i = 0; i < p->nsteps; i++) n += (int)p->steps[i].repeat;
    st->u = xcalloc((size_t)n + 1, sizeof(Unit));
    st->n = 0;
    st->i = 0;
    for (int i = 0; i < p->nsteps; i++) {
        const VStep *s = &p->steps[i];
        Unit u = {s, 0, 0, true, -1, -1, NULL, 1};
        int cost = 0;
        for (int k = 0; k < s->nexpr; k++) {
            const VExpr *x = &s->e[k];
            const VInsnInfo *in = &vsm_insns[x->insn];
            int ic = cost_of[x->insn][x->prec == P_NONE ? 0 : __builtin_ctz(x->prec)];
            if (ic > cost) cost = ic;
            if (in->unit == U_WAIT)
                u.wait = x->tag;
            else if (in->unit != U_NOP)
                u.nop = false;
            if (in->unit == U_MV) {
                u.mv_tag = x->tag;
                u.mv = x;
            }
            for (int j = 0; j < x->nsrc; j++)
                if (x->src[j].kind == K_LM0 || x->src[j].kind == K_LM1)
                    u.lmr |= (uint8_t)(1 << (x->src[j].kind == K_LM1));
            for (int j = 0; j < x->ndst; j++)
                if (x->dst[j].kind == K_LM0 || x->dst[j].kind == K_LM1)
                    u.lmw |= (uint8_t)(1 << (x->dst[j].kind == K_LM1));
        }
        u.cost = cost > 0 ? cost : 1;
        for (uint32_t r = 0; r < s->repeat; r++) st->u[st->n++] = u;
    }
}

/* the line of steps a and b together (either may be NULL); false: the issue rules forbid it */
static bool combine(const Unit *a, const Unit *b, VStep *out) {
    VExpr *ex = out->e; /* the caller's VSM_MAX_EXPR */
    memset(out, 0, sizeof *out);
    out->e = ex;
    out->kind = ST_STEP;
    out->repeat = 1;
    const VExpr *nop = NULL;
    for (int side = 0; side < 2; side++) {
        const Unit *u = side ? b : a;
        if (!u) continue;
        out->line = u->s->line;
        for (int k = 0; k < u->s->nexpr; k++) {
            const VExpr *x = &u->s->e[k];
            if (x->insn == VI_nop) {
                nop = x;
                continue;
            }
            if (out->nexpr == VSM_MAX_EXPR) return false;
            out->e[out->nexpr++] = *x;
        }
    }
    bool busy = false;
    for (int k = 0; k < out->nexpr; k++) busy |= out->e[k].insn != VI_wait;
    if (!busy && nop) { /* only nops and waits: one nop hosts the waits */
        if (out->nexpr == VSM_MAX_EXPR) return false;
        out->e[out->nexpr++] = *nop;
    }
    char why[160];
    return vsm_step_rules(out, why, sizeof why);
}

typedef struct {
    const Ctx *c;
    Stream x[2]; /* 0: the transfer node, 1: the compute node */
    int64_t t, cyc; /* steps and estimated cycles so far */
    int64_t lastw[2][2]; /* per stream and LM bank: the step of its last write */
    int64_t done[256]; /* estimated completion cycle of the MV per tag */
    int64_t last_mv;
    MvClock clk; /* the MV ports, as mnemu times them */
    VProgram out;
} Merge;

/* may stream k's next step issue at step t, given the other stream's LM writes */
static bool clear(const Merge *g, int k, const Unit *u) {
    for (int b = 0; b < 2; b++)
        if ((u->lmr >> b & 1) && g->t - g->lastw[!k][b] <= g->c->m->lm_raw_steps) return false;
    return true;
}

static void issue(Merge *g, const Unit *a, const Unit *b, const VStep *line) {
    vsm_push_step(&g->out, line);
    const MNMachine *m = g->c->m;
    int cost = 1;
    for (int k = 0; k < 2; k++) {
        const Unit *u = k ? b : a;
        if (!u) continue;
        if (u->cost > cost) cost = u->cost;
        for (int bk = 0; bk < 2; bk++)
            if (u->lmw >> bk & 1) g->lastw[k][bk] = g->t;
        if (u->mv_tag >= 0) {
            if (g->cyc - g->last_mv < (int64_t)m->mv_issue_steps * m->cycles_per_step)
                g->cyc = g->last_mv + (int64_t)m->mv_issue_steps * m->cycles_per_step;
            g->last_mv = g->cyc;
            MvShape sh;
            char why[240];
            if (!mv_shape(u->mv, m, &sh, why, sizeof why)) die("Code Emit wrote an MV line mnemu refuses: %s", why);
            g->done[u->mv_tag] = mv_clock_issue(&g->clk, m, u->mv, &sh, g->cyc);
        }
    }
    g->t += cost;
    g->cyc += (int64_t)cost * m->cycles_per_step;
    for (int k = 0; k < 2; k++) {
        const Unit *u = k ? b : a;
        if (u && u->wait >= 0 && g->done[u->wait] > g->cyc) g->cyc = g->done[u->wait];
    }
}

static void merge_streams(Merge *g) {
    static VExpr nop = {.insn = VI_nop};
    static const VStep idle = {.kind = ST_STEP, .nexpr = 1, .repeat = 1, .e = &nop};
    Stream *A = &g->x[0], *B = &g->x[1];
    VExpr ex[VSM_MAX_EXPR];
    VStep line = {.e = ex};
    while (A->i < A->n || B->i < B->n) {
        const Unit *a = A->i < A->n ? &A->u[A->i] : NULL, *b = B->i < B->n ? &B->u[B->i] : NULL;
        bool ca = a && clear(g, 0, a), cb = b && clear(g, 1, b);
        /* the transfer would stall on its MV: the compute step goes alone */
        bool stalls = a && a->wait >= 0 && g->done[a->wait] > g->cyc + (int64_t)g->c->m->cycles_per_step;
        if (b && cb && stalls) {
            combine(NULL, b, &line);
            issue(g, NULL, b, &line);
            B->i++;
        } else if (a && b && ca && cb && combine(a, b, &line)) {
            issue(g, a, b, &line);
            A->i++;
            B->i++;
        } else if (a && ca) {
            combine(a, NULL, &line);
            issue(g, a, NULL, &line);
            A->i++;
        } else if (b && cb) {
            combine(NULL, b, &line);
            issue(g, NULL, b, &line);
            B->i++;
        } else
            issue(g, NULL, NULL, &idle); /* an LM write of one stream is not readable yet */
    }
}

/* The output: lines of text, one per step, and the relocation of every operand that
 * was relative to a value (line = the step's index in the program). */
typedef struct {
    const MNGraph *g;
    MNBuf *out;
    uint32_t line;
    EmLink *st;
} Out;

static void push_reloc(EmLink *st, AppRelocRec r) {
    if (st->nrelocs == st->caprelocs)
        st->relocs = xrealloc(st->relocs,
                              sizeof(AppRelocRec) * (size_t)(st->caprelocs = st->caprelocs ? 2 * st->caprelocs : 256));
    st->relocs[st->nrelocs++] = r;
}

/* a program's relocation records as a piece of the linked program (taken from st) */
static void take_relocs(EmLink *st, EmLinked *out) {
    MNBuf rb = {(char *)st->relocs, sizeof(AppRelocRec) * (size_t)st->nrelocs,
                sizeof(AppRelocRec) * (size_t)st->caprelocs};
    if (rb.data) bufs_take(&out->rel, &rb);
    out->nrelocs += st->nrelocs;
    st->relocs = NULL;
    st->nrelocs = st->caprelocs = 0;
}

static void put_step(Out *o, const VStep *s) {
    for (int k = 0; k < s->nexpr; k++) {
        const VExpr *x = &s->e[k];
        for (int j = 0; j < x->nsrc + x->ndst; j++) {
            const VOperand *op = j < x->nsrc ? &x->src[j] : &x->dst[j - x->nsrc];
            if (!op->reloc) continue;
            const MNValue *v =
                o->g->values[op->reloc - 1]; /* value names are unique (ir_value_new): its name is the symbol */
            int64_t unit = op->kind == K_DRAM ? 1 : 2;
            EmLink *st = o->st;
            if (k > 0xffff || j > 0xffff) die("relocation: expression %d, operand %d", k, j);
            push_reloc(st, (AppRelocRec){o->line, (uint16_t)k, (uint16_t)j, (uint32_t)v->id, 0,
                                         (int64_t)(op->amode == A_FLAT ? op->flat[0] : op->addr) - unit * v->addr});
        }
    }
    vsm_print_step(o->out, s);
    vsm_encode_step(&o->st->code,
                    s); /* the program the text says: Code Emit writes it without parsing the text again */
    o->line++;
}

/* a line from its template: the values' addresses in its holes and its relocation
 * records, as put_step would give for the line resolved */
static void put_tmpl(Out *o, const VLinkTmpl *t, const uint32_t *ids) {
    int64_t add[VSM_LINE_IDS];
    for (int r = 0; r < t->nrel; r++) {
        if (ids[r] >= (uint32_t)o->g->nvalues) die("relocation to value %u of %d", ids[r], o->g->nvalues);
        const MNValue *v = o->g->values[ids[r]];
        if (v->addr < 0) die("relocation to '%s', which has no address", v->name);
        add[r] = t->rel[r].unit * v->addr;
        push_reloc(o->st,
                   (AppRelocRec){o->line, t->rel[r].expr, t->rel[r].operand, (uint32_t)v->id, 0, t->rel[r].addend});
    }
    int bad;
    if (!vsm_tmpl_fill(t, add, o->out, &o->st->code, &bad))
        die("relocated address of '%s' beyond 16 bits", o->g->values[ids[bad]]->name);
    o->line++;
}

static bool pure_nop(const VStep *s) { return s->kind == ST_STEP && s->nexpr == 1 && s->e[0].insn == VI_nop; }

/* a merged stream, runs of plain nops as one nop/N */
static void put_steps(Out *o, const VStep *s, int n) {
    for (int i = 0; i < n;) {
        int k = i;
        uint32_t r = 0;
        while (k < n && pure_nop(&s[k])) r += s[k++].repeat;
        if (r) {
            VStep nop = s[i];
            nop.repeat = r;
            put_step(o, &nop);
            i = k;
            continue;
        }
        put_step(o, &s[i++]);
    }
}

/* a node's segment: its header, then its steps; its program is freed (it is in the
 * linked text and code now) */
static void put_node(Out *o, const MNNode *n, VProgram *p) {
    buf_printf(o->out, "# %s %s\n", n->op_type, n->name);
    for (int i = 0; i < p->nsteps; i++) put_step(o, &p->steps[i]);
    vsm_program_free(p);
}

/* operands relative to a value get the value's address (LM in words, DRAM in long words) */
static void resolve(const MNGraph *g, VProgram *p) {
    for (int i = 0; i < p->nsteps; i++)
        for (int k = 0; k < p->steps[i].nexpr; k++) {
            VExpr *x = &p->steps[i].e[k];
            for (int j = 0; j < x->nsrc + x->ndst; j++) {
                VOperand *op = j < x->nsrc ? &x->src[j] : &x->dst[j - x->nsrc];
                if (!op->sym) continue;
                if (op->sym > (uint32_t)g->nvalues) die("relocation to value %u of %d", op->sym - 1, g->nvalues);
                const MNValue *v = g->values[op->sym - 1];
                if (v->addr < 0) die("relocation to '%s', which has no address", v->name);
                int64_t add = (op->kind == K_DRAM ? 1 : 2) * v->addr;
                if (op->amode != A_FLAT) op->addr += (uint32_t)add; /* flat addresses are all in flat[] */
                for (int c = 0; op->amode == A_FLAT && c < 4; c++) {
                    if (op->flat[c] + add > 0xffff) die("relocated address of '%s' beyond 16 bits", v->name);
                    op->flat[c] = (uint16_t)(op->flat[c] + add);
                }
                op->reloc = op->sym;
                op->sym = 0;
            }
        }
}

static bool is_transfer(const MNNode *n) {
    return n->op == OP_MNCoreDownload || n->op == OP_MNCoreUpload || n->op == OP_MNCoreInputSplit ||
           n->op == OP_MNCoreOutputConcat;
}

static bool parse_seg(VLineCache *lc, const char *text, size_t lo, size_t hi, VProgram *p) {
    char err[300];
    if (!vsm_parse_relative_cached(lc, "segment", text + lo, hi - lo, p, err, sizeof err))
        die("emitted VSM does not assemble: %s", err);
    return true;
}

/* The segments are parsed one at a time, ahead of the one being written by at most the
 * next segment with code (merge looks at a pair): a program of a million lines is never
 * held as steps, only as its text and code. */
typedef struct {
    MNCompile *c;
    const char *text;
    const size_t *seg;
    VProgram *prog;
    int parsed; /* segments before this one are parsed (and maybe written and freed) */
    VLineCache *lines;
} Segs;

/* the first segment from i on with code, parsing up to it; -1: none (all parsed); -2: over
 * the memory limit */
static int next_live(Segs *s, int i, EmLink *st) {
    const MNGraph *g = s->c->g;
    for (; i < g->nnodes; i++) {
        if (i >= s->parsed) {
            if (i % 64 == 63 && !mn_memory_ok(s->c)) return -2;
            parse_seg(s->lines, s->text, s->seg[i], s->seg[i + 1], &s->prog[i]);
            resolve(g, &s->prog[i]);
            for (int k = 0; k < s->prog[i].nsteps; k++) st->steps_concat += s->prog[i].steps[k].repeat;
            s->parsed = i + 1;
        }
        if (s->prog[i].nsteps) return i;
    }
    return -1;
}

/* concat: the node code arrives in parts while Code Emit goes on, nodes [lo, hi) with
 * their text each. A part is linked on its own (its text, its code without the header,
 * relocations counted from its first line) by whichever thread takes it: num_threads - 1
 * workers from the start, and the emitting thread once its nodes are done. The parts
 * joined in order are the same bytes as one pass over every node. Each thread keeps
 * one line cache for all the parts it links. */
typedef struct {
    MNBuf text; /* the parts' node code (taken from the emitter) */
    size_t *seg; /* [k - lo]: where node k's code begins in text; [hi - lo]: its end */
    int lo, hi;
    MNGraph g; /* the graph's header when the part came: Code Emit grows its values (gather tables) meanwhile */
    MNBuf out;
    EmLink st;
} Part;

struct EmLinker {
    MNCompile *c;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    Part **parts;
    int n, cap, next;
    bool closed, started;
    atomic_bool over; /* the memory limit was reached (only the emitting thread checks it) */
    pthread_t tid[16];
    int nworkers;
};

/* the lines of one parse: where each begins, for the steps' line numbers */
typedef struct {
    const char **at;
    size_t *len;
    int n, cap;
} Run;

/* A line without value ids linked before (the line cache keeps its text and code) is
 * copied; a run of other lines is parsed at once. */
static void link_part(MNCompile *c, Part *pt, atomic_bool *over, VLineCache *lc, bool checks) {
    const MNGraph *g = &pt->g; /* its values are every one the part's code names */
    Out o = {g, &pt->out, 0, &pt->st};
    Run run = {0};
    const char *lt, *lcode;
    size_t ltn, lcn;
    uint32_t rep;
    VLinkTmpl tm;
    uint32_t ids[VSM_LINE_IDS];
    int nids;
    bool rel; /* the line names values: LINKED found its template, else its text and code */
    /* a line linked before: without ids, its text and code; with ids, its template */
#define LINKED(q, n)                                                                    \
    ((rel = memchr(q, '{', n) != NULL) ? vsm_line_cache_tmpl(lc, q, n, &tm, ids, &nids) \
                                       : vsm_line_cache_linked(lc, q, n, &lt, &ltn, &lcode, &lcn, &rep))
    for (int k = pt->lo; k < pt->hi && !atomic_load(over); k++) {
        if (checks && k % 64 == 63 && !mn_memory_ok(c)) {
            atomic_store(over, true);
            break;
        }
        buf_printf(o.out, "# %s %s\n", g->nodes[k]->op_type, g->nodes[k]->name);
        const char *s = pt->text.data + pt->seg[k - pt->lo], *end = pt->text.data + pt->seg[k - pt->lo + 1];
        while (s < end) {
            const char *nl = memchr(s, '\n', (size_t)(end - s));
            size_t len = nl ? (size_t)(nl - s) : (size_t)(end - s);
            const char *line = s;
            s = nl ? nl + 1 : end;
            if (!len || line[0] == '#') continue; /* the emitter's header of the node, comments */
            if (LINKED(line, len)) {
                if (rel) {
                    put_tmpl(&o, &tm, ids);
                    pt->st.steps_concat += tm.repeat;
                    continue;
                }
                buf_append(o.out, lt, ltn);
                buf_append(&o.st->code, lcode, lcn);
                o.line++;
                pt->st.steps_concat += rep;
                continue;
            }
            run.n = 0;
            const char *rend = line + len;
            for (const char *q = line;;) {
                const char *qn = memchr(q, '\n', (size_t)(end - q));
                size_t ql = qn ? (size_t)(qn - q) : (size_t)(end - q);
                if (q != line && ql && q[0] != '#' && LINKED(q, ql)) break;
                if (run.n == run.cap) {
                    run.cap = run.cap ? 2 * run.cap : 64;
                    run.at = xrealloc(run.at, sizeof(char *) * (size_t)run.cap);
                    run.len = xrealloc(run.len, sizeof(size_t) * (size_t)run.cap);
                }
                run.at[run.n] = q;
                run.len[run.n++] = ql;
                rend = q + ql;
                if (!qn || qn + 1 >= end) break;
                q = qn + 1;
            }
            s = rend < end ? rend + 1 : end;
            VProgram p;
            char err[300];
            if (!vsm_parse_relative_cached(lc, "segment", line, (size_t)(rend - line), &p, err, sizeof err))
                die("node '%s': emitted VSM does not assemble: %s", g->nodes[k]->name, err);
            resolve(g, &p);
            for (int i = 0; i < p.nsteps; i++) {
                const VStep *st = &p.steps[i];
                pt->st.steps_concat += st->repeat;
                size_t t0 = o.out->len, c0 = o.st->code.len;
                put_step(&o, st);
                const char *q = run.at[st->line - 1];
                size_t ql = run.len[st->line - 1];
                if (!memchr(q, '{', ql))
                    vsm_line_cache_set_linked(lc, q, ql, o.out->data + t0, o.out->len - t0, o.st->code.data + c0,
                                              o.st->code.len - c0);
                else
                    vsm_line_cache_set_tmpl(lc, q, ql);
            }
            vsm_program_free(&p);
        }
    }
#undef LINKED
    free(run.at);
    free(run.len);
    pt->st.nsteps = o.line;
    buf_free(&pt->text);
    free(pt->seg);
    pt->seg = NULL;
}

/* parts as they come; wait: block for more until the list is closed (a worker), or
 * return when none is ready (the emitting thread, which has more to emit or is done) */
static void take_parts(EmLinker *L, bool wait, bool checks, VLineCache *lc) {
    pthread_mutex_lock(&L->mu);
    for (;;) {
        while (wait && L->next == L->n && !L->closed) pthread_cond_wait(&L->cv, &L->mu);
        if (L->next == L->n) break;
        Part *pt = L->parts[L->next++];
        pthread_mutex_unlock(&L->mu);
        link_part(L->c, pt, &L->over, lc, checks);
        pthread_mutex_lock(&L->mu);
    }
    pthread_mutex_unlock(&L->mu);
}

static void *part_worker(void *arg) {
    VLineCache *lc = vsm_line_cache_new();
    take_parts(arg, true, false, lc);
    vsm_line_cache_free(lc);
    return NULL;
}

EmLinker *emit_linker_start(MNCompile *c) {
    EmLinker *L = xcalloc(1, sizeof *L);
    L->c = c;
    pthread_mutex_init(&L->mu, NULL);
    pthread_cond_init(&L->cv, NULL);
    atomic_init(&L->over, false);
    return L;
}

/* the workers start with the first part that is not the last: a graph whose code is
 * one part is linked by the emitting thread alone */
void emit_linker_add(EmLinker *L, MNBuf *text, size_t *seg, int lo, int hi) {
    if (!L->started && hi < L->c->g->nnodes) {
        L->started = true;
        for (int t = 1; t < mn_threads(L->c) && t <= 16; t++)
            if (!pthread_create(&L->tid[L->nworkers], NULL, part_worker, L)) L->nworkers++;
    }
    Part *pt = xcalloc(1, sizeof *pt);
    pt->text = *text;
    pt->seg = seg;
    pt->lo = lo;
    pt->hi = hi;
    pt->g = *L->c->g;
    *text = (MNBuf){0};
    pthread_mutex_lock(&L->mu);
    if (L->n == L->cap) L->parts = xrealloc(L->parts, sizeof(Part *) * (size_t)(L->cap = L->cap ? 2 * L->cap : 32));
    L->parts[L->n++] = pt;
    pthread_cond_signal(&L->cv);
    pthread_mutex_unlock(&L->mu);
}

static void linker_close(EmLinker *L) {
    pthread_mutex_lock(&L->mu);
    L->closed = true;
    pthread_cond_broadcast(&L->cv);
    pthread_mutex_unlock(&L->mu);
}

static void linker_free(EmLinker *L) {
    for (int k = 0; k < L->n; k++) {
        Part *pt = L->parts[k];
        buf_free(&pt->text);
        free(pt->seg);
        buf_free(&pt->out);
        buf_free(&pt->st.code);
        free(pt->st.relocs);
        free(pt);
    }
    free(L->parts);
    pthread_mutex_destroy(&L->mu);
    pthread_cond_destroy(&L->cv);
    free(L);
}

void emit_linker_abort(EmLinker *L) {
    atomic_store(&L->over, true);
    linker_close(L);
    for (int t = 0; t < L->nworkers; t++) pthread_join(L->tid[t], NULL);
    linker_free(L);
}

bool emit_linker_finish(EmLinker *L, const char *header, size_t hlen, EmLinked *out, EmLink *st) {
    memset(st, 0, sizeof *st);
    memset(out, 0, sizeof *out);
    linker_close(L);
    VLineCache *lc = vsm_line_cache_new();
    take_parts(L, false, true, lc);
    vsm_line_cache_free(lc);
    for (int t = 0; t < L->nworkers; t++) pthread_join(L->tid[t], NULL);
    /* the parts as they are, after a header each: joining them into one buffer was a
     * copy of the whole program into fresh pages, the write that follows reads them so */
    MNBuf h = {0};
    buf_append(&h, header, hlen);
    bufs_take(&out->text, &h);
    vsm_encode_begin(&h);
    bufs_take(&out->code, &h);
    int64_t line = 0;
    for (int k = 0; k < L->n; k++) {
        Part *pt = L->parts[k];
        bufs_take(&out->text, &pt->out);
        bufs_take(&out->code, &pt->st.code);
        for (int r = 0; r < pt->st.nrelocs; r++) pt->st.relocs[r].line += (uint32_t)line;
        take_relocs(&pt->st, out);
        line += pt->st.nsteps;
        st->steps_concat += pt->st.steps_concat;
    }
    st->nsteps = line;
    vsm_encode_end(&out->code.part[0], (uint32_t)line);
    bool ok = !atomic_load(&L->over);
    linker_free(L);
    return ok;
}

bool emit_link(MNCompile *c, const char *text, const size_t *seg, EmLinked *lp, EmLink *st) {
    const MNGraph *g = c->g;
    memset(st, 0, sizeof *st);
    memset(lp, 0, sizeof *lp);
    MNBuf whole = {0}, *out = &whole;
    if (c->opt->ival[MN_OPT_link] != MN_LINK_MERGE) die("emit_link is link=merge's; concat links through an EmLinker");
    buf_append(out, text, seg[0]);
    vsm_encode_begin(&st->code);
    Out o = {g, out, 0, st};
    Ctx cx = {&c->machine, {0}};
    const MNMachine *m = &c->machine;
    cx.size[K_LM0] = 2 * m->lm0_lw;
    cx.size[K_LM1] = 2 * m->lm1_lw;
    cx.size[K_GRF0] = 2 * m->grf0_lw;
    cx.size[K_GRF1] = 2 * m->grf1_lw;
    cx.size[K_L1BM] = m->l1bm_lw;
    cx.size[K_L2BM] = m->l2bm_lw;
    cx.size[K_DRAM] = m->dram_lw;
    cx.size[K_PDM] = m->pdm_lw;
    int n = g->nnodes;
    Segs sg = {c, text, seg, xcalloc((size_t)n + 1, sizeof(VProgram)), 0, vsm_line_cache_new()};
    int cost[VI_COUNT][8]; /* the machine's instruction costs: the LM distances are counted in its steps */
    vsm_cost_table(m, cost);
    int next = 0; /* segments before this one are written */
    bool masked = false; /* a mask statement stays in force past its segment: no footprint covers that */
    int i = next_live(&sg, 0, st);
    bool within = i != -2;
    while (i >= 0) {
        int j = next_live(&sg, i + 1, st);
        if (j == -2) {
            within = false;
            break;
        }
        for (int k = 0; k < sg.prog[i].nsteps; k++) masked |= sg.prog[i].steps[k].kind == ST_MASK;
        bool ok = !masked && j >= 0 && is_transfer(g->nodes[i]) != is_transfer(g->nodes[j]);
        if (ok) {
            Foot fi, fj;
            foot_of(&cx, &sg.prog[i], &fi);
            foot_of(&cx, &sg.prog[j], &fj);
            ok = independent(&fi, &fj);
            foot_free(&fi);
            foot_free(&fj);
        }
        if (!ok) {
            for (int k = next; k <= i; k++) put_node(&o, g->nodes[k], &sg.prog[k]);
            next = i + 1;
            i = j;
            continue;
        }
        int tr = is_transfer(g->nodes[i]) ? i : j, cp = tr == i ? j : i;
        Merge mg = {.c = &cx, .lastw = {{-1000, -1000}, {-1000, -1000}}, .last_mv = -1000000};
        mv_clock_init(&mg.clk, m);
        stream_of(&sg.prog[tr], cost, &mg.x[0]);
        stream_of(&sg.prog[cp], cost, &mg.x[1]);
        merge_streams(&mg);
        /* what lies before the pair, then the pair in one piece, then the (empty) nodes between */
        for (int k = next; k < i; k++) put_node(&o, g->nodes[k], &sg.prog[k]);
        buf_printf(out, "# merged: %s %s (%d steps) + %s %s (%d steps) -> %lld steps\n", g->nodes[tr]->op_type,
                   g->nodes[tr]->name, mg.x[0].n, g->nodes[cp]->op_type, g->nodes[cp]->name, mg.x[1].n,
                   (long long)mg.t);
        put_steps(&o, mg.out.steps, mg.out.nsteps);
        for (int k = i + 1; k < j; k++) put_node(&o, g->nodes[k], &sg.prog[k]);
        vsm_program_free(&sg.prog[i]);
        vsm_program_free(&sg.prog[j]);
        st->pairs++;
        st->steps_saved += mg.x[0].n + mg.x[1].n - mg.t;
        free(mg.x[0].u);
        free(mg.x[1].u);
        vsm_program_free(&mg.out);
        mv_clock_free(&mg.clk);
        next = j + 1;
        i = next_live(&sg, j + 1, st);
        within = i != -2;
    }
    for (int k = next; within && k < n; k++)
        put_node(&o, g->nodes[k], &sg.prog[k]); /* the empty segments after the last with code */
    for (int k = 0; k < n; k++) vsm_program_free(&sg.prog[k]);
    free(sg.prog);
    vsm_line_cache_free(sg.lines);
    st->nsteps = o.line;
    vsm_encode_end(&st->code, o.line);
    bufs_take(&lp->text, &whole);
    bufs_take(&lp->code, &st->code); /* one part each */
    take_relocs(st, lp);
    return within;
}
