/* The graph planners: each a pass over the MNGraph (driver/passes.c runs them). */
#ifndef MN_PLAN_H
#define MN_PLAN_H
#include "resize.h"
#include "compile.h"
#include "layout.h"

bool plan_dtype(MNCompile *c);
bool plan_cse(MNCompile *c); /* cse.c */
bool plan_bn_folding(MNCompile *c); /* bn_fold.c */
bool plan_gemm_fusion(MNCompile *c); /* gemm_fuse.c */
bool plan_noop_lowering(MNCompile *c); /* noop_lower.c */
bool plan_pad_folding(MNCompile *c); /* pad_fold.c */
bool plan_shuffle_lowering(MNCompile *c); /* shuffle_lower.c */
bool plan_bn_lowering(MNCompile *c); /* bn_lower.c */
bool plan_lrn_lowering(MNCompile *c); /* lrn_lower.c */
bool plan_rnn_lowering(MNCompile *c); /* rnn_lower.c */
bool plan_einsum_lowering(MNCompile *c); /* einsum_lower.c */
bool plan_loss_lowering(MNCompile *c); /* loss_lower.c */
bool plan_mod_lowering(MNCompile *c); /* mod_lower.c */
bool plan_conv1d_lowering(MNCompile *c); /* conv1d_lower.c */
bool plan_softmax_lowering(MNCompile *c); /* softmax_lower.c */
bool plan_panel_lowering(MNCompile *c); /* panel_lower.c */
bool plan_stack_takes(MNCompile *c); /* stack_take.c */
bool plan_group_expand(MNCompile *c); /* group_expand.c */
bool plan_convt_lowering(MNCompile *c); /* convt_lower.c */
bool plan_d2s_lowering(MNCompile *c); /* d2s_lower.c */
bool plan_pool_lowering(MNCompile *c); /* pool_lower.c */
bool plan_io_views(MNCompile *c); /* io_view.c */
bool plan_fc_lowering(MNCompile *c); /* fc_lower.c */
bool plan_gemv_lowering(MNCompile *c); /* gemv_lower.c */
/* y = DepthToSpace(z, s, DCR) with y's channels rounded up to 8 (whole blocks on tiles),
 * the extra ones sliced off: new nodes named after name */
void plan_dcr_pixels(MNGraph *g, const char *name, MNValue *z, int64_t s, MNValue *y);
bool plan_conv_lowering(MNCompile *c); /* conv_lower.c */
bool plan_mask_lowering(MNCompile *c); /* mask_lower.c */
bool plan_resize_split(MNCompile *c); /* resize_split.c */
/* Would a float value of these dims, laid out canonically, be read by a gather (on one
 * L2B or alike on all, every PE's long words of the L1Bs it spans in half of LM0)? An
 * estimate of what the layout planner chooses, for lowerings that add gathers. */
bool plan_gather_fits(MNGraph *g, const MNMachine *m, int rank, const int64_t *dims);
/* Nodes take() selects that lower() replaces (appending the replacements to the graph,
 * marking the node dead) get their replacements where they stood; the count replaced. */
/* attribute name's cnt integers into v (all dflt when it is absent); false when it is
 * not cnt integers */
bool plan_attr_ints(const MNNode *n, const char *name, int64_t *v, int cnt, int64_t dflt);
/* a new value of this type (a lowering's intermediate) */
MNValue *plan_value_new(MNGraph *g, const char *name, int32_t elem, int rank, const int64_t *dims);
/* a constant int64 list of n values (a lowering's indices, starts, axes) */
MNValue *plan_ints_konst(MNGraph *g, const char *name, int64_t n, const int64_t *v);
/* a scalar constant of element type elem (a float type) and value v */
MNValue *plan_scalar_konst(MNGraph *g, const char *name, int32_t elem, double v);
/* a new node of nin inputs (to be set) whose one output is out */
MNNode *plan_node_new(MNGraph *g, const char *op, const char *name, int nin, MNValue *out);
/* A lowering's node: op of a (and b unless NULL) into y, or into a new value (named after n,
 * the k-th of its lowering) of the broadcast of their shapes and element type elem (0: a's);
 * returns the output */
MNValue *plan_op(MNGraph *g, const MNNode *n, const char *op, MNValue *a, MNValue *b, MNValue *y, int32_t elem, int *k);
int plan_replace_nodes(MNCompile *c, bool (*take)(const MNNode *n), bool (*lower)(MNCompile *c, MNNode *n));
bool plan_location_initial(MNCompile *c);
bool plan_layout(MNCompile *c);

bool plan_location(MNCompile *c);
bool plan_time_slice(MNCompile *c);
bool plan_location_sliced(MNCompile *c);
/* The operands that break "every node computes on LM values that fit one LM" (a value in
 * LM larger than the smaller LM, or a DRAM value read by anything but a download or a
 * split): their count, and a description of the first ones appended to why (or NULL). */
int plan_lm_misfits(const MNGraph *g, const MNMachine *m, MNBuf *why);

