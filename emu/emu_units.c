/* mnemu's compute units: the ALU, the MAU's vector ops and the matrix unit. Each
 * works lane by lane over all PEs at once (structure-of-arrays, see emu.c): a lane of
 * every PE is unpacked into a contiguous array, the operation runs as one tight loop
 * the compiler vectorises, and the result is packed back. This is the emulator's hot
 * path; it is built with -O3 and an x86-64-v3 clone (Makefile). */
#include "emu_impl.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double lane_f(uint32_t *const row[4], int prec, int lane, size_t p) {
    if (prec == P_D) return in_d(get64(row, lane, p));
    if (prec == P_F) return in_f(row[lane][p]);
    return mnh_to_f(get16(row, lane, p));
}
static void put_f(uint32_t *row[4], int prec, int lane, size_t p, double v, bool normalise) {
    if (prec == P_D)
        put64(row, lane, p, normalise ? out_d(v) : d_bits(v));
    else if (prec == P_F)
        row[lane][p] = normalise ? out_f((float)v) : f_bits((float)v);
    else {
        uint16_t h = f_to_mnh((float)v);
        put16(row, lane, p, normalise && !(h & 0x7e00) ? 0 : h);
    }
}
/* Flag bits for a cycle from per-lane flags of the long word on the MSB side. */
static inline uint8_t flag_bits(int bits, const bool *lf) {
    if (bits == 64) return lf[0] ? 0xf : 0;
    if (bits == 32) return (uint8_t)((lf[0] ? 0xc : 0) | (lf[1] ? 0x3 : 0));
    return (uint8_t)((lf[0] ? 8 : 0) | (lf[1] ? 4 : 0) | (lf[2] ? 2 : 0) | (lf[3] ? 1 : 0));
}

/* ---- lane arrays ----
 * An instruction works lane by lane over all PEs at once: a lane of every PE is
 * unpacked into a contiguous array, the operation runs as one tight loop the compiler
 * vectorises, and the result is packed back. */

static void unpack_i(uint32_t *const row[4], int bits, int l, bool uns, int64_t *o, size_t np) {
    if (bits == 64) {
        const uint32_t *h = row[2 * l], *lo = row[2 * l + 1];
        for (size_t p = 0; p < np; p++) o[p] = (int64_t)((uint64_t)h[p] << 32 | lo[p]);
    } else if (bits == 32) {
        const uint32_t *w = row[l];
        if (uns)
            for (size_t p = 0; p < np; p++) o[p] = (int64_t)w[p];
        else
            for (size_t p = 0; p < np; p++) o[p] = (int32_t)w[p];
    } else {
        const uint32_t *w = row[l / 2];
        int sh = l & 1 ? 0 : 16;
        if (uns)
            for (size_t p = 0; p < np; p++) o[p] = (uint16_t)(w[p] >> sh);
        else
            for (size_t p = 0; p < np; p++) o[p] = (int16_t)(uint16_t)(w[p] >> sh);
    }
}

static void pack_i(uint32_t *row[4], int bits, int l, const int64_t *v, size_t np) {
    if (bits == 64) {
        uint32_t *h = row[2 * l], *lo = row[2 * l + 1];
        for (size_t p = 0; p < np; p++) {
            h[p] = (uint32_t)((uint64_t)v[p] >> 32);
            lo[p] = (uint32_t)v[p];
        }
    } else if (bits == 32) {
        uint32_t *w = row[l];
        for (size_t p = 0; p < np; p++) w[p] = (uint32_t)v[p];
    } else {
        uint32_t *w = row[l / 2];
        if (l & 1)
            for (size_t p = 0; p < np; p++) w[p] = (w[p] & 0xffff0000u) | (uint16_t)v[p];
        else
            for (size_t p = 0; p < np; p++) w[p] = (w[p] & 0xffffu) | (uint32_t)(uint16_t)v[p] << 16;
    }
}

/* floats read with subnormals as signed zero */
static void unpack_f(uint32_t *const row[4], int prec, int l, double *o, size_t np) {
    if (prec == P_D) {
        const uint32_t *h = row[2 * l], *lo = row[2 * l + 1];
        for (size_t p = 0; p < np; p++) o[p] = in_d((uint64_t)h[p] << 32 | lo[p]);
    } else if (prec == P_F) {
        const uint32_t *w = row[l];
        for (size_t p = 0; p < np; p++) {
            uint32_t u = w[p];
            u &= (u & 0x7f800000u) ? ~0u : 0x80000000u;
            float f;
            memcpy(&f, &u, 4);
            o[p] = f;
        }
    } else {
        const uint32_t *w = row[l / 2];
        int sh = l & 1 ? 0 : 16;
        for (size_t p = 0; p < np; p++) o[p] = mnh_to_f((uint16_t)(w[p] >> sh));
    }
}

