/* Location planner, initial pass: what must live where before any layout exists.
 *
 * Graph inputs and outputs are exchanged with the host through DRAM (kind InOut);
 * parameters and folded constants are DRAM images written at load time, except
 * one-element constants, which the emitter can place in instructions as immediates
 * (kind IMM). Everything else is left to the location planner that runs after the
 * layout planner, when num_lw and the LM capacity are known. */
#include "plan.h"

bool plan_location_initial(MNCompile *c) {
    MNGraph *g = c->g;
    int dram = 0, imm = 0, io = 0;
    ir_recount_uses(g);
    for (int i = 0; i < g->nvalues; i++) {
        MNValue *v = g->values[i];
        if (!v->nuses && !v->producer) continue; /* an unused initializer */
        if (v->is_input || v->is_output) {
            v->loc_kind = MN_LOC_KIND_INOUT;
            v->loc = MN_LOC_DRAM;
            io++;
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
    mn_figure(c, "inout_values", io);
    mn_figure(c, "dram_parameters", dram);
    mn_figure(c, "immediates", imm);
    mn_log(c, 0, "locations: %d graph inputs/outputs, %d parameters in DRAM, %d immediates", io, dram, imm);
    return true;
}
