/* One compilation: the state the passes share, and the services every pass uses (its
 * log and figures, threads, the memory limit, the codegen dir's writer). */
#ifndef MN_COMPILE_H
#define MN_COMPILE_H
#include "buf.h"
#include "ir.h"
#include "machine.h"
#include "options.h"

typedef struct {
    const char *name;
    int64_t value;
} MNFigure;

typedef struct {
    const char *name;
    double wall_ms;
    int nodes, values;
    bool ok;
    MNFigure figures[24]; /* what the pass decided, for report.json */
    int nfigures;
} MNPassRecord;

/* What the scheduler asks of Code Emit, which sits above it: the driver fills it in
 * with the emitter's functions (driver/passes.c), as QBE reaches its target through a
 * struct of functions, so that scheduler/ never includes emitter/. */
struct MNCompile;
typedef struct MNCodeModel {
    /* the cycles of node n's code emitted alone, on the emulator's timing model, with its
     * LM input k in bank[k] (0 LM0, 1 LM1) and its outputs in out_bank (-1: output 0 over
     * input 0); -1 when it cannot be emitted so */
    int64_t (*measure)(struct MNCompile *c, const MNNode *n, const int *bank, int out_bank);
    /* before the schedule, per node of c->g (need[i] for g->nodes[i]): the LM0 long words
     * a gather or window node needs free at once for its scratch and a row of its index
     * table (0: none) */
    void (*scratch_needs)(struct MNCompile *c, int64_t *need);
} MNCodeModel;

typedef struct {
    int level; /* 0 info, 1 warning, 2 error */
    const char *pass;
    const char *msg;
} MNLogLine;

typedef struct MNCompile {
    const char *model_path;
    const char *out_dir; /* NULL: compile in memory only (tests, sweeps) */
    const MNOptions *opt;
    Arena *arena;
    MNGraph *g;
    MNMachine machine; /* the target the planners plan for */
    MNDiag diag;
    const char *cur_pass;
    MNPassRecord *passes;
    int npasses;
    MNLogLine *log;
    int nlog, caplog;
    /* figures the passes report */
    int nodes_loaded, nodes_folded, nodes_dead;
    const MNCodeModel *code; /* Code Emit's timing, for the scheduler (NULL: estimates only, no scratch) */
    struct SchedState *sched; /* Node Simulation and schedule results (scheduler/) */
    const char *app_status; /* model.app: "written", or why not */
    /* why Code Emit could write no program (NULL: it could): the compile fails with it,
     * after the dumps are written, unless the options asked for planning only */
    const char *no_program;
    const char *artifacts[32]; /* the files written into out_dir, in the order first written */
    int nartifacts;
    struct MNArtQ *art_q; /* the artifacts the writer thread is writing (artifacts.c) */
    /* the Node Simulation cache of this run: run-dependent, so kept out of the
     * deterministic artifacts (report.json "cache") */
    const char *cache_dir;
    int64_t cache_hits, cache_misses, cache_corrupt, cache_write_failures;
    bool finished;
    /* Code Emit's memos (emitter/memo.h): the per-element checks' plain results for the whole
     * compile (Node Simulation, the scratch needs, Code Emit), and what Code Emit's walk makes */
    struct EmMemo *check_memo, *emit_memo;
    struct EmParams *params; /* the parameter images made ahead of Code Emit (emitter/params.c) */
} MNCompile;

void mn_log(MNCompile *c, int level, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* false, with the error set, once the process's heap (the arena and every buffer the
 * passes hold: code text, programs, images) is over memory_limit_mb. Checked after every
 * pass and every few nodes of Code Emit, so a compile stops with an error line before the
 * machine runs out of memory. */
bool mn_memory_ok(MNCompile *c);
/* the threads option num_threads asks for (0: one per online core, at most 8) */
int mn_threads(const MNCompile *c);
/* FNV-1a of a file's bytes (0 when it cannot be read), for compile.stamp */
uint64_t mn_file_hash(const char *path);
/* Record a figure of the running pass (report.json passes[].figures). */
void mn_figure(MNCompile *c, const char *name, int64_t value);

/* artifacts.c: atomic writes into the codegen dir; prepare_dir removes what an earlier
 * compile left there (the known artifacts, and the dumps layout.PASS.txt of the passes) */
bool mn_art_prepare_dir(MNCompile *c, const char *const *passes, int npasses);
bool mn_art_write(MNCompile *c, const char *name, const void *data, size_t len);
bool mn_art_copy_file(MNCompile *c, const char *name, const char *src);
/* data (malloc'd, taken over) written as artifact name, by the writer thread when
 * num_threads > 1 and it is large: mn_art_wait waits for the writer and fails if a
 * write failed, as does every artifact operation after the failure (false here: an
 * earlier write failed, or this one did) */
bool mn_art_write_owned(MNCompile *c, const char *name, void *data, size_t len);
/* the same from pieces, written one after another (a program's parts, an app's large
 * vectors where they lie: nothing is copied into one buffer first); release(ctx) once
 * their bytes are no longer needed, whatever happens */
bool mn_art_write_segs(MNCompile *c, const char *name, const MNSpan *seg, int nseg, void (*release)(void *), void *ctx);
bool mn_art_wait(MNCompile *c);
/* a written artifact taken back (a failed compile leaves no model.app); false if none */
bool mn_art_remove(MNCompile *c, const char *name);
/* the same atomic write to any path (not listed among the codegen dir's artifacts) */
bool mn_art_write_path(MNCompile *c, const char *path, const void *data, size_t len);
/* l3ir.c: the graph in l3ir text (l3ir.txt, the dumps) */
void ir_print_l3ir(MNBuf *b, const MNGraph *g);
#endif
