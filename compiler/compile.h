/* One compilation: the driver state shared by the passes and the artifact writers. */
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
    struct SchedState *sched; /* Node Simulation and schedule results (scheduler/) */
    const char *app_status;   /* model.app: "written", or why not */
    const char *artifacts[32]; /* the files written into out_dir, in the order first written */
    int nartifacts;
    struct MNArtQ *art_q;      /* the artifacts the writer thread is writing (artifacts.c) */
    /* the Node Simulation cache of this run: run-dependent, so kept out of the
     * deterministic artifacts (report.json "cache") */
    const char *cache_dir;
    int64_t cache_hits, cache_misses, cache_corrupt, cache_write_failures;
    bool finished;
    struct EmMemo *emit_memo; /* Code Emit's memo of per-element checks, while it runs (emitter/memo.h) */
    struct EmParams *params;  /* the parameter images made ahead of Code Emit (emitter/params.c) */
} MNCompile;

/* Runs the whole pipeline; 0 on success, 1 on bad input or failure (message in
 * c->diag). Artifacts go to c->out_dir when it is set. */
int mn_compile(MNCompile *c, const char *model_path, const char *out_dir, const MNOptions *opt);
void mn_compile_free(MNCompile *c);
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

/* artifacts.c: atomic writes into the codegen dir */
bool mn_art_prepare_dir(MNCompile *c);
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
/* onnx_write.c: graph g as an ONNX model (strip: large constants without data) */
bool onnx_write_model(MNCompile *c, const MNGraph *g, bool strip, MNBuf *out);
/* the same with its allocations in arena a (another thread's) */
bool onnx_write_model_in(Arena *a, const MNCompile *c, const MNGraph *g, bool strip, MNBuf *out);
/* report.c */
bool mn_report_write(MNCompile *c);
void *mn_report_json(MNCompile *c); /* report.json's tree (a cJSON *, the caller deletes it) */
/* dashboard.c: dashboard.html in the codegen dir, also for a failed compile */
bool mn_dashboard_write(MNCompile *c);
/* l3ir.c */
void ir_print_l3ir(MNBuf *b, const MNGraph *g);
/* verify.c: the invariants after a pass of the given stage (0 loaded, 1 static
 * shapes, 2 dtypes planned, 3 layouts planned, 4 location kinds decided, 5 transfers
 * placed, 6 scheduled: banks and residency, 7 addresses); false + message
 * on a violation. */
bool ir_verify(const MNGraph *g, const MNMachine *m, int stage, char *err, size_t errlen); /* m: NULL skips the layout demands */
/* passes.c: the pass names, in order, for --dump-after validation */
const char *const *mn_pass_names(int *n);
#endif
