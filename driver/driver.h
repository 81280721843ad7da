/* The driver: the pass table that runs the pipeline (passes.c), and what it writes
 * about a compile (report.c, dashboard.c) and checks between passes (verify.c). */
#ifndef MN_DRIVER_H
#define MN_DRIVER_H
#include "compile.h"
#include <pthread.h>

/* Runs the whole pipeline; 0 on success, 1 on bad input or failure (message in
 * c->diag). Artifacts go to c->out_dir when it is set. */
int mn_compile(MNCompile *c, const char *model_path, const char *out_dir, const MNOptions *opt);
void mn_compile_free(MNCompile *c);
/* the pass names, in order, for --dump-after validation */
const char *const *mn_pass_names(int *n);

/* report.c */
bool mn_report_write(MNCompile *c);
void *mn_report_json(MNCompile *c); /* report.json's tree (a cJSON *, the caller deletes it) */
/* dashboard.c: dashboard.html in the codegen dir, also for a failed compile */
bool mn_dashboard_write(MNCompile *c);
/* verify.c: the invariants after a pass of the given stage (0 loaded, 1 static
 * shapes, 2 dtypes planned, 3 layouts planned, 4 location kinds decided, 5 transfers
 * placed, 6 scheduled: banks and residency, 7 addresses); false + message
 * on a violation. */
bool ir_verify(const MNGraph *g, const MNMachine *m, int stage, char *err,
               size_t errlen); /* m: NULL skips the layout demands */

/* The final graph's dumps, l3ir.txt and l3ir_stripped.onnx (or its zstd frame with
 * compress_dumps), hang on the graph as the address planner leaves it. Code Emit reads
 * that graph and changes none of it that they show (the gather tables it adds are no
 * node's operands, and neither dump lists them): with num_threads > 1 they are built on
 * a thread of their own while the code is emitted, from a copy of the graph's header
 * (emission may grow its list of values), in an arena of their own. */
typedef struct {
    const MNCompile *c;
    MNGraph g;
    Arena *arena;
    MNBuf l3ir, stripped;
    bool zst;
    pthread_t tid;
} Dumps;
/* dumps.c */
bool driver_wants_dump(const MNOptions *o, const char *pass);
bool driver_dump_graph(MNCompile *c, const char *file);
bool driver_write_stamp(MNCompile *c);
void driver_dumps_init(Dumps *d, const MNCompile *c);
void *driver_build_dumps(void *arg); /* a thread's start, or called in place */
void driver_dumps_free(Dumps *d);
bool driver_write_dumps(MNCompile *c, Dumps *d); /* and frees d */
#endif
