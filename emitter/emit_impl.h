/* Code Emit internals shared by the op emitters (emit.c: the driver and elementwise ops;
 * gather.c: gathers, their scratch and index tables; window.c: reductions, Softmax,
 * pools and products). */
#ifndef MN_EMIT_IMPL_H
#define MN_EMIT_IMPL_H
#include "compile.h"
#include "buf.h"
#include "layout.h"
#include "app.h"
#include "plan.h"

typedef struct {
    MNCompile *c;
    MNBuf *b;
    int tag;
    MNValue **tables; /* index tables: parameters the host writes */
    uint64_t *table_hash; /* tables[i]'s contents hashed, to share one among alike nodes */
    int ntables, ntables_cap, table_hash_cap;
    int64_t dram_top; /* DRAM above every planned value, for the tables */
    void *smap; /* the scratch map of the node being emitted, built once (emit.c) */
} Em;

/* What scratch users need to know while the nodes are walked in order: the LM values
 * resident at the current node (kept as the walk goes, not recounted per node), and
 * where each such node puts its scratch and index table. */
typedef struct {
    int *list, *at, n; /* resident LM value ids; at[v]: v's index in list, -1 */
    int pos;
    int64_t *scr, *tab;
    int *tbank;
    bool *win; /* an elementwise node emitted as a window op */
    int *trows; /* table rows LM holds at once (fewer than all: loaded window by window) */
    uint64_t *local; /* per scratch: bit k, source k is read only on the L1B and L2B it sits on */
    uint64_t *kforce; /* per scratch: bit k, constant source k carried by the table (no LM0 room for it) */
    bool *mat; /* a product on the MAB matrix unit (matmul.c) */
    bool *msplit; /* ... split over the L2Bs, its output's slices in the scratch after B's panel */
    bool *scopy; /* a Slice that copies long words (every element keeps its PE and slot) */
    bool *sten; /* a pool as a stencil (stencil.c) */
    bool *rows; /* Softmax or a normalisation along rows on one MAB each (rows.c) */
    bool *rmove; /* data movement of whole rows between L1Bs (rowmove.c) */
    bool *bmove; /* data movement of whole blocks of one MAB's addresses (blockmove.c) */
    bool *turn; /* a Transpose turning 8 x 8 blocks inside every MAB (turn.c) */
    bool *qmove; /* data movement of single addresses of a MAB between MABs (quadmove.c) */
    bool *embed; /* an embedding: rows of a table in DRAM through the DAR (embed.c) */
    bool *tred; /* a reduction folding over tree levels (treereduce.c) */
    bool *tile; /* a convolution on tiles (tile.c) */
    int *ord[2], nord[2]; /* per bank, the resident values with an address, by (address, end, id) */
    bool dry; /* no placing: each scratch's need is only noted (measure.c) */
    int64_t dry_need; /* ... the most LM0 long words one scratch and a table row took */
} Walk;

const char *emit_bank_reg(const MNValue *v);
bool emit_image_of(const MNCompile *c, const MNValue *v, AppLayoutImage *im, MNLayout *l);
/* transfer.c: is v a value of the graph (not a copy standing for a scratch or table rows)? */
bool emit_graph_value(const Em *e, const MNValue *v);
/* Time-Slice splits and concats: NULL when node n's pieces can move as transfers */
const char *emit_piece_why(const MNCompile *c, const MNNode *n);
/* gather.c: data-movement nodes as gathers. emit_moves_why also checks their
 * parameters are known; emit_gather_why only places scratch and table (a rename). */
const char *emit_moves_why(const MNCompile *c, const MNNode *n, Walk *w);
const char *emit_gather_why(const MNCompile *c, const MNNode *n, Walk *w);
bool emit_moves_data(const MNNode *n);
void emit_gather(Em *e, const MNNode *n, const Walk *w);
void emit_smap_cache_free(Em *e);
void emit_pieces(Em *e, const MNNode *n);
/* LM long word lw of v as an operand address: "{id}word" relative to a graph value (the
 * linker resolves it and records the relocation), absolute words for a copy that stands
 * for a scratch or table rows; buf holds 40 characters */