/* What node n wants its input k to be, given n's output layout outl (false: no demand). */
/* turn_plan.c: a move that makes another axis the packed one (a Transpose, a layout switch): the
 * axis of l on the slots of a MAB (4 PEs x 2 words), -1; the layout Y to turn into from the
 * wanted lo, where axis q is the one packed before (its 8 lowest values on 8 addresses of a MAB),
 * and the layout X (in the same axes) whose 8 x 8 blocks turn into Y (false: none) */
int plan_slot_axis(const MNLayout *l);
bool plan_turned_out(const MNLayout *lo, int q, const MNMachine *m, int elem_bytes, MNLayout *y);
bool plan_turned_in(const MNLayout *y, int q, const MNMachine *m, int elem_bytes, MNLayout *x);
bool plan_layout_demand(const MNNode *n, int k, const MNLayout *outl, const MNMachine *m, MNLayout *want);
/* The same for an operand of type t and dtype dt in n's input k (a piece of it, say). */
bool plan_layout_demand_of(const MNNode *n, int k, const MNType *t, MNDtype dt, const MNLayout *outl,
                           const MNMachine *m, MNLayout *want);
/* The layout a matrix-unit operand must have: dimension kdim (the reduced K) packed. */
bool plan_layout_kpacked(const MNType *t, MNDtype dt, int kdim, MNLayout *l);
/* Is l's last axis (D >= 8 elements) packed 8 to a long word over W and the 4 PEs (the
 * last long word padded when 8 does not divide D), its long words consecutive, nothing
 * else on W or the PEs and nothing cut over time: each row on one MAB (emitter/rows.c
 * folds such rows)? */
bool plan_layout_rows(const MNLayout *l, int64_t D);
/* Is input k of n read from DRAM by n itself: a product's B too large to replicate in LM,
 * panel by panel (the layout planner marks the node b_streamed), or an embedding's table,
 * row by row (table_streamed)? No Download brings it in, and it takes no LM of the
 * schedule's: Code Emit streams it through a scratch or the L2BM. */
bool plan_streamed(const MNNode *n, int k);
/* embed_plan.c: does Gather n read its rows from a table in DRAM through the DAR? The
 * table's layout (of type t: rows packed, alike everywhere), and the indices' (of type it)
 * for an output laid out as outl (false: the output's tokens are not on the tree) */
bool plan_embed_streams(const MNNode *n, const MNMachine *m);
/* The most rows of a table the vector unit's gather (emitter/window.c) tells apart: a
 * constant each in its pool of GRF1 long words (64 at most), after the pool's 8 fixed ones.
 * A Gather over more rows is an embedding (above) or has no code. */
enum { PLAN_POOL_CAP = 64, PLAN_POOL_FIRST_INDEX = 8 };
int plan_gather_rows_max(const MNMachine *m);
bool plan_embed_table_layout(const MNType *t, MNLayout *l);
bool plan_embed_index_layout(const MNType *it, const MNLayout *outl, const MNMachine *m, MNLayout *want);
void plan_set_layout(MNCompile *c, MNValue *v, const MNLayout *l);
/* The verifier's check: every enforceable demand holds (message in err otherwise). */
bool plan_layout_demands_hold(const MNGraph *g, const MNMachine *m, char *err, size_t errlen);
/* After a later rewrite: make n's demands hold again (also when an input laid out for
 * the whole value no longer fits LM while the demanded layout would). Pieces of a split
 * take the demanded layout; a parameter gets a re-laid copy the host writes; any other
 * input an MNCoreLayoutSwitch, returned in sw (room for n->nin) for the caller to place
 * before n; copies and switches are shared by every node wanting the same layout; cost
 * accumulates the switches' estimate. */
int plan_layout_meet(MNCompile *c, MNNode *n, MNNode **sw, double *cost);

/* The window of a 2-D Conv (kernel: its weights' kernel) or pool (kernel NULL: kernel_shape)
 * from its attributes, ONNX's defaults and SAME pads from the shapes (tile_plan.c). */
typedef struct {
    int64_t k[2], s[2], d[2], pb[2], pe[2];
} MNWindow2;
bool plan_window_2d(const MNNode *n, const int64_t *kernel, const MNType *x, const MNType *y, MNWindow2 *w);

/* A 2-D pool as a stencil (stencil_plan.c): image planes in bands of rows over the PEs
 * of one L1B, halos from the neighbouring bands, no index tables. */
typedef struct {
    bool avg; /* AveragePool (one count for every window), else MaxPool */
    int64_t N, C, H, W, OH, OW, kh, kw, sh, sw, dh, dw, pt, pl; /* pt, pl: the pads before */
    int64_t B, Q, R, Ro, Wl, Wlo; /* bands, plane positions per band, rows per band in and out, LW per row */
    int64_t ht, hb; /* halo rows above and below a band */
    int64_t fl1, fl2, CA; /* channels over L1Bs, L2Bs, and addresses (with N: the planes per PE) */
    int64_t eo, Ew, Erows, scratch_lw; /* the scratch: data from word eo of rows of Ew words; its LW */
} MNStencil;
/* false when node n is no stencil on machine m */
bool plan_stencil(const MNNode *n, const MNMachine *m, MNStencil *s);
void plan_stencil_layout(const MNStencil *s, const MNMachine *m, bool out, MNLayout *l);
/* plan_stencil and the input's and output's layouts (both valid) */
bool plan_stencil_node(const MNNode *n, const MNMachine *m, MNStencil *s, MNLayout *in, MNLayout *out);

