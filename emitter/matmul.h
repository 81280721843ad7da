/* Code Emit: MatMul and Gemm on the MAB matrix unit (matmul.c), and the plan of a product
 * other emitters hand it (tile.c's convolutions). */
#ifndef MN_MATMUL_H
#define MN_MATMUL_H
#include "emit_impl.h"

typedef struct {
    const MNValue *a, *b, *y, *c; /* c: a Gemm's bias over N (beta 1), or NULL */
    int64_t K, N, kb, nb, rows;
    bool transb;
    int64_t nslot;
    int64_t *aA; /* [slot * kb + j]: A's long word of K block j for the slot's rows */
    int64_t *aY; /* [slot * nb + j] */
    int64_t *aB; /* [t * kb N + j * N + n]: B's long word of K block j, column n, in B table t */
    int64_t nbt; /* B tables: one per batch of a batched B (0 or 1: one B for every row) */
    int64_t *sB; /* [slot]: the B table of the slot's rows (NULL: table 0); slots of one table adjoin */
    int64_t *aC; /* [j]: the bias's long word of N block j */
    bool stream; /* B in DRAM, brought in panel by panel */
    bool acc; /* streamed: y holds the sums of K blocks before these (a convolution's earlier channels) */
    int64_t split; /* streamed, over the L2Bs: L2B l computes N blocks l nb / split.. into an LM0 scratch (0: not) */
    int64_t sdelta; /* ... B's long words from one L2B's columns to the next's */
    bool grf1_free; /* GRF1 holds nothing the caller needs: the bias may be staged there (matmul.c) */
} MatPlan;

/* A streamed B's panel: N blocks j0..j1-1, K blocks k0..k1-1, in B's long words lo..hi-1 */
typedef struct {
    int64_t j0, j1, k0, k1, lo, hi;
} Panel;

void emit_matrix_plan_free(MatPlan *p);
/* the LM0 long words the largest panel of a streamed B takes (-1: no panel fits) */
int64_t emit_matrix_panel_need(const MNMachine *m, const MatPlan *p);
/* the product of plan p with B streamed through the LM0 scratch at scr; a NULL p->a reads
 * A from absolute LM0 long words (a scratch) */
void emit_matrix_streamed(Em *e, const MatPlan *p, int64_t scr);
#endif
