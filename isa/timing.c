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
#include <limits.h>
#include <math.h>
#include <stdio.h>
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

int64_t vsm_program_cycles(const VProgram *p, const MNMachine *m) {
    int cost[VI_COUNT][8];
    vsm_cost_table(m, cost);
    MvClock clk;
    mv_clock_init(&clk, m);
    int64_t step = 0, cycle = 0, last_mv = INT64_MIN / 2, done[256] = {0};
    for (int i = 0; i < p->nsteps; i++) {
        const VStep *s = &p->steps[i];
        if (s->kind != ST_STEP) continue;
        for (uint32_t r = 0; r < s->repeat; r++) {
            int steps = 1;
            int64_t wait_until = -1;
            for (int k = 0; k < s->nexpr; k++) {
                const VExpr *x = &s->e[k];
                int c = cost[x->insn][x->prec == P_NONE ? 0 : __builtin_ctz(x->prec)];
                if (c > steps) steps = c;
                VUnit u = vsm_insns[x->insn].unit;
                if (u == U_WAIT && done[x->tag] > wait_until) wait_until = done[x->tag];
                if (u == U_MV) {
                    int64_t gap = step - last_mv;
                    if (gap < m->mv_issue_steps) cycle += (m->mv_issue_steps - gap) * m->cycles_per_step;
                    last_mv = step;
                    MvShape sh;
                    char why[240];
                    /* a bad line stops a run there; its cycles up to it are what it took */
                    if (!mv_shape(x, m, &sh, why, sizeof why)) goto out;
                    int64_t d = mv_clock_issue(&clk, m, x, &sh, cycle);
                    if (x->tag) done[x->tag] = d;
                }
            }
            cycle += (int64_t)steps * m->cycles_per_step;
            if (wait_until > cycle) cycle = wait_until;
            step += steps;
        }
    }
out:
    mv_clock_free(&clk);
    return cycle;
}
