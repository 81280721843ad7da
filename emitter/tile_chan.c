/* Code Emit: channels moved on tiles (the layout is planners/tile_plan.c's).
 *
 * A Concat, Split, Slice or Gather of constant indices along the channels of tiled
 * values keeps every pixel where it is: output channel j (PE j mod 4, slot j / 4 mod 2,
 * block j / 8 of its pixel's long words) comes from input channel s of the same pixel, on
 * the same MAB. Each input is first rotated over the MAB's 4 PEs as far as some channel
 * needs (msr, msl: PE p gets PE p + d's long words, into an LM0 scratch); the output's
 * long words are then put together word by word in GRF0, each word written on the one PE
 * that holds it (a mask from $subpeid), and stored.
 *
 * An output block that is one input block as it is (a Concat at a multiple of 8 channels)
 * is copied whole, 4 long words a step.
 *
 * Cost: per rotation, 2 steps per 4 long words of the input; per output long word, a
 * word copy a step for every 4 (channel slot, PE) pairs of equal source, about 2 steps;
 * a whole block a quarter step. */
#include "emit_impl.h"
#include "plan.h"
#include "ops.h"
#include <stdio.h>
#include <stdlib.h>

/* the tiling of node n (inputs and outputs laid out on it) into h */
static bool chan_tiles(const MNCompile *c, const MNNode *n, int64_t *h) {
    MNLayout out, outs[8], l;
    if (n->nout > 8 || !n->out[0] || !layout_get(n->out[0], &out) || !plan_tile_of(&out, &c->machine, h) ||
        !plan_tile_chan(n, &c->machine, h, outs))
        return false;
    for (int o = 0; o < n->nout; o++)
        if (!emit_layout_is(n->out[o], &outs[o])) return false;
    for (int k = 0; k < (n->op == OP_Concat ? n->nin : 1); k++)
        if (!plan_tile_layout_of(h, &c->machine, n->in[k]->type.dims, &l) || !emit_layout_is(n->in[k], &l))
            return false;
    return true;
}

bool emit_tile_chan_node(const MNCompile *c, const MNNode *n) {
    int64_t h[7];
    return chan_tiles(c, n, h);
}

static int64_t cblocks(const MNValue *v) { return (v->type.dims[1] + 7) / 8; }

/* does input k rotate by d for some channel? */
static bool rotates(const MNNode *n, int k, int d) {
    for (int o = 0; o < n->nout; o++)
        for (int64_t j = 0; j < n->out[o]->type.dims[1]; j++) {
            int kk;
            int64_t s;
            if (plan_tile_chan_source(n, o, j, &kk, &s) && kk == k && (s % 4 - j % 4 + 4) % 4 == d) return true;
        }
    return false;
}

/* the LM0 scratch of the rotated inputs: input k rotated by d at at[k][d] (-1: none) */
static int64_t rotations(const MNNode *n, int64_t px, int64_t at[][4]) {
    int64_t total = 0;
    for (int k = 0; k < (n->op == OP_Concat ? n->nin : 1); k++)
        for (int d = 0; d < 4; d++) {
            at[k][d] = -1;
            if (d && rotates(n, k, d)) at[k][d] = total, total += emit_round4(px * cblocks(n->in[k]));
        }
    return total;
}

const char *emit_tile_chan_why(const MNCompile *c, const MNNode *n, Walk *w) {
    int64_t h[7], at[64][4];
    for (int k = 0; k < (n->op == OP_Concat ? n->nin : 1); k++)
        if (!emit_in_lm(n->in[k])) return "not in LM";
    for (int o = 0; o < n->nout; o++)
        if (!emit_in_lm(n->out[o])) return "not in LM";
    if (n->op == OP_Concat && n->nin > 64) return "a Concat of more than 64 inputs";
    if (!chan_tiles(c, n, h)) die("node '%s' moves no tiled channels", n->name);
    int64_t need = rotations(n, n->in[0]->type.dims[0] * h[2] * h[5], at);
    return !need || emit_lm0_room(c, w, need, &w->scr[w->pos]) ? NULL : "no LM0 room for rotated channels";
}

