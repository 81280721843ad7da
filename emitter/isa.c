#include "isa.h"

const VInsnInfo vsm_insns[VI_COUNT] = {
#define INSN(name, unit, nsrc, precs, flags, steps) [VI_##name] = {#name, unit, nsrc, precs, flags, steps},
    VSM_INSNS(INSN)
#undef INSN
};

const char *const vsm_rrn_names[RRN_COUNT] = {
    [RRN_NONE] = "",
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
        [K_NONE] = "none", [K_LM0] = "LM0", [K_LM1] = "LM1", [K_GRF0] = "GRF0", [K_GRF1] = "GRF1", [K_T] = "T",
        [K_OMR] = "OMR", [K_NOWRITE] = "nowrite", [K_ALUF] = "aluf", [K_MAUF] = "mauf", [K_LBF] = "lbf",
        [K_MREADF] = "mreadf", [K_PEID] = "peid", [K_SUBPEID] = "subpeid", [K_MABID] = "mabid", [K_L1BID] = "l1bid",
        [K_L2BID] = "l2bid", [K_MSB1] = "msb1", [K_MX] = "X", [K_MY] = "Y", [K_L1BM] = "L1BM", [K_L2BM] = "L2BM",
        [K_DRAM] = "DRAM",
    };
    return kind >= 0 && kind < K_COUNT ? names[kind] : "?";
}