static void pack_f(uint32_t *row[4], int prec, int l, const double *v, size_t np, bool norm) {
    if (prec == P_D) {
        uint32_t *h = row[2 * l], *lo = row[2 * l + 1];
        for (size_t p = 0; p < np; p++) {
            uint64_t b = norm ? out_d(v[p]) : d_bits(v[p]);
            h[p] = (uint32_t)(b >> 32);
            lo[p] = (uint32_t)b;
        }
    } else if (prec == P_F) {
        uint32_t *w = row[l];
        for (size_t p = 0; p < np; p++) {
            float f = (float)v[p];
            uint32_t u;
            memcpy(&u, &f, 4);
            w[p] = norm ? (u & 0x7f800000u ? u : 0) : u;
        }
    } else {
        uint32_t *w = row[l / 2];
        for (size_t p = 0; p < np; p++) {
            uint16_t h = f_to_mnh((float)v[p]);
            if (norm && !(h & 0x7e00)) h = 0; /* normalised results: a zero is +0 */
            w[p] = l & 1 ? (w[p] & 0xffff0000u) | h : (w[p] & 0xffffu) | (uint32_t)h << 16;
        }
    }
}

/* Lane l's flags into the per-PE 4-bit flag bytes (only lanes of the MSB long word count). */
static void add_flags(uint8_t *fl, const uint8_t *lf, int bits, int l, size_t np) {
    uint8_t bitsv;
    if (bits == 64) {
        if (l) return;
        bitsv = 0xf;
    } else if (bits == 32) {
        if (l > 1) return;
        bitsv = l ? 0x3 : 0xc;
    } else {
        if (l > 3) return;
        bitsv = (uint8_t)(8 >> l);
    }
    for (size_t p = 0; p < np; p++) fl[p] |= lf[p] ? bitsv : 0;
}

static Lanes *lanes(Emu *e) { return &e->lanes; }

/* ---- the ALU ---- */

static bool alu_int_lane(Emu *e, int insn, int bits, bool uns, Lanes *L, size_t np) {
    int64_t *a = L->ia, *b = L->ib, *o = L->io;
    uint8_t *f = L->lf;
    uint64_t m = bits == 64 ? ~0ull : (1ull << bits) - 1;
    int top = bits - 1;
    switch (insn) {
    case VI_passa:
        for (size_t p = 0; p < np; p++) {
            o[p] = a[p];
            f[p] = ((uint64_t)a[p] & m) == 0;
        }
        break;
    case VI_inc:
    case VI_dec:
    case VI_add:
    case VI_sub: {
        bool sub = insn == VI_dec || insn == VI_sub, one = insn == VI_inc || insn == VI_dec;
        for (size_t p = 0; p < np; p++) {
            uint64_t ua = (uint64_t)a[p] & m, ub = one ? 1 : (uint64_t)b[p] & m;
            uint64_t r = (sub ? ua - ub : ua + ub) & m;
            o[p] = (int64_t)r;
            f[p] = uns ? (sub ? ua >= ub : r >= ua) : !(r >> top & 1);
        }
        break;
    }
    case VI_not:
        for (size_t p = 0; p < np; p++) {
            o[p] = (int64_t)(~(uint64_t)a[p] & m);
            f[p] = o[p] == 0;
        }
        break;
    case VI_lnot:
        for (size_t p = 0; p < np; p++) {
            o[p] = ((uint64_t)a[p] & m) == 0;
            f[p] = o[p] == 0;
        }
        break;
    case VI_and:
        for (size_t p = 0; p < np; p++) {
            o[p] = (int64_t)((uint64_t)(a[p] & b[p]) & m);
            f[p] = o[p] == 0;
        }
        break;
    case VI_or:
        for (size_t p = 0; p < np; p++) {
            o[p] = (int64_t)((uint64_t)(a[p] | b[p]) & m);
            f[p] = o[p] == 0;
        }
        break;
    case VI_xor:
        for (size_t p = 0; p < np; p++) {
            o[p] = (int64_t)((uint64_t)(a[p] ^ b[p]) & m);
            f[p] = o[p] == 0;
        }
        break;
    case VI_lsl:
        for (size_t p = 0; p < np; p++) {
            unsigned sh = (unsigned)(((uint64_t)b[p] & m) % (uint64_t)bits);
            o[p] = (int64_t)((((uint64_t)a[p] & m) << sh) & m);
            f[p] = o[p] == 0;
        }
        break;
    case VI_lsr:
        for (size_t p = 0; p < np; p++) {
            unsigned sh = (unsigned)(((uint64_t)b[p] & m) % (uint64_t)bits);
            o[p] = uns ? (int64_t)(((uint64_t)a[p] & m) >> sh) : a[p] >> sh;
            f[p] = ((uint64_t)o[p] & m) == 0;
        }
        break;
    case VI_max:
    case VI_min:
        for (size_t p = 0; p < np; p++) {
            bool ge = uns ? ((uint64_t)a[p] & m) >= ((uint64_t)b[p] & m) : a[p] >= b[p];
            bool le = uns ? ((uint64_t)a[p] & m) <= ((uint64_t)b[p] & m) : a[p] <= b[p];
            bool pick_a = insn == VI_max ? ge : le;
            o[p] = pick_a ? a[p] : b[p];
            f[p] = pick_a;
        }
        break;
    default: return emu_fail(e, "%s has no integer form", vsm_insns[insn].name);
    }
    return true;
}