/* A 2-D convolution or pool on tiles (tile_plan.c): every MAB a tile of pixels with all
 * their channels packed for the matrix unit, halos from the neighbouring tiles. */
typedef enum {
    MN_TILE_CONV,
    MN_TILE_DW,
    MN_TILE_MAX,
    MN_TILE_AVG,
    MN_TILE_GAP,
    MN_TILE_GMAX,
    MN_TILE_RESIZE,
    MN_TILE_D2S,
    MN_TILE_BCAST
} MNTileKind;
typedef struct {
    MNTileKind kind;
    int out_rank; /* 4, or 2: a global pool's (N, C) */
    int64_t N, C, H, W, OC, OH, OW, kh, kw, sh, sw, dh, dw, pt, pl; /* pt, pl: the pads before */
    int64_t CB, OCB; /* channel blocks of 8, in and out */
    /* the input's tiles: TX along the columns (over the MABs, at every gx-th), TY along
     * the rows (over the L1Bs, then the L2Bs, at every gy-th place), tw x th pixels each;
     * the output's the same with o; rep and repo: the levels each is replicated on */
    int64_t TX, gx, tw, TY, gy, th, TXo, gxo, two, TYo, gyo, tho;
    uint8_t rep, repo;
    int64_t ht, hb, hl, hr; /* halos: rows above and below, columns left and right */
    /* the scratch: a tile with its halos, ecb channel blocks from block c0 (all of them but for
     * a depthwise convolution or pool, which go through them ecb at a time); a global pool's
     * also holds its sums */
    int64_t rows_e, cols_e, c0, ecb, scratch_lw;
    /* a Resize: kh x kw terms per pixel (resize.h), rows and columns upscaled fh, fw times;
     * edge: some term reads past the image (the scratch repeats the edge there) */
    int64_t fh, fw;
    bool edge;
    /* a convolution whose halos are too tall for the scratch (a large dilation): one kernel
     * row at a time (krows from kr0 in the product of a pass; 0: all), its band of input rows
     * from the tiles' own rows (own_lw of the scratch after the band) */
    bool rowpass;
    int64_t kr0, krows, own_lw;
    /* a pool whose windows lie inside each input tile (no halo, no padding: a strided
     * pick): its taps read the input tile itself, with no scratch */
    bool direct;
    /* a convolution of one output pixel whose input spreads over the tiles (a flattened
     * image's product, fc_lower.c): computed on tile 0's place, then sent to every MAB */
    bool bcast_out;
} MNTile;
/* may a node of this op run on tiles (plan_tile says whether this one does)? */
bool plan_tile_op(int op);
/* a Resize or Upsample's terms (resize.h), as the tiles read them */
bool plan_tile_resize_plan(const MNNode *n, ResizePlan *p);
bool plan_tile(const MNNode *n, const MNMachine *m, MNTile *t);
void plan_tile_layout(const MNTile *t, const MNMachine *m, bool out, MNLayout *l);
/* the tiling of a tiled layout as the tile_in attribute holds it (TY gy th TX gx tw rep) */
bool plan_tile_of(const MNLayout *l, const MNMachine *m, int64_t *h);
void plan_tile_weights(const MNTile *t, MNLayout *l);
void plan_tile_bias(const MNTile *t, MNLayout *l);
/* the tiled layout of a value of dims (N, C, H, W) on tiling h */
bool plan_tile_layout_of(const int64_t *h, const MNMachine *m, const int64_t *dims, MNLayout *l);
/* a node moving channels of tiled values (Concat, Split, a Slice or a constant Gather along
 * them) on tiling h: its outputs' layouts; where output o's channel j comes from (input
 * k's channel s) */
bool plan_tile_chan(const MNNode *n, const MNMachine *m, const int64_t *h, MNLayout *outs);
bool plan_tile_chan_source(const MNNode *n, int o, int64_t j, int *k, int64_t *s);
/* plan_tile and the input's and output's layouts (all of the node's layouts valid) */
bool plan_tile_node(const MNNode *n, const MNMachine *m, MNTile *t, MNLayout *in, MNLayout *out);

/* Estimated cycles of re-laying num_lw long words per PE from one layout to another. */
double plan_switch_cycles(const MNMachine *m, const MNLayout *from, const MNLayout *to, int64_t num_lw);
/* the canonical layout of a value of type t in dtype dt on machine m */
bool plan_layout_canonical(const MNType *t, MNDtype dt, const MNMachine *m, MNLayout *l);
#endif
