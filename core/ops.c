#include "ops.h"
#include <string.h>

enum {
    EW = MN_EW,
    INPLACE = MN_INPLACE,
    PREC = MN_PREC,
    WIN = MN_WIN,
    WEW = MN_WEW,
    GATHER = MN_GATHER,
    REDUCE = MN_REDUCE,
    CHAN = MN_CHAN,
    VIEW = MN_VIEW
}; /* the rows' names */

const MNOpInfo mn_ops[OP_COUNT] = {[OP_UNSUPPORTED] = {"<unsupported>", 0, 0, 0, NULL},
#define OP(name, since, max, infer, fold, props, types) [OP_##name] = {#name, since, max, props, types},
                                   MN_OPS(OP)
#undef OP
};

int ops_lookup(const char *op_type) {
    /* a linear scan over ~120 names is cheaper than it looks next to protobuf decoding,
     * but a 100k-node model calls this 100k times: keep a sorted index */
    static int sorted[OP_COUNT];
    static int nsorted;
    if (!nsorted) {
        for (int i = 1; i < OP_COUNT; i++) {
            int j = nsorted++;
            while (j > 0 && strcmp(mn_ops[sorted[j - 1]].name, mn_ops[i].name) > 0) {
                sorted[j] = sorted[j - 1];
                j--;
            }
            sorted[j] = i;
        }
    }
    int lo = 0, hi = nsorted - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2, c = strcmp(mn_ops[sorted[mid]].name, op_type);
        if (!c) return sorted[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return OP_UNSUPPORTED;
}