const char *emit_at(const Em *e, const MNValue *v, int64_t lw, char *buf);
const char *emit_tail_mask(int64_t num_lw, int64_t a);
int64_t emit_round4(int64_t x);
void emit_transfer(Em *e, const MNValue *dram, const MNValue *lmv, bool down);
const MNTensor *emit_konst_of(const MNValue *v);
/* constant integers of node n: input k's, else attribute attr's (before opset 10); -1
 * when computed at run time or more than cap, 0 when absent */
int emit_node_ints(const MNNode *n, int k, const char *attr, int64_t *v, int cap);
/* a Slice's axes, first input elements (ONNX's clamping) and steps; their count, -1 when
 * not known at compile time */
int emit_slice_params(const MNNode *n, int64_t *axis, int64_t *start, int64_t *step);
bool emit_in_lm(const MNValue *v);
/* what a value's per-element checks depend on (its layout, size, place and shape), for memo keys */
void emit_value_key(MNBuf *k, const MNValue *v);
/* node n as a memo key (memo.c): its op and attributes, every operand's emit_value_key and
 * whether it is a constant, with its bytes when the result reads them (bytes); false when
 * that cannot be spelt (an attribute the key has no form for, bytes of a constant over 4 KB) */
bool emit_node_key(MNBuf *k, const MNNode *n, bool bytes);

/* One table entry: an element of source src, or (src < 0) a constant. */
typedef struct {
    int src;
    int64_t sidx[LAYOUT_MAX_RANK];
    double k;
} EmEntry;
/* Every element of n's output 0 with its element of input 0 (source_index's), in
 * row-major order, to visit; false when one has none or visit says false */
bool emit_move_sources(const MNNode *n, bool (*visit)(void *ctx, const int64_t *oidx, const EmEntry *en), void *ctx);
/* the same with the element of whichever input holds it (false where one is a constant) */
bool emit_move_all_sources(const MNNode *n, bool (*visit)(void *ctx, const int64_t *oidx, const EmEntry *en),
                           void *ctx);
/* entry row of output element idx; false: none (the entry reads scratch word 0) */
typedef bool (*EmEntryFn)(const void *ctx, const int64_t *idx, int row, EmEntry *en);
/* an output that reads a scratch, through fn with ctx */
typedef struct {
    const MNValue *o;
    EmEntryFn fn;
    const void *ctx;
} EmUse;

/* A scratch: the long words of every source, from every PE of the L1B, broadcast into an
 * LM0 range of every PE (each source P * round4(num_lw) LW, one after another), then
 * pool_lw LW of constants; and rows rows of row_lw LW of index table (LM1 if it has
 * room; as many rows at a time as fit, at least one). The sources must be 32-bit LM
 * values, replicated on every L2B or read only where they sit: a source every output
 * element of the uses reads on its own L1B and L2B gives each L1B its own scratch (no
 * data crosses L1Bs); else one replicated on every L1B is taken from its L1BM, and one
 * spread over the L1Bs of an L2B goes through the L2BM. A 32-bit constant the tree
 * cannot take (or for which LM0 has no scratch room) takes no scratch: its values ride
 * in the index table (in LM0 then). Returns why not, or NULL with the ranges recorded in
 * the walk. */
const char *emit_scratch_plan(const MNCompile *c, Walk *w, const MNValue *const *src, int nsrc, int64_t pool_lw,
                              int64_t row_lw, int rows, const EmUse *u, int nu);
/* the sources into the scratch at scr; the constants' LW offset in it is returned */
int64_t emit_scratch_fill(Em *e, const MNValue *const *src, int nsrc, const Walk *w, int64_t scr);
/* the constants (one per LW, both words; as 32-bit integers for integer data) into the
 * scratch at LW offset at */
void emit_scratch_pool(Em *e, int64_t scr, int64_t at, const double *pool, int npool, bool integer);