static bool alu_float_lane(Emu *e, int insn, Lanes *L, size_t np) {
    double *a = L->fa, *b = L->fb, *o = L->fo;
    uint8_t *f = L->lf;
    switch (insn) {
    case VI_passa:
        for (size_t p = 0; p < np; p++) {
            o[p] = a[p];
            f[p] = a[p] == 0;
        }
        break;
    case VI_floor:
        for (size_t p = 0; p < np; p++) {
            o[p] = floor(a[p]);
            f[p] = 0;
        }
        break;
    case VI_rsqrt:
        for (size_t p = 0; p < np; p++) {
            o[p] = 1.0 / sqrt(fabs(a[p]));
            f[p] = !signbit(a[p]);
        }
        break;
    case VI_rcp:
        for (size_t p = 0; p < np; p++) {
            o[p] = 1.0 / a[p];
            f[p] = 0;
        }
        break;
    case VI_exp:
        for (size_t p = 0; p < np; p++) {
            o[p] = exp(a[p]);
            f[p] = 0;
        }
        break;
    case VI_log:
        for (size_t p = 0; p < np; p++) {
            o[p] = log(a[p]);
            f[p] = 0;
        }
        break;
    case VI_max:
        for (size_t p = 0; p < np; p++) {
            f[p] = a[p] >= b[p];
            o[p] = f[p] ? a[p] : b[p];
        }
        break;
    case VI_min:
        for (size_t p = 0; p < np; p++) {
            f[p] = a[p] <= b[p];
            o[p] = f[p] ? a[p] : b[p];
        }
        break;
    case VI_relu:
        for (size_t p = 0; p < np; p++) {
            f[p] = !signbit(a[p]);
            o[p] = f[p] ? b[p] : -0.0;
        }
        break;
    default: return emu_fail(e, "%s has no floating-point form", vsm_insns[insn].name);
    }
    return true;
}

/* The per-PE loops are compiled twice, for AVX2 and for the baseline, and the loader
 * picks one for the CPU it runs on; results are identical (no FMA contraction). Not under
 * ASan or TSan: the loader runs the choosing code before their runtimes are up. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)
#define HOT_LOOPS __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define HOT_LOOPS
#endif

HOT_LOOPS static bool alu_compute(Emu *e, const VExpr *x, Result *r) {
    size_t np = (size_t)e->npe;
    int prec = x->prec, bits = emu_lane_bits(prec == P_NONE ? P_L : prec), nl = 128 / bits;
    bool fl = prec & P_FLT, uns = x->uns;
    r->has_flags = true;
    r->fw = FW_ALU;
    for (int s = 0; s < x->nsrc; s++)
        if (!emu_read_src(e, &x->src[s], prec, s)) return false;
    Lanes *L = lanes(e);
    int64_t imax = bits == 64 ? INT64_MAX : bits == 32 ? INT32_MAX : INT16_MAX;
    uint64_t umask = bits == 64 ? ~0ull : (1ull << bits) - 1;
    for (int c = 0; c < NCYC; c++) {
        uint32_t **A = e->src[0][c], **B = e->src[1][c], **R = r->w[c];
        memset(r->flag[c], 0, np);
        switch (x->insn) {
        case VI_zero:
            for (int w = 0; w < 4; w++) memset(R[w], 0, np * 4);
            r->has_flags = false;
            continue;
        case VI_imm:
            for (size_t p = 0; p < np; p++) {
                put64(R, 0, p, x->imm[0]);
                put64(R, 1, p, x->imm[1]);
            }
            r->has_flags = false;
            continue;
        case VI_msl:
        case VI_msr:
            for (int w = 0; w < 4; w++)
                for (size_t p = 0; p < np; p++) {
                    size_t q = x->insn == VI_msl ? (p & ~(size_t)3) | ((p + 3) & 3) : (p & ~(size_t)3) | ((p + 1) & 3);
                    R[w][p] = A[w][q];
                }
            r->has_flags = false;
            continue;
        case VI_bfn: {
            /* block float: the 4 PEs of a MAB align each lane to their largest exponent */
            int mant = prec == P_D ? 52 : 23;
            for (int l = 0; l < nl; l++) {
                unpack_f(A, prec, l, L->fa, np);
                for (size_t p0 = 0; p0 < np; p0 += 4) {
                    int emax = INT32_MIN;
                    for (int k = 0; k < 4; k++) {
                        double v = L->fa[p0 + (size_t)k];
                        int ex;
                        if (v != 0 && isfinite(v)) {
                            frexp(v, &ex);
                            if (ex > emax) emax = ex;
                        }
                    }
                    for (int k = 0; k < 4; k++) {
                        double o = L->fa[p0 + (size_t)k];
                        if (emax != INT32_MIN && o != 0 && isfinite(o)) {
                            double q = ldexp(1.0, emax - 1 - mant);
                            o = nearbyint(o / q) * q;
                        }
                        L->fo[p0 + (size_t)k] = o;
                    }
                }
                pack_f(R, prec, l, L->fo, np, true);
            }
            r->has_flags = false;
            continue;
        }
        case VI_ftoi: /* toward zero; out of range clips (unsigned converts |a|) */
            for (int l = 0; l < nl; l++) {
                unpack_f(A, prec, l, L->fa, np);
                for (size_t p = 0; p < np; p++) {
                    double t = trunc(uns ? fabs(L->fa[p]) : L->fa[p]);
                    int64_t iv;
                    if (isnan(t))
                        iv = 0;
                    else if (uns)
                        iv = t >= ldexp(1.0, bits) ? (int64_t)umask : (int64_t)(uint64_t)t;
                    else
                        iv = t <= -(double)imax - 1 ? -imax - 1 : t >= (double)imax ? imax : (int64_t)t;
                    L->io[p] = iv;
                }
                pack_i(R, bits, l, L->io, np);
            }
            r->has_flags = false;
            continue;
        case VI_itof:
            for (int l = 0; l < nl; l++) {
                unpack_i(A, bits, l, uns, L->ia, np);
                for (size_t p = 0; p < np; p++)
                    L->fo[p] = uns && bits == 64 ? (double)(uint64_t)L->ia[p] : (double)L->ia[p];
                pack_f(R, prec, l, L->fo, np, false);
            }
            r->has_flags = false;
            continue;
        default: break;
        }
        if (bits == 32 && !fl &&
            (x->insn == VI_add || x->insn == VI_sub || x->insn == VI_and || x->insn == VI_or || x->insn == VI_xor ||
             x->insn == VI_passa) &&
            !uns) {
            /* the common 32-bit cases straight on the words */
            for (int l = 0; l < 4; l++) {
                const uint32_t *a = A[l], *b = x->nsrc > 1 ? B[l] : A[l];
                uint32_t *o = R[l];
                uint8_t *fl8 = r->flag[c], fb = l == 0 ? 0xc : l == 1 ? 0x3 : 0;
                bool sign = x->insn == VI_add || x->insn == VI_sub;
                switch (x->insn) {
                case VI_add:
                    for (size_t p = 0; p < np; p++) o[p] = a[p] + b[p];
                    break;
                case VI_sub:
                    for (size_t p = 0; p < np; p++) o[p] = a[p] - b[p];
                    break;
                case VI_and:
                    for (size_t p = 0; p < np; p++) o[p] = a[p] & b[p];
                    break;
                case VI_or:
                    for (size_t p = 0; p < np; p++) o[p] = a[p] | b[p];
                    break;
                case VI_xor:
                    for (size_t p = 0; p < np; p++) o[p] = a[p] ^ b[p];
                    break;
                default: memcpy(o, a, np * 4); break;
                }
                if (fb) {
                    if (sign)
                        for (size_t p = 0; p < np; p++) fl8[p] |= (o[p] >> 31) ? 0 : fb;
                    else
                        for (size_t p = 0; p < np; p++) fl8[p] |= o[p] ? 0 : fb;
                }
            }
            e->st.pe_element_ops += (int64_t)np * nl;
            continue;
        }
        for (int l = 0; l < nl; l++) {
            if (fl) {
                unpack_f(A, prec, l, L->fa, np);
                if (x->nsrc > 1) unpack_f(B, prec, l, L->fb, np);
                if (!alu_float_lane(e, x->insn, L, np)) return false;
                pack_f(R, prec, l, L->fo, np, false);
            } else {
                unpack_i(A, bits, l, uns, L->ia, np);
                if (x->nsrc > 1) unpack_i(B, bits, l, uns, L->ib, np);
                if (!alu_int_lane(e, x->insn, bits, uns, L, np)) return false;
                pack_i(R, bits, l, L->io, np);
            }
            add_flags(r->flag[c], L->lf, bits, l, np);
        }
        e->st.pe_element_ops += (int64_t)np * nl;
    }
    return true;
}

