/* VSM's timing model on its own: the cycles a program takes, without running it.
 *
 * VSM has no branches and every instruction's cost is fixed, so the cycle count does not
 * depend on the data: it is the step costs (the instruction table, raised by the machine
 * description) plus the stalls of MV issue spacing and of waits for MV completion, the
 * accounting run_step (emu/emu.c) does while it executes, with the MVs timed on the same
 * port clock (mv.h). Node Simulation times emitted code with it, and the linker
 * weighs its merges with the cost table. */
#include "timing.h"
#include "mv.h"
#include "vsm.h"
#include "diag.h"
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void vsm_cost_table(const MNMachine *m, int tab[VI_COUNT][8]) {
    for (int i = 0; i < VI_COUNT; i++)
        for (int b = 0; b < 8; b++) {
            int st = vsm_insns[i].steps;
            char name[40];
            snprintf(name, sizeof name, "%s%s", vsm_prec_letter(1 << b), vsm_insns[i].name);
            for (int k = 0; k < m->nsteps_override; k++)
                if (!strcmp(m->steps_override[k].name, name) && m->steps_override[k].steps > st)
                    st = m->steps_override[k].steps;
            tab[i][b] = st;
        }
}

/* a run's clock: the step costs, the MV issue spacing and each tag's completion */
typedef struct {
    const MNMachine *m;
    int cost[VI_COUNT][8];
    MvClock clk;
    int64_t step, cycle, last_mv, done[256];
} Clock;

static void clock_init(Clock *t, const MNMachine *m) {
    memset(t, 0, sizeof *t);
    t->m = m;
    vsm_cost_table(m, t->cost);
    mv_clock_init(&t->clk, m);
    t->last_mv = INT64_MIN / 2;
}

/* step s, its repeats included; false when a bad MV line stops the run there (its cycles
 * up to it are what it took) */
static bool clock_step(Clock *t, const VStep *s) {
    const MNMachine *m = t->m;
    if (s->kind != ST_STEP) return true;
    for (uint32_t r = 0; r < s->repeat; r++) {
        int steps = 1;
        int64_t wait_until = -1;
        for (int k = 0; k < s->nexpr; k++) {
            const VExpr *x = &s->e[k];
            int c = t->cost[x->insn][x->prec == P_NONE ? 0 : __builtin_ctz(x->prec)];
            if (c > steps) steps = c;
            VUnit u = vsm_insns[x->insn].unit;
            if (u == U_WAIT && t->done[x->tag] > wait_until) wait_until = t->done[x->tag];
            if (u == U_MV) {
                int64_t gap = t->step - t->last_mv;
                if (gap < m->mv_issue_steps) t->cycle += (m->mv_issue_steps - gap) * m->cycles_per_step;
                t->last_mv = t->step;
                MvShape sh;
                char why[240];
                if (!mv_shape(x, m, &sh, why, sizeof why)) return false;
                int64_t d = mv_clock_issue(&t->clk, m, x, &sh, t->cycle);
                if (x->tag) t->done[x->tag] = d;
            }
        }
        t->cycle += (int64_t)steps * m->cycles_per_step;
        if (wait_until > t->cycle) t->cycle = wait_until;
        t->step += steps;
    }
    return true;
}

/* the steps one repeat of s takes when it has no MV and no wait (so that its time is its
 * cost alone), else -1 */
static int plain_steps(const Clock *t, const VStep *s) {
    int steps = 1;
    for (int k = 0; k < s->nexpr; k++) {
        const VExpr *x = &s->e[k];
        VUnit u = vsm_insns[x->insn].unit;
        if (u == U_MV || u == U_WAIT) return -1;
        int c = t->cost[x->insn][x->prec == P_NONE ? 0 : __builtin_ctz(x->prec)];
        if (c > steps) steps = c;
    }
    return steps;
}

int64_t vsm_program_cycles(const VProgram *p, const MNMachine *m) {
    Clock t;
    clock_init(&t, m);
    for (int i = 0; i < p->nsteps && clock_step(&t, &p->steps[i]); i++) {}
    mv_clock_free(&t.clk);
    return t.cycle;
}

/* ---- the same count from text ----
 * A line's time depends on its numbers only through its MVs (their shapes) and waits
 * (their tags): the cost of any other step is its instructions' and precisions', which the
 * first token of each of its expressions spells (a nop's repeat too: nop/N). So a line is
 * looked up by its shape, the line with every other run of digits as one '#', and parsed
 * only the first time a shape is seen, or when it moves data or waits. Node code repeats a
 * few shapes thousands of times with other addresses. */
