/* The layout algebra: how a tensor maps onto the machine (PadLayout), and XLA-style
 * DRAM orderings. Used by the layout planner, the emitter and the host side of mnemu.
 *
 * PadLayout{(3,4)/((3:1), (1:1, 2_W:1, 4_PE:1); B@[MAB,L1B,L2B])}: the shape, then one
 * axis per tensor dimension made of subaxes `size[_LEVEL]:stride`. The index along a
 * dimension is split into mixed-radix digits, the first subaxis the most significant;
 * each digit times its stride adds to the coordinate of its level: the LM address (no
 * level), the PE / MAB / L1B / L2B id, the word slot W inside a long word, or the Time
 * slice. B@[...] lists the levels over which the value is replicated. */
#ifndef MN_LAYOUT_H
#define MN_LAYOUT_H
#include "buf.h"
#include "ir.h"
#include "machine.h"

typedef enum { LV_ADDR, LV_PE, LV_MAB, LV_L1B, LV_L2B, LV_W, LV_TIME, LV_COUNT } MNLevel;
#define LAYOUT_MAX_SUB 6
#define LAYOUT_MAX_RANK 8 /* tensors of higher rank get no layout */

typedef struct {
    int64_t size;
    int32_t stride;
    uint8_t level;
} MNSubaxis;

typedef struct MNLayout {
    int rank;
    uint8_t bcast; /* bit per MNLevel */
    uint8_t nsub[LAYOUT_MAX_RANK];
    int64_t shape[LAYOUT_MAX_RANK];
    MNSubaxis sub[LAYOUT_MAX_RANK][LAYOUT_MAX_SUB];
} MNLayout;

/* A position on the machine: level coordinates and the long-word address. */
typedef struct {
    int64_t c[LV_COUNT]; /* c[LV_ADDR] is the LM address in long words */
} MNPlace;

const char *layout_level_name(MNLevel l);
bool layout_parse(const char *s, MNLayout *l, char *err, size_t errlen);
void layout_print(const MNLayout *l, MNBuf *b);
/* v's layout is l: held as it is (a copy in arena a) and printed once for the dumps */
void layout_set(Arena *a, MNValue *v, const MNLayout *l);
/* v's layout into *l; false when it has none */
static inline bool layout_get(const MNValue *v, MNLayout *l) { return v->lay ? (*l = *v->lay, true) : false; }
/* is v cut over time (a Time subaxis: Time-Slice's slices of it lie one after another)? */
bool layout_timed(const MNValue *v);
/* do a and b have the same layout (both none counts as the same)? */
bool layout_equal(const MNValue *a, const MNValue *b);
int64_t layout_padded(const MNLayout *l, int axis);
/* extent of a level: largest coordinate + 1 (1 when unused) */
int64_t layout_extent(const MNLayout *l, MNLevel lv);
/* long words of LM per PE, rounded up to the alignment */
int64_t layout_num_lw(const MNLayout *l, int align_lw);
/* Checks the shape fits the padded shape, each level's subaxes are injective (no two
 * digits land on one coordinate), the levels fit the machine (each subaxis's size dividing
 * its level's count),
 * W fits the words per long word of the element size, and broadcast levels are unused. */
bool layout_valid(const MNLayout *l, const MNMachine *m, int elem_bytes, char *err, size_t errlen);
/* index -> place (every index, padding included, has one place, broadcast levels 0) */
void layout_place(const MNLayout *l, const int64_t *idx, MNPlace *p);
/* index i of dimension d's part of a place: layout_place is the sum of its dimensions' parts
 * (each digit adds digit * stride to its level), so a walk that changes one index changes
 * one part */
void layout_place_dim(const MNLayout *l, int d, int64_t i, MNPlace *p);
/* The places of a tensor's elements in row-major order, without a division each: the
 * subaxis digits advance like an odometer (the encoders of the app's images walk
 * millions of elements). place_walk_start gives element 0; each next, the following. */
typedef struct {
    const MNLayout *l;
    int64_t idx[LAYOUT_MAX_RANK];
    int64_t dig[LAYOUT_MAX_RANK][LAYOUT_MAX_SUB];
    MNPlace p;
} MNPlaceWalk;
void place_walk_start(MNPlaceWalk *w, const MNLayout *l);
void place_walk_carry(MNPlaceWalk *w); /* place_walk_next when a digit carries */
/* the common step inline (the least significant digit moves on without a carry): the
 * images' encoders take it for a million elements */
static inline void place_walk_next(MNPlaceWalk *w) {
    const MNLayout *l = w->l;
    int d = l->rank - 1, k = d >= 0 ? l->nsub[d] - 1 : -1;
    if (k >= 0 && w->idx[d] + 1 < l->shape[d] && w->dig[d][k] + 1 < l->sub[d][k].size) {
        w->idx[d]++;
        w->dig[d][k]++;
        w->p.c[l->sub[d][k].level] += l->sub[d][k].stride;
        return;
    }
    place_walk_carry(w);
}
/* place -> index; false when no index of the padded shape lands there. *padding tells
 * whether that index is outside the shape. Broadcast levels are ignored. */
bool layout_index(const MNLayout *l, const MNPlace *p, int64_t *idx, bool *padding);

/* Same placement: every element on the same PE, MAB, L1B, L2B, word slot and time
 * slice in both layouts (address strides may differ). */
bool layout_same_placement(const MNLayout *a, const MNLayout *b);
/* A Transpose's output laid out as its input: output axis d takes input axis perm[d]'s
 * subaxes, so every element keeps its place, address included (the LM image is the
 * same); perm NULL reverses the axes. False when the ranks differ or perm is not one. */
bool layout_permute(const MNLayout *in, const int64_t *perm, int rank, MNLayout *out);
/* A Reshape's output laid out as its input (row-major order kept): the input's digits, most
 * significant first, regrouped into the output's dimensions (a digit split in two where a
 * dimension's boundary falls inside it), so every element keeps its place and the LM image
 * is the same. False where an input dimension is padded, or a boundary falls inside a
 * digit that it does not divide. */
bool layout_reshape(const MNLayout *in, const MNType *out_type, MNLayout *out);
/* the same subaxes, addresses included (an emitter that computes addresses from a layout) */
bool layout_identical(const MNLayout *a, const MNLayout *b);

/* The DRAM image of a value in a layout: what MNCoreDownload reads and the host
 * writes. Long words ordered by (Time, L2B, L1B, MAB, PE, address), each level over its
 * extent, broadcast levels stored once; an element sits in word slot W of its long
 * word. layout_dram_lw is the image size in long words. */
int64_t layout_dram_lw(const MNLayout *l);
void layout_dram_pos(const MNLayout *l, const int64_t *idx, int64_t *lw, int *slot);

/* XLA shapes: f32[64,128]{1,0}, {0,1}, {1,0:T(8,128)}, with memory space S(n). */
typedef struct {
    int32_t elem; /* ONNX type */
    int rank;
    int64_t dims[MN_MAX_RANK];
    int m2m[MN_MAX_RANK]; /* minor_to_major */
    int ntile;
    int64_t tile[MN_MAX_RANK];
    int mem_space; /* -1: not given */
} MNXlaShape;

bool xla_parse(const char *s, MNXlaShape *x, char *err, size_t errlen);
void xla_print(const MNXlaShape *x, MNBuf *b);
/* elements including tile padding */
int64_t xla_num_elems(const MNXlaShape *x);
/* linear position of an index (0-based, in elements) */
int64_t xla_linear(const MNXlaShape *x, const int64_t *idx);
#endif