/* ---- the MAU: vector ops ---- */

/* a*b + c rounded once to float: C's fmaf (one instruction in the clone built for FMA
 * hardware, the library's correctly rounded routine elsewhere). */
static inline float fma_f(float a, float b, float c) { return __builtin_fmaf(a, b, c); }

HOT_LOOPS static bool mau_vec_compute(Emu *e, const VExpr *x, Result *r) {
    size_t np = (size_t)e->npe;
    int prec = x->prec;
    r->has_flags = true;
    r->fw = FW_MAU;
    for (int s = 0; s < x->nsrc; s++) /* half ops add a float Z */
        if (!emu_read_src(e, &x->src[s], s == 2 && prec == P_H ? P_F : prec, s)) return false;
    /* lanes: double 2, float 4, half 4 (inputs half, results float) */
    int nl = prec == P_D ? 2 : 4;
    int oprec = prec == P_H ? P_F : prec;
    if (x->reduce) oprec = prec == P_D ? P_F : P_H;
    bool u = x->insn == VI_vmulu || x->insn == VI_vfmau, d = x->insn == VI_vmuld || x->insn == VI_vfmad;
    bool mul = x->insn == VI_vmul || x->insn == VI_vmulu || x->insn == VI_vmuld;
    bool fm = x->insn == VI_vfma || x->insn == VI_vfmau || x->insn == VI_vfmad, add = x->insn == VI_vadd;
    double na = x->src[0].neg ? -1 : 1, nb = x->nsrc > 1 && x->src[1].neg ? -1 : 1,
           nc = x->nsrc > 2 && x->src[2].neg ? -1 : 1;
    Lanes *L = lanes(e);
    if (prec == P_F && oprec == P_F && !u && !d) {
        /* the common case straight on the words: float arithmetic is correctly rounded */
        float sa = (float)na, sb = (float)nb;
        for (int c = 0; c < NCYC; c++) {
            memset(r->flag[c], 0, np);
            for (int l = 0; l < 4; l++) {
                const uint32_t *A = e->src[0][c][l], *B = e->src[1][c][l], *C = e->src[2][c][l];
                uint32_t *R = r->w[c][l];
                float sc = (float)nc;
                uint8_t *fl = r->flag[c];
                uint8_t fb = l == 0 ? 0xc : l == 1 ? 0x3 : 0;
#define FLUSH(u) ((u) & (((u)&0x7f800000u) ? ~0u : 0x80000000u))
#define LOOP(EXPR)                                                                                            \
    for (size_t p = 0; p < np; p++) {                                                                         \
        uint32_t ua = FLUSH(A[p]), ub = FLUSH(B[p]), uc = FLUSH(C[p]);                                        \
        float fa, fbv, fc, o;                                                                                 \
        memcpy(&fa, &ua, 4), memcpy(&fbv, &ub, 4), memcpy(&fc, &uc, 4);                                       \
        fa *= sa, fbv *= sb, fc *= sc;                                                                        \
        o = (EXPR);                                                                                           \
        uint32_t uo;                                                                                          \
        memcpy(&uo, &o, 4);                                                                                   \
        uo = (uo & 0x7f800000u) ? uo : 0;                                                                     \
        uo = ((uo & 0x7f800000u) == 0x7f800000u && (uo & 0x7fffffu)) ? (uo & 0x80000000u) | 0x7fc00000u : uo; \
        R[p] = uo;                                                                                            \
    }
                if (x->nsrc < 2) B = e->zero_row;
                if (x->nsrc < 3) C = e->zero_row;
                if (fm)
                    LOOP(fma_f(fa, fbv, fc))
                else if (mul)
                    LOOP(fa * fbv)
                else if (add)
                    LOOP(fa + fbv)
                else
                    LOOP(fa)
#undef LOOP
#undef FLUSH
                if (fb)
                    for (size_t p = 0; p < np; p++) fl[p] |= (R[p] >> 31) ? 0 : fb;
            }
            e->st.pe_element_ops += (int64_t)np * 4;
        }
        return true;
    }
    for (int c = 0; c < NCYC; c++) {
        uint32_t **A = e->src[0][c], **B = e->src[1][c], **C = e->src[2][c], **R = r->w[c];
        if (emu_lane_bits(oprec) * nl < 128)
            for (int w = 0; w < 4; w++) memset(R[w], 0, np * 4);
        memset(r->flag[c], 0, np);
        for (int l = 0; l < nl; l++) {
            double *a = L->fa, *b = L->fb, *cc = L->fc, *o = L->fo;
            unpack_f(A, prec, l, a, np);
            if (x->nsrc > 1) unpack_f(B, prec, l, b, np);
            if (x->nsrc > 2) unpack_f(C, prec == P_H ? P_F : prec, l, cc, np); /* half ops add in float */
            if (prec == P_D) {
                for (size_t p = 0; p < np; p++) {
                    double va = na * a[p], vb = nb * b[p], vc = nc * cc[p];
                    o[p] = fm ? fma(va, vb, vc) : mul ? va * vb : add ? va + vb : va;
                }
            } else {
                /* float and half inputs: the product is exact in double, so a*b+c is
                 * one double rounding, then the float result (docs/vsm.md 5.2) */
                for (size_t p = 0; p < np; p++) {
                    float va = (float)(na * a[p]), vb = (float)(nb * b[p]), vc = (float)(nc * cc[p]);
                    o[p] = fm ? fma_f(va, vb, vc) : mul ? va * vb : add ? va + vb : va;
                }
            }
            if (u || d)
                for (size_t p = 0; p < np; p++) {
                    bool active = u ? (p & 3) < 2 : (p & 3) >= 2;
                    if (!active) o[p] = fm ? nc * cc[p] : 0;
                }
            pack_f(R, oprec, l, o, np, true);
            /* the flag reads the normalised result: a flushed or zero result is +0 */
            for (size_t p = 0; p < np; p++) {
                uint32_t top = oprec == P_H ? get16(R, l, p) : R[oprec == P_D ? 2 * l : l][p] >> (oprec == P_D ? 0 : 0);
                L->lf[p] = oprec == P_H ? !(top & 0x8000) : !(top >> 31);
            }
            add_flags(r->flag[c], L->lf, emu_lane_bits(oprec), l, np);
        }
        e->st.pe_element_ops += (int64_t)np * nl;
    }
    return true;
}