/* The index table of node n's output o as a parameter (the host writes it): for every PE
 * and row, one LW per destination word of o (its low word is the scratch word). The
 * constants the entries ask for are collected in pool (at most pool_cap). The table holds
 * rows row0 .. row0 + rows - 1 of the node's. */
MNValue *emit_index_table(Em *e, const MNNode *n, const MNValue *o, const MNValue *const *src, int nsrc, const Walk *w,
                          int row0, int rows, EmEntryFn fn, const void *ctx, double *pool, int *npool, int pool_cap);
/* the table's per-PE long words for rows of output o */
int64_t emit_table_lw(const MNValue *o, int rows);
/* the index table into LM at the walk's place for it */
void emit_table_load(Em *e, MNValue *tv, const Walk *w);

/* stencil.c: is pool n laid out as a stencil (planners/stencil_plan.c)? Why it cannot be
 * emitted here (its scratch placed in the walk), and its code */
bool emit_stencil_node(const MNCompile *c, const MNNode *n);
const char *emit_stencil_why(const MNCompile *c, const MNNode *n, Walk *w);
void emit_stencil(Em *e, const MNNode *n, const Walk *wk);
/* rows.c: is n a Softmax, LogSoftmax or LayerNormalization whose rows each lie on one MAB?
 * Why it cannot be emitted; its code */
bool emit_rows_node(const MNCompile *c, const MNNode *n);
/* rowmove.c: does movement node n move whole rows between the L1Bs of an L2B (every
 * element on its MAB, PE and word)? If so the walk takes it (and its scratch), *why NULL
 * or why it cannot be emitted here. Its code */
bool emit_rowmove_take(const MNCompile *c, const MNNode *n, Walk *w, const char **why);
void emit_rowmove(Em *e, const MNNode *n, int64_t scr);
/* exchange.c: L2BM rows from a slot of one L2B to a slot of another through the PDM. Each
 * row added (receiving L2B, holding L2B, its slot there, the receiving slot) joins the run
 * before it where it continues it; emit_exchange moves every run (up, then down), waits
 * and empties the list. MV tags: the next one (waiting first where it is in flight), and
 * a wait for every one in flight. */
typedef struct {
    int64_t (*run)[5]; /* receiving L2B, holding L2B, first slot, first receiving slot, rows */
    int64_t n, cap;
} EmExchange;
void emit_exchange_add(EmExchange *x, int64_t l_to, int64_t l_from, int64_t from, int64_t to);
void emit_exchange(Em *e, EmExchange *x, bool *used);
int emit_mv_tag(Em *e, bool *used);
void emit_mv_wait_all(Em *e, bool *used);
/* blockmove.c: does movement node n move whole blocks of 16 addresses of one MAB (each
 * element on its PE, word and place in its block)? If so the walk takes it. Its code */
bool emit_blockmove_take(const MNCompile *c, const MNNode *n, Walk *w);
void emit_blockmove(Em *e, const MNNode *n);
/* write masks of the PEs of MAB mab: $omr1, and where a run of len addresses ends inside a
 * quad, $omr2 for that last quad (its cycles before the end); GRF1 long words 8-15 */
void emit_mab_masks(Em *e, int64_t mab, int64_t len);
/* turn.c: does Transpose n keep every element on its MAB and turn 8 x 8 blocks of its
 * addresses and slots (planners/layout_plan.c lays it out so)? If so the walk takes it. Its code */
bool emit_turn_take(const MNCompile *c, const MNNode *n, Walk *w);
void emit_turn(Em *e, const MNNode *n);
/* quadmove.c: does movement node n keep every element on its PE and word, each output address of a
 * MAB taking one input address of a MAB whole? If so the walk takes it. Its code */
bool emit_quadmove_take(const MNCompile *c, const MNNode *n, Walk *w);
void emit_quadmove(Em *e, const MNNode *n);
/* treereduce.c: is n a reduction whose output is alike over the tree levels it folds
 * (planners/layout_plan.c, reduced_layout)? Why it cannot be emitted here (its partial
 * results' scratch placed in the walk), and its code */