void emit_tile_chan(Em *e, const MNNode *n, const Walk *wk) {
    int64_t h[7], at[64][4], scr = wk->scr[wk->pos];
    if (!chan_tiles(e->c, n, h)) die("node '%s' moves no tiled channels", n->name);
    int64_t px = n->in[0]->type.dims[0] * h[2] * h[5];
    rotations(n, px, at);
    int nin = n->op == OP_Concat ? n->nin : 1;
    for (int k = 0; k < nin; k++) /* the rotations, 64 long words at a time through GRF0 */
        for (int d = 1; d < 4; d++) {
            if (at[k][d] < 0) continue;
            int64_t total = px * cblocks(n->in[k]);
            for (int64_t q0 = 0; q0 < total; q0 += 64) {
                int64_t qn = total - q0 < 64 ? total - q0 : 64;
                char a[40];
                for (int64_t q = q0; q < q0 + qn; q += 4) {
                    buf_printf(e->b, "%s $%s%sv $lr%lldv\n", d == 3 ? "msl" : "msr", emit_bank_reg(n->in[k]),
                               emit_at(e, n->in[k], q, a), (long long)(2 * (q - q0)));
                    if (d == 2)
                        buf_printf(e->b, "nop\nmsr $lr%lldv $lr%lldv\nnop\n", (long long)(2 * (q - q0)),
                                   (long long)(2 * (q - q0)));
                }
                buf_printf(e->b, "nop\n");
                for (int64_t q = q0; q < q0 + qn; q += 4)
                    buf_printf(e->b, "lpassa $lr%lldv $lm%lldv\n", (long long)(2 * (q - q0)),
                               (long long)(2 * (scr + at[k][d] + q)));
                buf_printf(e->b, "nop/2\n");
            }
        }
    for (int p = 0; p < 4; p++) /* mask 1 + p: PE p of every MAB */
        buf_printf(e->b, "imm i\"%d\" $ls%d\n", p, 2 * (8 + p));
    buf_printf(e->b, "nop\n");
    for (int p = 0; p < 4; p++) buf_printf(e->b, "ixor $subpeid $ls%d $nowrite $omr%d\n", 2 * (8 + p), 1 + p);
    buf_printf(e->b, "nop\n");
    for (int o = 0; o < n->nout; o++) {
        const MNValue *y = n->out[o];
        int64_t CBo = cblocks(y), total = px * CBo, B = 64;
        int *bk = xmalloc(sizeof(int) * (size_t)CBo); /* an output block that is one input block: its input, or -1 */
        int64_t *bsb = xmalloc(sizeof(int64_t) * (size_t)CBo);
        for (int64_t jb = 0; jb < CBo; jb++) {
            bk[jb] = -2;
            for (int64_t t = 0; t < 8 && 8 * jb + t < y->type.dims[1] && bk[jb] != -1; t++) {
                int kk;
                int64_t sc;
                if (!plan_tile_chan_source(n, o, 8 * jb + t, &kk, &sc) || sc % 8 != t ||
                    (bk[jb] >= 0 && (bk[jb] != kk || bsb[jb] != sc / 8)))
                    bk[jb] = -1;
                else
                    bk[jb] = kk, bsb[jb] = sc / 8;
            }
            if (bk[jb] < 0) bk[jb] = -1;
        }
        for (int64_t q0 = 0; q0 < total; q0 += B) { /* output long words q0.. in GRF0 words 0.. */
            int64_t qn = total - q0 < B ? total - q0 : B;
            for (int64_t q = 0; q < qn; q += 4) buf_printf(e->b, "zero $lr%lldv\n", (long long)(2 * q));
            buf_printf(e->b, "nop\n");
            for (int k = 0; k < nin; k++) { /* whole blocks as they are, 4 long words a step */
                int64_t src[4], dst[4];
                int cnt = 0;
                for (int64_t q = q0; q <= q0 + qn; q++) {
                    if (q < q0 + qn && bk[q % CBo] == k) {
                        src[cnt] = q / CBo * cblocks(n->in[k]) + bsb[q % CBo];
                        dst[cnt++] = q - q0;
                    }
                    if (cnt == 4 || (q == q0 + qn && cnt)) {
                        buf_printf(e->b, "lpassa ");
                        emit_lw_list(e, n->in[k], src, cnt);
                        buf_printf(e->b, " $lr[");
                        for (int i = 0; i < 4; i++)
                            buf_printf(e->b, "%s%lld", i ? "," : "", (long long)(2 * dst[i < cnt ? i : cnt - 1]));
                        buf_printf(e->b, "]\n");
                        cnt = 0;
                    }
                }
            }
            for (int po = 0; po < 4; po++)
                for (int so = 0; so < 2; so++)
                    for (int k = 0; k < nin; k++)
                        for (int d = 0; d < 4; d++) { /* the words from input k rotated by d, 4 a step */
                            int64_t src[4], dst[4];
                            int cnt = 0;
                            for (int64_t q = q0; q <= q0 + qn; q++) {
                                if (q < q0 + qn) {
                                    int64_t j = 8 * (q % CBo) + 4 * so + po, sc;
                                    int kk;
                                    if (bk[q % CBo] >= 0 || j >= y->type.dims[1] ||
                                        !plan_tile_chan_source(n, o, j, &kk, &sc) || kk != k ||
                                        (sc % 4 - po + 4) % 4 != d)
                                        continue;
                                    int64_t lw = q / CBo * cblocks(n->in[k]) + sc / 8;
                                    src[cnt] = 2 * (d ? scr + at[k][d] + lw : lw) + sc / 4 % 2;
                                    dst[cnt++] = 2 * (q - q0) + so;
                                }
                                if (cnt == 4 || (q == q0 + qn && cnt)) {
                                    for (int i = cnt; i < 4; i++) src[i] = src[cnt - 1], dst[i] = dst[cnt - 1];
                                    buf_printf(e->b, "fpassa $%s", d ? "m" : (n->in[k]->loc == MN_LOC_LM1 ? "n" : "m"));
                                    if (!d) buf_printf(e->b, "{%d}", n->in[k]->id);
                                    buf_printf(e->b, "[%lld,%lld,%lld,%lld] $r[%lld,%lld,%lld,%lld]/$imr%d\n",
                                               (long long)src[0], (long long)src[1], (long long)src[2],
                                               (long long)src[3], (long long)dst[0], (long long)dst[1],
                                               (long long)dst[2], (long long)dst[3], 1 + po);
                                    cnt = 0;
                                }
                            }
                        }
            buf_printf(e->b, "nop\n");
            char a[40];
            for (int64_t q = 0; q < qn; q += 4)
                buf_printf(e->b, "lpassa $lr%lldv $%s%sv%s\n", (long long)(2 * q), emit_bank_reg(y),
                           emit_at(e, y, q0 + q, a), emit_tail_mask(qn, q));
            buf_printf(e->b, "nop/2\n");
        }
        free(bk);
        free(bsb);
    }
}