bool emu_exec_alu(Emu *e, const VExpr *x, Result *r) {
    if (!alu_compute(e, x, r)) return false;
    if (!e->strict) return true;
    size_t np = (size_t)e->npe;
    int bits = emu_lane_bits(x->prec == P_NONE ? P_L : x->prec);
    if (x->insn == VI_zero || x->insn == VI_imm)
        emu_def_all(e, r, 1);
    else if (x->insn == VI_msl || x->insn == VI_msr) {
        for (int c = 0; c < NCYC; c++)
            for (int w = 0; w < 4; w++)
                for (size_t p = 0; p < np; p++) {
                    size_t q = x->insn == VI_msl ? (p & ~(size_t)3) | ((p + 3) & 3) : (p & ~(size_t)3) | ((p + 1) & 3);
                    r->def[c][w][p] = e->sdef[0][c][w][q];
                }
    } else {
        emu_def_lanes(e, x->nsrc, bits, r);
        if (x->insn == VI_bfn) /* a block depends on all 4 PEs of the MAB */
            for (int c = 0; c < NCYC; c++)
                for (int w = 0; w < 4; w++)
                    for (size_t p0 = 0; p0 < np; p0 += 4) {
                        uint8_t d =
                            r->def[c][w][p0] & r->def[c][w][p0 + 1] & r->def[c][w][p0 + 2] & r->def[c][w][p0 + 3];
                        memset(r->def[c][w] + p0, d, 4);
                    }
    }
    return true;
}