enum { SH_SKIP = 1, SH_PLAIN, SH_PARSE };
typedef struct {
    uint64_t h;
    uint32_t key, klen; /* in ShapeTab.bytes */
    uint32_t repeat;
    int kind, steps;
} Shape;
typedef struct {
    Shape *e;
    uint32_t cap, n;
    MNBuf bytes;
} ShapeTab;

/* line's shape into key (see above) */
static void shape_key(const char *line, size_t len, MNBuf *key) {
    key->len = 0;
    buf_reserve(key, len + 1);
    char *k = key->data;
    size_t n = 0;
    bool first = true, in_first = false; /* first: the next token is an expression's first */
    for (size_t i = 0; i < len; i++) {
        char ch = line[i];
        if (ch == ';')
            first = true, in_first = false;
        else if (ch == ' ' || ch == '\t') {
            if (in_first) first = in_first = false;
        } else if (first)
            in_first = true;
        if (!in_first && ch >= '0' && ch <= '9') {
            if (!n || k[n - 1] != '#') k[n++] = '#';
            continue;
        }
        k[n++] = ch;
    }
    key->len = n;
}

static Shape *shape_slot(ShapeTab *st, const char *k, size_t kn, uint64_t h) {
    for (uint32_t i = (uint32_t)h & (st->cap - 1);; i = (i + 1) & (st->cap - 1)) {
        Shape *e = &st->e[i];
        if (!e->kind || (e->h == h && e->klen == kn && !memcmp(st->bytes.data + e->key, k, kn))) return e;
    }
}

static Shape *shape_add(ShapeTab *st, const MNBuf *key, uint64_t h) {
    if (2 * (st->n + 1) > st->cap) {
        ShapeTab big = {xcalloc(st->cap ? 2 * st->cap : 256, sizeof(Shape)), st->cap ? 2 * st->cap : 256, st->n, {0}};
        big.bytes = st->bytes;
        for (uint32_t i = 0; i < st->cap; i++)
            if (st->e[i].kind) *shape_slot(&big, st->bytes.data + st->e[i].key, st->e[i].klen, st->e[i].h) = st->e[i];
        free(st->e);
        *st = big;
    }
    Shape *e = shape_slot(st, key->data, key->len, h);
    e->h = h;
    e->key = (uint32_t)st->bytes.len;
    e->klen = (uint32_t)key->len;
    buf_append(&st->bytes, key->data, key->len);
    st->n++;
    return e;
}

int64_t vsm_text_cycles(const char *name, const char *text, size_t len, bool relative, const MNMachine *m, char *err,
                        size_t errlen) {
    Clock t;
    clock_init(&t, m);
    ShapeTab st = {0};
    MNBuf key = {0};
    bool ok = true, run = true;
    int lineno = 0;
    for (const char *line = text, *end = text + len; ok && run && line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        size_t n = nl ? (size_t)(nl - line) : (size_t)(end - line);
        const char *at = line;
        line = nl ? nl + 1 : end;
        lineno++;
        shape_key(at, n, &key);
        uint64_t h = buf_hash(key.data, key.len);
        Shape *sh = st.cap ? shape_slot(&st, key.data, key.len, h) : NULL;
        if (sh && sh->kind == SH_SKIP) continue;
        if (sh && sh->kind == SH_PLAIN) {
            t.cycle += (int64_t)sh->repeat * sh->steps * m->cycles_per_step;
            t.step += (int64_t)sh->repeat * sh->steps;
            continue;
        }
        VProgram p = {0};
        bool quit;
        if (!(ok = vsm_parse_line(name, lineno, at, n, relative, &p, &quit, err, errlen))) break;
        if (!sh || !sh->kind) {
            int kind = quit                                      ? 0
                       : !p.nsteps || p.steps[0].kind != ST_STEP ? SH_SKIP
                       : plain_steps(&t, &p.steps[0]) >= 0       ? SH_PLAIN
                                                                 : SH_PARSE;
            if (kind) {
                Shape *e = shape_add(&st, &key, h);
                e->kind = kind;
                e->steps = kind == SH_PLAIN ? plain_steps(&t, &p.steps[0]) : 0;
                e->repeat = kind == SH_PLAIN ? p.steps[0].repeat : 0;
            }
        }
        run = !quit && (!p.nsteps || clock_step(&t, &p.steps[0]));
        vsm_program_free(&p);
    }
    free(st.e);
    buf_free(&st.bytes);
    buf_free(&key);
    mv_clock_free(&t.clk);
    return ok ? t.cycle : -1;
}