bool emit_treereduce_node(const MNCompile *c, const MNNode *n);
const char *emit_treereduce_why(const MNCompile *c, const MNNode *n, Walk *w);
void emit_treereduce(Em *e, const MNNode *n, int64_t scr);
/* embed.c: is n an embedding (a Gather of a table in DRAM, planners/embed_plan.c)? Why it
 * cannot be emitted here (its entries' scratch placed in the walk), and its code */
bool emit_embed_node(const MNNode *n);
const char *emit_embed_why(const MNCompile *c, const MNNode *n, Walk *w);
void emit_embed(Em *e, const MNNode *n, int64_t scr);
const char *emit_rows_why(const MNCompile *c, const MNNode *n, Walk *w);
void emit_rows(Em *e, const MNNode *n);
/* tile.c: is Conv n laid out on tiles (planners/tile_plan.c)? Why it cannot be emitted
 * here (its scratch placed in the walk), and its code */
bool emit_tile_node(const MNCompile *c, const MNNode *n);
const char *emit_tile_why(const MNCompile *c, const MNNode *n, Walk *w);
void emit_tile(Em *e, const MNNode *n, const Walk *wk);
/* tile.c: does v have exactly layout l (addresses too)? 4 long words of v (absolute LM0
 * ones when NULL) as an address list, the last repeated past n */
bool emit_layout_is(const MNValue *v, const MNLayout *l);
/* tile.c's moves, for the other tile files: n LM0 long words from src to dst on the PEs d
 * row places away; this PE's row (or column) place into GRF0 word 504, and how many there
 * are; mask 1 where that place is not a multiple of g */
void emit_tile_shift_rows(Em *e, const MNTile *t, int64_t src, int64_t dst, int64_t n, int64_t d);
void emit_tile_shift_cols(Em *e, int64_t src, int64_t dst, int64_t n, int64_t d);
int64_t emit_tile_place(Em *e, const MNTile *t, bool rows);
void emit_tile_off_grid(Em *e, int64_t g);
/* n long words from value a's long word ao (LM0 long word ao when a is NULL) to b's bo,
 * through GRF0, where mask (or everywhere) */
void emit_tile_copy(Em *e, const MNValue *a, int64_t ao, const MNValue *b, int64_t bo, int64_t n, const char *mask);
/* tile_retile.c: a tiled value onto a coarser or finer grid of row tiles */
bool emit_tile_retile_node(const MNCompile *c, const MNNode *n);
const char *emit_tile_retile_why(const MNCompile *c, const MNNode *n, Walk *w);
void emit_tile_retile(Em *e, const MNNode *n, const Walk *wk);
void emit_lw_list(Em *e, const MNValue *v, const int64_t *lw, int n);
/* tile_chan.c: channels of tiled values moved where their pixels are (Concat, Split,
 * Slice, Gather) */
bool emit_tile_chan_node(const MNCompile *c, const MNNode *n);
const char *emit_tile_chan_why(const MNCompile *c, const MNNode *n, Walk *w);
void emit_tile_chan(Em *e, const MNNode *n, const Walk *wk);
/* window.c: reductions, Softmax, pools and products computed from a scratch */
/* matmul.c: NULL when MatMul or Gemm node n runs on the matrix unit as laid out, else why not */
const char *emit_matrix_why(const MNCompile *c, const MNNode *n, Walk *w);
void emit_matrix(Em *e, const MNNode *n, const Walk *w);
/* gather.c: an LM0 range of need long words free while the walk's node runs (the
 * schedule made room for it: MNCodeModel.scratch_needs) into *at; a dry walk only notes
 * the need. False when there is none. */
bool emit_lm0_room(const MNCompile *c, Walk *w, int64_t need, int64_t *at);
/* transfer.c: n long words (a multiple of 16) of DRAM value dv's image, one held once per
 * group for every MAB (AppLayoutImage.mab), from its LM long word lw0 on into LM0 long
 * word at of every PE; with delta > 0, L2B l's from lw0 + l delta on (its own columns) */