bool emu_exec_mau_vec(Emu *e, const VExpr *x, Result *r) {
    if (!mau_vec_compute(e, x, r)) return false;
    if (e->strict) emu_def_lanes(e, x->nsrc, x->prec == P_H || x->reduce ? 0 : emu_lane_bits(x->prec), r);
    return true;
}

/* ---- the MAU: matrix registers ---- */

/* The matrix registers are 16 x 16 values per MAB; double uses the top-left 4 x 4, float
 * 8 x 8, half all of it. Each is held transposed, element (row, col) at MX(row, col), so
 * that a product reads the rows side by side for each column. */
#define MX_N 16
#define MX(row, col) ((col)*MX_N + (row))
static int mx_rows(int prec) { return prec == P_D ? 4 : prec == P_F ? 8 : 16; }

typedef struct {
    Emu *e;
    const VExpr *x;
    double *M;
    uint8_t *D; /* --strict: the register's definedness */
    int rows;
} Mwrite;

/* the PEs [lo, hi) (whole MABs) write their rows of the matrix register */
static void mwrite_pes(void *ctx, size_t lo, size_t hi) {
    const Mwrite *v = ctx;
    const VExpr *x = v->x;
    const VOperand *d = &x->dst[0];
    Emu *e = v->e;
    int rows = v->rows;
    for (size_t p = lo; p < hi; p++) /* a PE's cycles together: they write its MAB's register */
        for (int c = 0; c < NCYC; c++) {
            double *m = v->M + MX_N * MX_N * (p / 4);
            uint8_t *md = v->D ? v->D + MX_N * MX_N * (p / 4) : NULL;
            int j = (int)(p & 3);
            if (x->prec == P_D) { /* one double per PE and cycle: row R + c, column p */
                int row = (int)d->addr + c;
                if (row >= rows) continue;
                m[MX(row, j)] = lane_f(e->src[0][c], P_D, 0, p);
                if (md) md[row * MX_N + j] = e->sdef[0][c][0][p] & e->sdef[0][c][1][p];
            } else if (x->prec == P_F) { /* two floats: row R + c, columns 2p, 2p + 1 */
                int row = (int)d->addr + c;
                if (row >= rows) continue;
                for (int h = 0; h < 2; h++) {
                    m[MX(row, 2 * j + h)] = lane_f(e->src[0][c], P_F, h, p);
                    if (md) md[row * MX_N + 2 * j + h] = e->sdef[0][c][h][p];
                }
            } else { /* halves: long word k of the access is row R + 2c + k, columns 4p..4p+3 */
                int nk = x->src[0].width == 4 ? 2 : 1;
                for (int k = 0; k < nk; k++) {
                    int row = (int)d->addr + nk * c + k;
                    if (row >= rows) continue;
                    for (int h = 0; h < 4; h++) {
                        m[MX(row, 4 * j + h)] = lane_f(e->src[0][c], P_H, 4 * k + h, p);
                        if (md) md[row * MX_N + 4 * j + h] = e->sdef[0][c][2 * k + h / 2][p];
                    }
                }
            }
        }
}

bool emu_exec_mwrite(Emu *e, const VExpr *x) {
    size_t np = (size_t)e->npe;
    if (!emu_read_src(e, &x->src[0], x->prec, 0)) return false;
    const VOperand *d = &x->dst[0];
    if (x->ndst != 1 || (d->kind != K_MX && d->kind != K_MY))
        return emu_fail(e, "mwrite writes one matrix register ($lx or $ly)");
    int rows = mx_rows(x->prec);
    if (d->addr >= (uint32_t)rows)
        return emu_fail(e, "a %s matrix has rows 0..%d",
                        x->prec == P_D   ? "double"
                        : x->prec == P_F ? "float"
                                         : "half",
                        rows - 1);
    Mwrite v = {e, x, e->mx[d->kind == K_MY], e->strict ? e->mx_def[d->kind == K_MY] : NULL, rows};
    emu_pool_run(e->pool, np, 4, mwrite_pes, &v);
    return true;
}

/* one matrix-vector instruction, its operands decoded once (emu_exec_matvec) */
typedef struct {
    Emu *e;
    const VExpr *x;
    Result *r;
    const double *M;
    bool fma_, up, down;
    int oprec;
    double nb, nc;
} Matvec;

