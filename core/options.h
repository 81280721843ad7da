/* Compiler options: one table feeds parsing (-O key=value, the long flag --key-name,
 * preset files, --option-json), --help, validation, the README's preset table and
 * report.json.
 *
 * X(name, type, default, values, help)
 *   type INT: a non-negative integer; ENUM: one of the |-separated values (ival holds
 *   its index, and the name is in the table); BOOL: true or false (ival 1 or 0);
 *   STRING: any text (sval).
 *
 * Where a value comes from is kept per option (report.json says it): the table's
 * default, a preset file (--preset, and the presets it builds on), an option file
 * (--option-json), or the command line. The command line always wins, then the option
 * file, then the preset, whatever the order of the arguments. */
#ifndef MN_OPTIONS_H
#define MN_OPTIONS_H
#include "ir.h"

#define MN_OPTIONS(X)                                                                                                  \
    X(fold_max_elems, INT, "4194304", "", "largest constant (in elements) that folding may create")                    \
    X(memory_limit_mb, INT, "8192", "",                                                                                \
      "heap one compilation may hold (its arena, code text, programs, images), in MiB, checked after every pass and "  \
      "every 64 nodes of Code Emit; a model declaring more is refused before loading (0 = no limit)")                  \
    X(float_dtype, ENUM, "float", "float|mixed",                                                                       \
      "float: keep float32 as Float; mixed: MatMul/Gemm/Conv operands in Half")                                        \
    X(layout_planner, ENUM, "lpz", "lpz|naive",                                                                        \
      "lpz: demand-driven with gene hints; naive: canonical layouts, a switch at every mismatch")                      \
    X(simulation_mode, ENUM, "default", "fake|fast|default|best",                                                      \
      "Node Simulation: fake and fast estimate from the machine (fake: one variant per LM bank and no cache, the "     \
      "fastest compile; fast: one variant per LM bank); default: every variant, each distinct node timed from its "    \
      "emitted code on the emulator's timing model (nodes not emitted alone keep the estimates); best: the same as "   \
      "default (its name when default estimated)")                                                                     \
    X(scheduler, ENUM, "reuse_consecutive", "always_from_dram|reuse_consecutive|spill_opt|auto_recompute_sa",          \
      "always_from_dram: every result to DRAM and back; reuse_consecutive: keep a value in LM for a consumer that "    \
      "follows at once; spill_opt: evict the farthest next use when LM is full; auto_recompute_sa: simulated "         \
      "annealing over order, spills and recomputation")                                                                \
    X(conv_lowering, ENUM, "im2col", "window|im2col",                                                                  \
      "window: Conv as a window op on the vector unit; im2col: an ungrouped float 2-D Conv with constant weights, "    \
      "small enough to be gathered on one L1B, as an im2col gather (C*KH*KW padded to a multiple of 8), a Gemm on "    \
      "the MAB matrix unit and a transpose")                                                                           \
    X(plan_only, BOOL, "false", "",                                                                                    \
      "stop before Code Emit: plan, schedule and place the graph and write every artifact but model.app (a model "     \
      "whose nodes Code Emit cannot all cover is then no error; without it such a compile fails)")                     \
    X(link, ENUM, "concat", "concat|merge",                                                                            \
      "linking of the per-node code: concat, one node after another; merge, a Download or Upload interleaved with an " \
      "independent compute neighbour (DRAM time hidden behind compute)")                                               \
    X(num_threads, INT, "0", "",                                                                                       \
      "threads for Node Simulation and Code Emit's linking (0: one per online core, at most 8; mncc batch gives its "  \
      "compiles 1 unless set); the results are identical for any count")                                               \
    X(seed, INT, "1", "", "random seed of auto_recompute_sa")                                                          \
    X(sa_steps, INT, "1000", "", "moves auto_recompute_sa tries (each re-simulates the schedule)")                     \
    X(machine, STRING, "mncore2", "", "target machine: a name under presets/machines, or a path to a machine file")    \
    X(verify, BOOL, "false", "", "check the graph's invariants after every pass")                                      \
    X(dump_all, BOOL, "false", "", "write layout.PASS.txt after every pass")                                           \
    X(dump_after, STRING, "", "", "write layout.PASS.txt after the named passes (comma-separated)")                    \
    X(param_compression, ENUM, "fast", "fast|small",                                                                   \
      "zstd of model.app's parameter images: fast, level -1 (repeats found, literals stored as they are); small, "     \
      "level 3 (literals entropy-coded too: float weights a few percent smaller, about four times the time)")          \
    X(compress_dumps, BOOL, "false", "",                                                                               \
      "write the final graph as l3ir_stripped.onnx.zst (zstd) instead of l3ir_stripped.onnx")                          \
    X(out_onnx, STRING, "", "", "also write the graph as it enters the planners (after dce) as ONNX to this path")