void emit_stream_in(Em *e, const MNValue *dv, int64_t lw0, int64_t n, int64_t at, int64_t delta);
/* ... its parts: the largest chunk one MV moves, a chunk's MVs into L2BM buffer buf (0 or
 * 1; the first of their consecutive tags), and the wait for them and the chunk's way down
 * the tree into LM0 at */
int64_t emit_stream_chunk(const MNMachine *m);
int emit_stream_issue(Em *e, const MNValue *dv, int64_t lw0, int64_t n, int buf, int64_t delta);
void emit_stream_land(Em *e, int tag, int64_t n, int buf, int64_t at, int64_t delta);
/* allgather.c: whether the machine takes an all-gather over its L2Bs, and the all-gather of
 * n long words (a multiple of 4) of an LM0 scratch at src, alike in address on every L2B:
 * L2B l's long word i to y's long word dst[l n + i] on every L2B (4 consecutive i to 4
 * consecutive long words) */
bool emit_l2b_gather_fits(const MNMachine *m);
void emit_l2b_gather(Em *e, int64_t src, int64_t n, const MNValue *y, const int64_t *dst);
/* walk.c: the residency walk */
void emit_walk_init(Walk *w, const MNGraph *g);
void emit_walk_free(Walk *w);
void emit_walk_add(const MNGraph *g, Walk *w, const MNValue *v); /* v is resident: in its bank's address order */
void emit_walk_before(const MNGraph *g, Walk *w, const MNNode *n); /* n's outputs take LM */
void emit_walk_after(const MNGraph *g, Walk *w, const MNNode *n); /* what n forgets or overwrites leaves */
/* emit.c: why node n cannot be emitted at the walk's position (NULL: it can); n's code
 * at the walk's position (emit_why_not accepted it there) */
const char *emit_why_not(const MNCompile *c, const MNNode *n, Walk *w);
void emit_node(Em *e, const MNNode *n, const Walk *wk);
/* measure.c: false with the reason when the emitted code cannot run on machine m at all */
bool emit_machine_ok(const MNMachine *m, char *why, size_t n);
/* elementwise.c: the vector path */
const char *emit_ew_why(const MNCompile *c, const MNNode *n, Walk *w);
/* A packed row of D elements, 8 a long word over W and the PEs, whose last long word holds
 * rem = D % 8 of them: emit_pad_setup sets mask 3 to that long word's padding lanes on
 * every PE and GRF1 words EM_PAD_* to -inf, +inf and 0; emit_pad_lw writes one of them
 * (GRF1 word k) into the padding lanes of v's long word lw (rows.c). */
enum { EM_PAD_NEG = 44, EM_PAD_POS = 46, EM_PAD_ZERO = 48 };
void emit_pad_setup(Em *e, int rem);
void emit_pad_lw(Em *e, const MNValue *v, int64_t lw, int k);
/* a Cast between float widths (cast.c) */
bool emit_cast_node(const MNNode *n);
const char *emit_cast_why(const MNCompile *c, const MNNode *n, Walk *w);
void emit_cast(Em *e, const MNNode *n);
bool emit_is_copy(const MNCompile *c, const MNNode *n);
bool emit_slice_copy(const MNCompile *c, const MNNode *n);
bool emit_transpose_copy(const MNCompile *c, const MNNode *n);
bool emit_concat_copy(const MNCompile *c, const MNNode *n); /* inputs lined up: long words copied */
void emit_concat(Em *e, const MNNode *n);
const char *emit_rename_why(const MNCompile *c, const MNNode *n, Walk *w);
void emit_elementwise(Em *e, const MNNode *n);
void emit_bank_move(Em *e, const MNNode *n);
bool window_op(const MNNode *n);
bool window_elementwise(const MNNode *n); /* also a window op where the vector path cannot */
const char *window_why(MNCompile *c, MNNode *n, Walk *w);
void window_emit(Em *e, MNNode *n, const Walk *w);
#endif
