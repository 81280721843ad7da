#include "isa.h"
#include <stdio.h>

const VInsnInfo vsm_insns[VI_COUNT] = {
#define INSN(name, unit, nsrc, precs, flags, steps) [VI_##name] = {#name, unit, nsrc, precs, flags, steps},
    VSM_INSNS(INSN)
#undef INSN
};

const char *const vsm_rrn_names[RRN_COUNT] = {[RRN_NONE] = "",
#define R(n) [RRN_##n] = #n,
                                              VSM_RRNS(R)
#undef R
};

const char *vsm_prec_letter(int prec) {
    switch (prec) {
    case P_D: return "d";
    case P_F: return "f";
    case P_H: return "h";
    case P_L: return "l";
    case P_I: return "i";
    case P_S: return "s";
    default: return "";
    }
}

const char *vsm_kind_name(int kind) {
    static const char *names[K_COUNT] = {
        [K_NONE] = "none",   [K_LM0] = "LM0",
        [K_LM1] = "LM1",     [K_GRF0] = "GRF0",
        [K_GRF1] = "GRF1",   [K_T] = "T",
        [K_OMR] = "OMR",     [K_NOWRITE] = "nowrite",
        [K_ALUF] = "aluf",   [K_MAUF] = "mauf",
        [K_LBF] = "lbf",     [K_MREADF] = "mreadf",
        [K_PEID] = "peid",   [K_SUBPEID] = "subpeid",
        [K_MABID] = "mabid", [K_L1BID] = "l1bid",
        [K_L2BID] = "l2bid", [K_MSB1] = "msb1",
        [K_MX] = "X",        [K_MY] = "Y",
        [K_L1BM] = "L1BM",   [K_L2BM] = "L2BM",
        [K_DRAM] = "DRAM",   [K_PDM] = "PDM",
        [K_DAR] = "DAR",
    };
    return kind >= 0 && kind < K_COUNT ? names[kind] : "?";
}

uint32_t vsm_op_addr(const VOperand *o, int c) {
    switch (o->amode) {
    case A_STRIDE: return o->addr + (uint32_t)(c * o->stride);
    case A_FLAT: return o->flat[c];
    default: return o->addr;
    }
}

bool vsm_is_pe_mem(int k) { return k == K_LM0 || k == K_LM1 || k == K_GRF0 || k == K_GRF1; }

static bool same_region(const VOperand *a, const VOperand *b) {
    if (a->amode != b->amode || a->width != b->width) return false;
    for (int c = 0; c < 4; c++)
        if (vsm_op_addr(a, c) != vsm_op_addr(b, c)) return false;
    return true;
}

#define FAIL(...) return snprintf(why, n, __VA_ARGS__), false
bool vsm_step_rules(const VStep *s, char *why, size_t n) {
    int used[U_UNIT_COUNT] = {0};
    bool has_nop = false, has_imm = false, touches_lm0 = false;
    for (int i = 0; i < s->nexpr; i++) {
        const VExpr *x = &s->e[i];
        const VInsnInfo *in = &vsm_insns[x->insn];
        VUnit u = in->unit;
        if (used[u]++) FAIL("two %s expressions in one step", in->name);
        has_nop |= x->insn == VI_nop;
        has_imm |= x->insn == VI_imm;
        for (int k = 0; k < x->nsrc; k++) touches_lm0 |= x->src[k].kind == K_LM0;
        for (int k = 0; k < x->ndst; k++) touches_lm0 |= x->dst[k].kind == K_LM0;
    }
    if (has_nop && s->nexpr > 1 + used[U_WAIT]) FAIL("nop shares its step only with wait");
    if (used[U_MV] && s->nexpr > 1) FAIL("an MV instruction is a line of its own");
    if (has_imm && touches_lm0) FAIL("a step with imm cannot access LM0");
    if (used[U_MAU] + used[U_MWRITE] + used[U_MREAD] > 2) FAIL("at most two matrix-unit expressions per step");
    /* each PE memory has one read port: every read of it in a step is the same region */
    for (int i = 0; i < s->nexpr; i++)
        for (int k = 0; k < s->e[i].nsrc; k++) {
            const VOperand *a = &s->e[i].src[k];
            if (!vsm_is_pe_mem(a->kind)) continue;
            for (int j = i; j < s->nexpr; j++)
                for (int l = j == i ? k + 1 : 0; l < s->e[j].nsrc; l++) {
                    const VOperand *o = &s->e[j].src[l];
                    if (o->kind == a->kind && (!same_region(o, a) || o->amode == A_TIND || a->amode == A_TIND))
                        FAIL("%s is read at two different addresses in one step (one read port)",
                             vsm_kind_name(a->kind));
                }
        }
    /* no two writes of one PE operand; LM read and write regions must coincide */
    for (int i = 0; i < s->nexpr; i++)
        for (int k = 0; k < s->e[i].ndst; k++) {
            const VOperand *d = &s->e[i].dst[k];
            if (d->kind == K_NOWRITE || d->kind == K_L1BM || d->kind == K_L2BM || d->kind == K_DRAM) continue;
            for (int j = 0; j < s->nexpr; j++)
                for (int l = 0; l < s->e[j].ndst; l++) {
                    if (i == j && k == l) continue;
                    const VOperand *o = &s->e[j].dst[l];
                    if (o->kind == d->kind &&
                        (d->kind == K_T || d->kind == K_MX || d->kind == K_MY ||
                         (d->kind == K_OMR && o->addr == d->addr) || (vsm_is_pe_mem(d->kind) && same_region(o, d))))
                        FAIL("%s written twice in one step", vsm_kind_name(d->kind));
                }
            if (d->kind == K_LM0 || d->kind == K_LM1)
                for (int j = 0; j < s->nexpr; j++)
                    for (int l = 0; l < s->e[j].nsrc; l++) {
                        const VOperand *o = &s->e[j].src[l];
                        if (o->kind == d->kind && !same_region(o, d))
                            FAIL("%s is read and written in one step at different addresses", vsm_kind_name(d->kind));
                    }
        }
    return true;
}
#undef FAIL