typedef enum {
#define X(name, type, dflt, values, help) MN_OPT_##name,
    MN_OPTIONS(X)
#undef X
        MN_OPT_COUNT
} MNOptId;

typedef enum { MN_SRC_DEFAULT, MN_SRC_PRESET, MN_SRC_OPTION_FILE, MN_SRC_CMDLINE } MNOptSource;

typedef struct {
    const char *name;
    int rank;
    int64_t dims[MN_MAX_RANK];
} MNInputShape;

typedef struct {
    const char *name, *path; /* a serialized TensorProto */
} MNInputValue;

typedef struct MNOptions {
    int64_t ival[MN_OPT_COUNT];
    char *sval[MN_OPT_COUNT]; /* STRING options (owned) */
    MNOptSource src[MN_OPT_COUNT];
    char *from[MN_OPT_COUNT]; /* the file a preset or option-file value came from (owned) */
    MNInputShape *shapes;
    int nshapes;
    MNInputValue *values; /* inputs frozen to constants (--input-value) */
    int nvalues;
    char *preset; /* --preset as given (owned), NULL: none */
    char *option_file; /* --option-json (owned) */
    bool progress; /* a status line on stderr: the pass running (a terminal's) */
    const char *stamp; /* --if-changed: compile.stamp's first part, written last (NULL: none) */
    const char *cache_dir; /* --cache-dir; NULL: $XDG_CACHE_HOME/mncc (or ~/.cache/mncc) when
                              writing a codegen dir, none for in-memory compiles; "none": off */
} MNOptions;

typedef struct {
    const char *name, *type, *dflt, *values, *help;
} MNOptInfo;
enum { MN_FLOAT_DTYPE_FLOAT, MN_FLOAT_DTYPE_MIXED };
enum { MN_LAYOUT_PLANNER_LPZ, MN_LAYOUT_PLANNER_NAIVE };
enum { MN_SIM_FAKE, MN_SIM_FAST, MN_SIM_DEFAULT, MN_SIM_BEST };
enum { MN_LINK_CONCAT, MN_LINK_MERGE };
enum { MN_PARAM_COMPRESSION_FAST, MN_PARAM_COMPRESSION_SMALL };
enum { MN_CONV_WINDOW, MN_CONV_IM2COL };
enum { MN_SCHED_ALWAYS_FROM_DRAM, MN_SCHED_REUSE_CONSECUTIVE, MN_SCHED_SPILL_OPT, MN_SCHED_AUTO_RECOMPUTE_SA };
/* the name of an option's current value ("mixed", or the number as text) */
const char *opt_value_text(const MNOptions *o, int id, char *buf, size_t n);
extern const MNOptInfo mn_opt_info[MN_OPT_COUNT];

void opt_init(MNOptions *o);
void opt_free(MNOptions *o);
/* "key=value" from the command line; false with a message (listing valid keys or
 * values) in err */
bool opt_set(MNOptions *o, const char *kv, char *err, size_t errlen);
/* the same from a source (file: the preset or option file it came from) */
bool opt_set_from(MNOptions *o, const char *kv, MNOptSource src, const char *file, char *err, size_t errlen);
/* the option a long flag names ("--dump-all" -> dump_all), -1 for none */
int opt_flag(const char *flag);
/* A preset: NAME (presets/NAME.json beside the program, or where MNCC_PRESETS points)
 * or a path. Its "options" object is applied after the presets it names in "base". */
bool opt_load_preset(MNOptions *o, const char *name, char *err, size_t errlen);
/* An option file (--option-json): a JSON object of options, or one with an "options"
 * object, as MLSDK's option files */
bool opt_load_json(MNOptions *o, const char *path, char *err, size_t errlen);
/* the NAME of every NAME.json in dir, each after a space, into buf (" (none)") */
void opt_list_json(const char *dir, char *buf, size_t n);
/* where a preset NAME lives (path filled even when it does not exist) */
void opt_preset_path(const char *name, char *path, size_t n);
/* the source of option i as report.json says it: "default", "preset O2 (PATH)", ... */
const char *opt_source_text(const MNOptions *o, int i, char *buf, size_t n);
/* does the comma-separated dump_after name the pass? */
bool opt_dump_after_has(const MNOptions *o, const char *pass);
/* "NAME=d1,d2,..."; false with a message in err */
bool opt_add_input_shape(MNOptions *o, const char *spec, char *err, size_t errlen);
/* "NAME=FILE.pb" */
bool opt_add_input_value(MNOptions *o, const char *spec, char *err, size_t errlen);
#endif