/* The float result nearest s + e, a sum held as two doubles (the error-free accumulation below): s + e rounded
 * to double and that to float is the nearest float unless the double lands exactly halfway between two floats,
 * where the part below the double's precision decides. */
static inline float round_sum_f(double s, double e) {
    if (!isfinite(s)) return (float)s; /* an infinite or NaN operand (a finite sum of floats' products never is) */
    double hi = s + e, bb = hi - s, lo = (s - (hi - bb)) + (e - bb);
    float f = (float)hi;
    /* halfway: the 29 bits a float drops from a double are 1 then zeros (in the floats' normal range; a smaller
     * result flushes to zero whatever its rounding) */
    if ((d_bits(hi) & 0x1fffffffu) == 0x10000000u && lo != 0 && isfinite(f)) {
        double d = hi - (double)f; /* exact: towards the other neighbour */
        if ((lo > 0) == (d > 0)) f = nextafterf(f, d > 0 ? INFINITY : -INFINITY); /* past halfway, towards it */
    }
    return f;
}

/* Rows [0, nr) of X (held transposed: xt[MX(row, k)]) times b[0..nk) plus acc: every product of two floats (or halves)
 * is exact in double; the sum is accumulated with each addition's rounding error kept (TwoSum) and summed apart,
 * rows side by side so that the loop runs on vectors. */
HOT_LOOPS static void matvec_rows(const double *xt, const double *b, int nr, int nk, const double *acc, float *out) {
    double s[16], err[16];
    for (int r = 0; r < nr; r++) s[r] = acc[r], err[r] = 0;
    for (int k = 0; k < nk; k++)
        for (int r = 0; r < nr; r++) {
            double pr = xt[MX(r, k)] * b[k], t = s[r] + pr, bb = t - s[r];
            err[r] += (s[r] - (t - bb)) + (pr - bb);
            s[r] = t;
        }
    for (int r = 0; r < nr; r++) out[r] = round_sum_f(s[r], err[r]);
}

/* cycle c of MAB p0 / 4 in float (n 2) or half (n 4): a constant n at each call, so that its divisions fold */
static inline __attribute__((always_inline)) void matvec_fh(const Matvec *v, int c, size_t p0, const double *m,
                                                            const int n) {
    Emu *e = v->e;
    uint32_t **B = e->src[1][c], **C = e->src[2][c], **R = v->r->w[c];
    const int nr = 4 * n, prec = n == 2 ? P_F : P_H;
    double b[16], acc[16];
    float y[16];
    for (int k = 0; k < nr; k++) b[k] = v->nb * lane_f(B, prec, k % n, p0 + (size_t)(k / n));
    for (int r = 0; r < nr; r++) acc[r] = v->fma_ ? v->nc * (double)in_f(C[r % n][p0 + (size_t)(r / n)]) : 0;
    matvec_rows(m, b, nr, nr, acc, y);
    int bits = emu_lane_bits(v->oprec);
    for (int j = 0; j < 4; j++) {
        size_t p = p0 + (size_t)j;
        bool lf[4] = {0};
        for (int h = 0; h < n; h++) {
            float o = y[n * j + h];
            if (v->oprec == P_F)
                R[h][p] = out_f(o);
            else
                put_f(R, v->oprec, h, p, o, true);
            lf[h] = o == 0 || !signbit(o);
        }
        v->r->flag[c][p] = flag_bits(bits, lf);
    }
}

/* MABs [lo, hi) of every cycle. Double: PE j gets row j of X times the 4 PEs' doubles, in long double. Float and
 * half: b is the MAB's 8 floats (PE k gives b[2k], b[2k+1]) or 16 halves (b[4k..4k+3] from PE k's first long
 * word); PE j gets y[n j .. n j + n) (n 2 or 4), each the sum rounded once to float (docs/vsm.md 5.3). The results
 * do not depend on how the MABs are split over threads. */
static void matvec_mabs(void *ctx, size_t lo, size_t hi) {
    const Matvec *v = ctx;
    const VExpr *x = v->x;
    Emu *e = v->e;
    int n = x->prec == P_F ? 2 : 4; /* float: 8 rows and columns; half: 16 */
    for (size_t mab = lo; mab < hi; mab++) {
        size_t p0 = 4 * mab;
        const double *m = v->M + MX_N * MX_N * mab;
        for (int c = 0; c < NCYC; c++) {
            if (x->prec == P_D) {
                uint32_t **B = e->src[1][c], **C = e->src[2][c], **R = v->r->w[c];
                double b[4];
                for (int k = 0; k < 4; k++) b[k] = v->nb * lane_f(B, P_D, 0, p0 + (size_t)k);
                for (int j = 0; j < 4; j++) {
                    size_t p = p0 + (size_t)j;
                    bool lf[4] = {0};
                    double add = v->fma_ ? v->nc * lane_f(C, P_D, 0, p) : 0;
                    bool act = (v->up && j < 2) || (v->down && j >= 2);
                    long double s = add;
                    if (act)
                        for (int k = 0; k < 4; k++) s += (long double)m[MX(j, k)] * (long double)b[k];
                    put_f(R, v->oprec, 0, p, (double)s, true);
                    lf[0] = s == 0 || !signbit((double)s);
                    v->r->flag[c][p] = flag_bits(emu_lane_bits(v->oprec), lf);
                }
                continue;
            }
            if (n == 2)
                matvec_fh(v, c, p0, m, 2);
            else
                matvec_fh(v, c, p0, m, 4);
        }
    }
}

