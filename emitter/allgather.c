/* Code Emit: an all-gather over the L2Bs of what each computed apart.
 *
 * A product whose rows are alike on every L2B gives each L2B l only its own slice of the
 * output's columns (matmul.c): 1 / S of the matrix unit's work on each, where every L2B
 * would otherwise compute all of it. The instruction stream is one, so each L2B leaves its
 * slice in an LM0 scratch at the same addresses; every slice must then reach, on every L2B,
 * the output's addresses of that slice. Tree transfers are alike on every L2B and only MVs
 * name one, so a chunk of the scratch at a time:
 *   up     every PE's chunk into its L1BM (l1bmd combine) and on into its L2BM (l2bmd
 *          combine): each L2BM then holds its L2B's chunk of all its PEs;
 *   across each L2BM's into its group's PDM (mvp within the group), then each group's PDM
 *          to every L2BM at once (mvb), one slice per group a round: the groups' broadcasts
 *          take disjoint links, so they run together, each into an L2BM buffer of its own;
 *   down   each buffer through the L1BMs into every PE (l2bmd, l1bmd distribute), at the
 *          output addresses of the buffer's slice.
 * Up and down use the same L1BM and L2BM offsets, so each PE gets its own position's long
 * words from each L2B. Cost a chunk: on mncore2 the broadcasts of a round are bound by each
 * link between groups (8 LW a cycle) and each L2BM's MV port, about 1 / 8 of a cycle per long
 * word that every L2BM receives; the tree moves are a few hundred steps. */
#include "emit_impl.h"

/* the chunk's long words per PE: G L2BM buffers of J P c long words, an L1BM of P c */
static int64_t chunk_lw(const MNMachine *m) {
    int64_t P = (int64_t)m->mab_per_l1b * m->pe_per_mab, J = m->l1b_per_l2b, G = m->groups;
    int64_t c = m->l2bm_lw / (G * J * P), c1 = m->l1bm_lw / P;
    if (c1 < c) c = c1;
    if (c > 32) c = 32;
    return c / 4 * 4;
}

bool emit_l2b_gather_fits(const MNMachine *m) {
    return m->n_l2b > 1 && m->n_l2b <= 64 && chunk_lw(m) >= 4 &&
           (int64_t)m->l2b_per_group * m->l1b_per_l2b * m->mab_per_l1b * m->pe_per_mab * chunk_lw(m) <= m->pdm_lw;
}

void emit_l2b_gather(Em *e, int64_t src, int64_t n, const MNValue *y, const int64_t *dst) {
    const MNMachine *m = &e->c->machine;
    int64_t P = (int64_t)m->mab_per_l1b * m->pe_per_mab, J = m->l1b_per_l2b, G = m->groups, L = m->l2b_per_group;
    int64_t C = chunk_lw(m), S = m->n_l2b;
    if (!emit_l2b_gather_fits(m) || n % 4) die("an L2B gather of %lld long words on this machine", (long long)n);
    int tags[64];
    char a[40];
    for (int64_t k0 = 0; k0 < n; k0 += C) {
        int64_t c = n - k0 < C ? n - k0 : C, U = J * P * c; /* U: an L2BM's chunk */
        for (int64_t t = 0; t < c / 4; t++)
            buf_printf(e->b, "l1bmd $lm%lldv $lb%lld\n", (long long)(2 * (src + k0 + 4 * t)), (long long)(t * 4 * P));
        buf_printf(e->b, "nop/3\n");
        for (int64_t s = 0; s < P * c / 32; s++)
            buf_printf(e->b, "l2bmd $lb%lld $lc%lld\n", (long long)(32 * s), (long long)(32 * J * s));
        buf_printf(e->b, "nop/4\n");
        for (int64_t l = 0; l < S; l++) { /* L2B l's chunk to PDM l % L U of its group */
            tags[l] = e->tag = e->tag % 63 + 1;
            buf_printf(e->b, "mvp/n%lldi%02x $lc0@%lld.%lld $p%lld@%lld\n", (long long)U, tags[l], (long long)(l / L),
                       (long long)(l % L), (long long)(l % L * U), (long long)(l / L));
        }
        for (int64_t l = 0; l < S; l++) buf_printf(e->b, "nop; wait i%02x\n", tags[l]);
        for (int64_t r = 0; r < L; r++) { /* a round: slice g L + r of every group g */
            for (int64_t g = 0; g < G; g++) {
                tags[g] = e->tag = e->tag % 63 + 1;
                buf_printf(e->b, "mvb/n%lldi%02x $p%lld@%lld $lc%lld\n", (long long)U, tags[g], (long long)(r * U),
                           (long long)g, (long long)(g * U));
            }
            for (int64_t g = 0; g < G; g++) {
                int64_t l = g * L + r;
                buf_printf(e->b, "nop; wait i%02x\n", tags[g]);
                for (int64_t s = 0; s < P * c / 32; s++)
                    buf_printf(e->b, "l2bmd $lc%lld $lb%lld\n", (long long)(g * U + 32 * J * s), (long long)(32 * s));
                buf_printf(e->b, "nop/3\n");
                for (int64_t t = 0; t < c / 4; t++)
                    buf_printf(e->b, "l1bmd $lb%lld $%s%sv\n", (long long)(t * 4 * P), emit_bank_reg(y),
                               emit_at(e, y, dst[l * n + k0 + 4 * t], a));
                buf_printf(e->b, "nop/3\n");
            }
        }
    }
}
