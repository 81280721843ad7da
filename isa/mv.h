/* The MV forms and their timing (docs/vsm.md 5.6): what one MV line moves between which
 * memories of which groups, the long words it touches on each side, and the load it puts
 * on each port (a group's DRAM and PDM, an L2BM's MV side, the link between two groups).
 *
 * One description serves everyone who needs it: mnemu moves the data by the form and
 * times it on an MvClock, vsm_program_cycles times a program without running it, and
 * the linker's merge estimates MV completion the same way. Ports serve their loads in
 * issue order, so transfers in flight on one memory share its bandwidth. */
#ifndef MN_MV_H
#define MN_MV_H
#include "isa.h"
#include "machine.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
    MV_BAD,
    MV_P_PAR, /* mvp, no group: every group between its own memories */
    MV_P_SINGLE, /* mvp S@g D@h */
    MV_B2, /* mvb2 $d $lc: a group's DRAM into its L2BMs */
    MV_R2, /* mvr2<op> $lc $d: a group's L2BMs reduced into its DRAM */
    MV_B_PDM, /* mvb $p@g $lc: one PDM to every L2BM */
    MV_B_DRAM, /* mvb $d $lc: all-gather of the DRAMs into every L2BM */
    MV_B4, /* mvb4 $d $lc */
    MV_R_PDM, /* mvr<op> $lc $p@g */
    MV_R_DRAM, /* mvr<op> $lc $d: reduce-scatter */
    MV_R4, /* mvr4<op> $lc $d */
    MV_D_P2D, /* mvd $p@g $d */
    MV_D_D2P, /* mvd $d $p@g */
    MV_D_P2L, /* mvd $p@g $lc */
    MV_D_L2P, /* mvd $lc $p@g */
} MvForm;

typedef struct {
    MvForm form;
    int unit; /* N is a multiple of it */
    int gsrc, gdst; /* the group of each side, -1: every group (or the form's own set) */
    int lsrc, ldst; /* the L2B of an L2BM side that names one, else 0 */
    int64_t src_span, dst_span; /* long words each side covers in every memory it touches */
    bool dram; /* touches DRAM (its latency) */
    int dar; /* the side whose DRAM is read through the DAR ($di): 1 source, 2 destination, 0 none */
} MvShape;

enum { MV_DAR_ENTRIES = 1024, MV_DAR_PIECE = 16 }; /* a group's DAR; the long words one entry addresses */

/* the long words side dst (else src) of x may touch: its span, or the whole DRAM through the DAR */
void mv_range(const VExpr *x, const MvShape *sh, const MNMachine *m, bool dst, int64_t *lo, int64_t *n);

/* The form of MV line x on machine m and what it touches; false with the reason in why
 * (a bad pairing of memories, a size not a multiple of the unit, a selector or a range
 * outside the machine). */
bool mv_shape(const VExpr *x, const MNMachine *m, MvShape *sh, char *why, size_t n);

/* whether group g takes part in MV sh: every group, or the one an mvb2 / mvr2 names */
static inline bool mv_in_group(const MvShape *sh, int g) {
    int only = sh->gsrc >= 0 ? sh->gsrc : sh->gdst;
    return (sh->form != MV_B2 && sh->form != MV_R2) || only < 0 || g == only;
}

/* The ports of a machine and when each is next free. */
typedef struct {
    int ng, nl, nports;
    int64_t *free; /* cycle each port is next free */
    int64_t *busy; /* cycles each port has been busy */
    int64_t *lw; /* long words each port has moved */
    double *rate;
} MvClock;
void mv_clock_init(MvClock *c, const MNMachine *m);
void mv_clock_free(MvClock *c);
/* Issue MV x of shape sh at cycle `at`: its loads take their ports in turn; returns the
 * cycle it completes. */
int64_t mv_clock_issue(MvClock *c, const MNMachine *m, const VExpr *x, const MvShape *sh, int64_t at);
/* port indices, for reports */
static inline int mv_port_dram(const MvClock *c, int g) {
    (void)c;
    return g;
}
static inline int mv_port_pdm(const MvClock *c, int g) { return c->ng + g; }
static inline int mv_port_l2bm(const MvClock *c, int l2bid) { return 2 * c->ng + l2bid; }
static inline int mv_port_link(const MvClock *c, int g, int h) { return 2 * c->ng + c->ng * c->nl + g * c->ng + h; }
#endif