bool emu_exec_matvec(Emu *e, const VExpr *x, Result *r) {
    size_t np = (size_t)e->npe;
    const VOperand *mo = &x->src[0];
    if (mo->kind != K_MX && mo->kind != K_MY)
        return emu_fail(e, "the first source of %s is $lx or $ly", vsm_insns[x->insn].name);
    for (int s = 1; s < x->nsrc; s++)
        if (!emu_read_src(e, &x->src[s], x->prec == P_H && s == 2 ? P_F : x->prec, s)) return false;
    r->fw = FW_MAU;
    r->has_flags = true;
    Matvec v = {e,     x,     r, e->mx[mo->kind == K_MY], false,
                false, false, 0, x->src[1].neg ? -1 : 1,  x->nsrc > 2 && x->src[2].neg ? -1 : 1};
    v.fma_ = x->insn == VI_mfmau || x->insn == VI_mfmad || x->insn == VI_mfma;
    v.up = x->insn == VI_mmulu || x->insn == VI_mfmau, v.down = x->insn == VI_mmuld || x->insn == VI_mfmad;
    v.oprec = x->prec == P_D ? (x->reduce ? P_F : P_D) : x->reduce ? P_H : P_F;
    for (int c = 0; c < NCYC; c++)
        for (int w = 0; w < 4; w++) memset(r->w[c][w], 0, np * 4);
    emu_pool_run(e->pool, np / 4, 1, matvec_mabs, &v);
    e->st.pe_element_ops += NCYC * (int64_t)np * (x->prec == P_D ? 4 : x->prec == P_F ? 16 : 64);
    if (e->strict) /* each output depends on the MAB's matrix and all 4 PEs' inputs */
        for (int c = 0; c < NCYC; c++)
            for (size_t p0 = 0; p0 < np; p0 += 4) {
                const uint8_t *md = e->mx_def[mo->kind == K_MY] + MX_N * MX_N * (p0 / 4);
                int rows = mx_rows(x->prec);
                uint8_t d = 1;
                for (int i = 0; i < rows; i++)
                    for (int k = 0; k < rows; k++) d &= md[i * MX_N + k];
                for (int s2 = 1; s2 < x->nsrc; s2++)
                    for (int k = 0; k < 4; k++)
                        for (int w = 0; w < 4; w++) d &= e->sdef[s2][c][w][p0 + (size_t)k];
                for (int k = 0; k < 4; k++)
                    for (int w = 0; w < 4; w++) r->def[c][w][p0 + (size_t)k] = d;
            }
    return true;
}

bool emu_exec_mread(Emu *e, const VExpr *x, Result *r) {
    size_t np = (size_t)e->npe;
    const VOperand *mo = &x->src[0];
    if (mo->kind != K_MX && mo->kind != K_MY) return emu_fail(e, "mread reads $lx or $ly");
    double *M = e->mx[mo->kind == K_MY];
    int rows = mx_rows(x->prec);
    if (mo->addr >= (uint32_t)rows)
        return emu_fail(e, "a %s matrix has columns 0..%d",
                        x->prec == P_D   ? "double"
                        : x->prec == P_F ? "float"
                                         : "half",
                        rows - 1);
    r->fw = FW_MREAD;
    r->has_flags = false;
    for (int c = 0; c < NCYC; c++) {
        uint32_t **R = r->w[c];
        for (int w = 0; w < 4; w++) memset(R[w], 0, np * 4);
        memset(r->flag[c], 0, np);
        for (size_t p = 0; p < np; p++) {
            const double *m = M + MX_N * MX_N * (p / 4);
            const uint8_t *md = e->strict ? e->mx_def[mo->kind == K_MY] + MX_N * MX_N * (p / 4) : NULL;
            int j = (int)(p & 3);
            uint8_t d = 1;
            /* transposed: the elements a write of the same form would have put in
             * (row, column) come back from (column, row) */
            if (x->prec == P_D) {
                put_f(R, P_D, 0, p, m[MX(j, c)], false);
                if (md) d = md[j * MX_N + c];
            } else if (x->prec == P_F) {
                int col = (int)mo->addr + c;
                if (col >= rows) continue;
                for (int h = 0; h < 2; h++) {
                    put_f(R, P_F, h, p, m[MX(2 * j + h, col)], false);
                    if (md) d &= md[(2 * j + h) * MX_N + col];
                }
            } else {
                int nk = 2; /* hmread always reads two long words: columns R + 2c, R + 2c + 1 */
                for (int k = 0; k < nk; k++) {
                    int col = (int)mo->addr + nk * c + k;
                    if (col >= rows) continue;
                    for (int h = 0; h < 4; h++) {
                        put_f(R, P_H, 4 * k + h, p, m[MX(4 * j + h, col)], false);
                        if (md) d &= md[(4 * j + h) * MX_N + col];
                    }
                }
            }
            if (e->strict)
                for (int w = 0; w < 4; w++) r->def[c][w][p] = d;
        }
    }
    return true;
}
