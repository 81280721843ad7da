/* Code Emit: elementwise nodes on the vector path, 4 long words a step.
 *
 * A node's kind (an ALU or MAU instruction, a sequence of them, an integer sequence of
 * 32- or 64-bit lanes) decides its steps; operands are LM values whose long words line
 * up with the output's (element maps say where each output long word's operand words
 * are when a broadcast or a reshape moves them within a PE) or one-element immediates.
 * Renames (reshapes, layout switches) and Slices that keep every element on its PE and
 * slot are copies long word by long word; so are moves between banks. */
#include "emit_impl.h"
#include "app.h"
#include "layout.h"
#include "memo.h"
#include "ops.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bank_of(const MNValue *v) { return v->loc == MN_LOC_LM1 ? 1 : 0; }

/* ---- elementwise ---- */

typedef enum {
    EW_NONE,
    EW_UNARY_ALU,
    EW_UNARY_MAU,
    EW_BINARY_MAU,
    EW_BINARY_ALU,
    EW_DIV,
    EW_SIGMOID,
    EW_SQRT,
    EW_COPY,
    EW_SEQ,
    EW_INT
} Kind;

/* Unary ops as short sequences over GRF temporaries: X the input, O the output, T1 T2
 * temporaries (4 long words each), K0..K15 constants (one long word, read in every
 * cycle), set before the loop from attributes or immediate inputs; T1 and T3 are in GRF0,
 * T2, T4 and the constants in GRF1. Each line is a
 * step; a nop follows each but the last (a GRF result is read 2 steps later). No step
 * reads two temporaries of one GRF or two constants: each of GRF0 (T1, T3) and GRF1 (T2,
 * T4, the constants) has one read port. */
typedef struct {
    const char *steps;
    int nk;
    double k[16];
    char buf[32768]; /* steps built for the node's dtype (Mod's long division: 64 rounds of 10) */
} Seq;

/* the constant operand k of n (an immediate input, or an attribute), or dflt */
static double konst_in(const MNNode *n, int k, const char *attr, double dflt) {
    if (k < n->nin && n->in[k] && n->in[k]->konst && n->in[k]->konst->numel == 1)
        return ir_tensor_get_f(n->in[k]->konst, 0);
    return attr ? ir_attr_float(n, attr, dflt) : dflt;
}

/* Atan's constants (Asin and Acos run its steps): an odd polynomial of degree 13 fitted
 * within 3e-7 of atan on [0, 1] (t, t^3, ..., t^13), 0, pi/2, -1 */
static const double atan_k[10] = {0.9999961115440325,   -0.3331736802549678,
                                  0.19807815253147515,  -0.13233340800442048,
                                  0.07962364735327294,  -0.03360419797299538,
                                  0.006811785577068102, 0,
                                  1.5707963267948966,   -1};

/* Horner's steps appended at b (o used of cap): A = K[hi]; then A = A S + K[k] for k = hi - 1
 * down to lo (A in GRF0, S in GRF1) */
static size_t horner(char *b, size_t o, size_t cap, const char *a, const char *sq, int hi, int lo) {
    o += (size_t)snprintf(b + o, cap - o, "fvpassa K%d %s\n", hi, a);
    for (int k = hi - 1; k >= lo; k--)
        o += (size_t)snprintf(b + o, cap - o, "fvmul %s %s %s\nfvadd %s K%d %s\n", a, sq, a, a, k, a);
    return o;
}

/* atan of u (X, or T4 set by steps before): a = |u| + 0 (not -0), t = min(a, 1 / a), p = t q(t^2)
 * (atan_k's polynomial); |atan u| = p, or pi/2 - p where a >= 1; the sign: the part where u
 * > 0 (a relu-select) less the rest; left as that part in T2 and the rest in T1 */
static size_t atan_steps(char *b, size_t o, size_t cap, const char *u) {
    o += (size_t)snprintf(b + o, cap - o,
                          "fvpassa -%s T1\nfmax %s T1 T3\nfvadd T3 K7 T3\nfrcp T3 T2\nfmin T3 T2 T1\n"
                          "fvmul T1 T1 T2\n",
                          u, u);
    o = horner(b, o, cap, "T3", "T2", 6, 0);
    return o + (size_t)snprintf(b + o, cap - o,
                                "fvpassa T3 T2\nfvmul T1 T2 T1\nfvpassa -%s T3\nfmax %s T3 T3\nfvadd T3 K9 T3\n"
                                "fvadd -T1 K8 T2\nfvadd T2 -T1 T2\nfrelu T3 T2 T2\nfvadd T1 T2 T1\nfrelu %s T1 T2\n"
                                "fvadd T1 -T2 T1\n",
                                u, u, u);
}

/* the sequence of n, or NULL (then why says why) */
static bool seq_of(const MNNode *n, Seq *q, const char **why) {
    memset(q, 0, sizeof *q);
    *why = NULL;
    switch (n->op) {
    case OP_LeakyRelu: /* max(x, alpha x) for alpha <= 1, min above */
        q->k[0] = ir_attr_float(n, "alpha", 0.01);
        q->nk = 1;
        q->steps = q->k[0] <= 1 ? "fvmul X K0 T1\nfmax X T1 O" : "fvmul X K0 T1\nfmin X T1 O";
        return true;
    case OP_Clip: { /* min and max: inputs from opset 11, attributes before */
        double lo =
            n->nin > 1 || ir_attr(n, "min") ? konst_in(n, 1, "min", -3.4028234663852886e38) : -3.4028234663852886e38;
        double hi =
            n->nin > 2 || ir_attr(n, "max") ? konst_in(n, 2, "max", 3.4028234663852886e38) : 3.4028234663852886e38;
        for (int k = 1; k < n->nin; k++)
            if (n->in[k] && !(n->in[k]->konst && n->in[k]->konst->numel == 1)) {
                *why = "bounds computed at run time";
                return false;
            }
        q->steps = "fmax X K0 T1\nfmin T1 K1 O";
        q->nk = 2;
        q->k[0] = lo;
        q->k[1] = hi;
        return true;
    }
    case OP_Pow: {
        if (n->nin < 2 || !n->in[1] || !n->in[1]->konst || n->in[1]->konst->numel != 1) {
            *why = "an exponent that is not one constant";
            return false;
        }
        double y = ir_tensor_get_f(n->in[1]->konst, 0);
        if (y == 1)
            q->steps = "lpassa X O";
        else if (y == 2)
            q->steps = "fvmul X X O";
        else if (y == 3)
            q->steps = "fvmul X X T1\nfvmul T1 X O";
        else if (y == -1)
            q->steps = "frcp X O";
        else {
            *why = "an exponent other than -1, 1, 2, 3 (0.5 is Sqrt)";
            return false;
        }
        return true;
    }
    case OP_Tanh: /* 1 - 2 / (1 + e^(2x)) */
        q->steps = "fvmul X K0 T1\nfexp T1 T1\nfvadd T1 K1 T1\nfrcp T1 T1\nfvmul T1 K2 T1\nfvadd T1 K1 O";
        q->nk = 3;
        q->k[0] = 2;
        q->k[1] = 1;
        q->k[2] = -2;
        return true;
    case OP_Softplus: /* max(x, 0) + log(1 + e^-|x|): no overflow for large x */
        q->steps = "fvpassa -X T1\nfmax X T1 T1\nfvpassa -T1 T1\nfexp T1 T1\nfvadd T1 K0 T1\nflog T1 T1\nfrelu X X "
                   "T2\nfvadd T1 T2 O";
        q->nk = 1;
        q->k[0] = 1;
        return true;
    case OP_ThresholdedRelu: /* x - relu-select(alpha - x, x): x where x > alpha, else 0 (at alpha too) */
        q->steps = "fvadd -X K0 T1\nfrelu T1 X T1\nfvadd X -T1 O";
        q->nk = 1;
        q->k[0] = ir_attr_float(n, "alpha", 1.0);
        return true;
    case OP_Floor: q->steps = "ffloor X O"; return true;
    case OP_Ceil: q->steps = "fvpassa -X T1\nffloor T1 T1\nfvpassa -T1 O"; return true;
    case OP_HardSigmoid: /* max(0, min(1, alpha x + beta)) */
        q->steps = "fvmul X K0 T1\nfvadd T1 K1 T1\nfmin T1 K2 T1\nfrelu T1 T1 O";
        q->nk = 3;
        q->k[0] = ir_attr_float(n, "alpha", 0.2);
        q->k[1] = ir_attr_float(n, "beta", 0.5);
        q->k[2] = 1;
        return true;
    case OP_HardSwish: /* x * max(0, min(1, x / 6 + 1/2)) */
        q->steps = "fvmul X K0 T1\nfvadd T1 K1 T1\nfmin T1 K2 T1\nfrelu T1 T1 T1\nfvmul T1 X O";
        q->nk = 3;
        q->k[0] = 1.0 / 6;
        q->k[1] = 0.5;
        q->k[2] = 1;
        return true;
    case OP_Elu: /* relu(x) + alpha (e^min(x, 0) - 1): one term is 0 on each side */
    case OP_Selu: { /* the same scaled by gamma */
        double g = n->op == OP_Selu ? ir_attr_float(n, "gamma", 1.05070102214813232421875) : 1;
        q->k[0] = g * ir_attr_float(n, "alpha", n->op == OP_Selu ? 1.67326319217681884765625 : 1);
        q->k[1] = -1;
        q->k[2] = 0;
        q->k[3] = g;
        q->nk = 4;
        q->steps = g == 1 ? "fmin X K2 T1\nfexp T1 T1\nfvadd T1 K1 T1\nfvmul T1 K0 T1\nfrelu X X T2\nfvadd T1 T2 O"
                          : "fvmul X K3 T1\nfrelu T1 T1 T2\nfmin X K2 T1\nfexp T1 T1\nfvadd T1 K1 T1\nfvmul T1 K0 "
                            "T1\nfvadd T1 T2 O";
        if (g <= 0) { /* relu(gamma x) is gamma relu(x) only for gamma > 0 */
            *why = "gamma <= 0";
            return false;
        }
        return true;
    }
    case OP_Sign: /* x 2^127 clipped to [-1, 1]: every normal x reaches +-1, 0 stays 0 */
        q->steps = "fvmul X K0 T1\nfmax T1 K1 T1\nfmin T1 K2 O";
        q->nk = 3;
        q->k[0] = 1.7014118346046923e38;
        q->k[1] = -1;
        q->k[2] = 1;
        return true;
    case OP_Round: /* to nearest, ties to even: |x| + 2^23 - 2^23 rounds so below 2^23 (float adds round to even);
                    * from 2^23 on |x| is whole already. The two sides as relu-selects (2^23 - 1/2 - |x| >= 0 and
                    * |x| - 2^23 >= 0 hold apart), then the sign: the part where x's sign bit is clear less the part where
                    * -x's is (-0 stays -0, an infinity stays one) */
        q->k[0] = 8388608;
        q->k[1] = -8388608;
        q->k[2] = 8388607.5;
        q->nk = 3;
        q->steps = "fvpassa -X T1\nfmax X T1 T1\nfvadd T1 K0 T3\nfvadd T3 K1 T3\nfvadd T1 K1 T2\nfvadd -T1 K2 T4\n"
                   "frelu T2 T1 T1\nfrelu T4 T3 T3\nfvpassa T3 T2\nfvadd T1 T2 T3\nfrelu X T3 T2\nfvpassa -X T4\n"
                   "frelu T4 T3 T1\nfvadd T2 -T1 O";
        return true;
    case OP_Mish: /* x tanh(softplus x) = x u (u + 2) / (u (u + 2) + 2), u = e^x: no cancellation for small u; x
                   * clipped at 20 first (the fraction is 1 in float from there, and u (u + 2) stays finite) */
        q->k[0] = 20;
        q->k[1] = 2;
        q->nk = 2;
        q->steps = "fmin X K0 T1\nfexp T1 T1\nfvadd T1 K1 T2\nfvmul T1 T2 T1\nfvadd T1 K1 T2\nfrcp T2 T2\n"
                   "fvmul T1 T2 T1\nfvmul T1 X O";
        return true;
    case OP_Gelu: /* x/2 (1 + erf(x / sqrt 2)), Erf's steps on T4 = x / sqrt 2; the tanh form:
                   * x/2 (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), Tanh's steps on T4 */
        if (!strcmp(ir_attr_string(n, "approximate", "none"), "tanh")) {
            static const double c[6] = {2, 1, -2, 0.044715, 0.7978845608028654, 0.5};
            memcpy(q->k, c, sizeof c);
            q->nk = 6;
            q->steps = "fvmul X X T1\nfvmul T1 K3 T1\nfvmul T1 X T1\nfvadd T1 X T1\nfvmul T1 K4 T1\nfvmul T1 K0 T1\n"
                       "fexp T1 T1\nfvadd T1 K1 T1\nfrcp T1 T1\nfvmul T1 K2 T1\nfvadd T1 K1 T1\nfvadd T1 K1 T1\n"
                       "fvmul T1 K5 T1\nfvmul T1 X O";
            return true;
        }
        if (strcmp(ir_attr_string(n, "approximate", "none"), "none")) {
            *why = "an approximation other than none or tanh";
            return false;
        }
        /* fall through */ /* Erf's steps on T4 */
    case OP_Erf: { /* sign(x) (1 - t (a1 + t (a2 + ... + t a5)) e^-x^2), t = 1 / (1 + p |x|): Abramowitz and
                    * Stegun 7.1.26, within 1.5e-7 of erf; the sign: the part where x > 0 (a relu-select)
                    * less the rest */
        static const double c[9] = {0.3275911,    1,           1.061405429, -1.453152027,      1.421413741,
                                    -0.284496736, 0.254829592, 0.5,         0.7071067811865476};
        memcpy(q->k, c, sizeof c);
        bool gelu = n->op == OP_Gelu;
        q->nk = gelu ? 9 : 7;
        const char *x = gelu ? "T4" : "X";
        snprintf(q->buf, sizeof q->buf,
                 "%sfvpassa -%s T1\nfmax %s T1 T1\nfvmul T1 K0 T1\nfvadd T1 K1 T1\nfrcp T1 T2\nfvpassa K2 T1\n"
                 "fvmul T1 T2 T1\nfvadd T1 K3 T1\nfvmul T1 T2 T1\nfvadd T1 K4 T1\nfvmul T1 T2 T1\nfvadd T1 K5 T1\n"
                 "fvmul T1 T2 T1\nfvadd T1 K6 T1\nfvmul T1 T2 T1\nfvmul %s %s T2\nfvpassa -T2 T2\nfexp T2 T2\n"
                 "fvmul T1 T2 T1\nfvadd -T1 K1 T1\nfrelu %s T1 T2\nfvadd T1 -T2 T1\nfvadd T2 -T1 %s",
                 gelu ? "fvmul X K8 T4\n" : "", x, x, x, x, x,
                 gelu ? "T3\nfvadd T3 K1 T3\nfvmul T3 K7 T3\nfvmul T3 X O" : "O");
        q->steps = q->buf;
        return true;
    }
    case OP_Sin: /* r = x - 2 pi floor(x / 2 pi + 1/2) in [-pi, pi), then r p(r^2): an odd polynomial of degree */
    case OP_Cos: { /* 11 within 1e-7 of sin there (fitted); cos x = sin(x + pi/2) */
        static const double c[10] = {0.15915494309189535,     0.5,
                                     6.283185307179586,       0.9999996039200858,
                                     -0.16666553446099303,    0.008332407590639593,
                                     -0.00019808739947133232, 2.699822668431745e-06,
                                     -2.0366225650381153e-08, 1.5707963267948966};
        memcpy(q->k, c, sizeof c);
        q->nk = 10;
        const char *x = n->op == OP_Sin ? "X" : "T3";
        size_t o = (size_t)snprintf(q->buf, sizeof q->buf,
                                    "%sfvmul %s K0 T1\nfvadd T1 K1 T1\nffloor T1 T1\nfvmul T1 K2 T2\nfvadd %s -T2 T3\n"
                                    "fvmul T3 T3 T2\n",
                                    n->op == OP_Sin ? "" : "fvadd X K9 T3\n", x, x);
        o = horner(q->buf, o, sizeof q->buf, "T1", "T2", 8, 3);
        snprintf(q->buf + o, sizeof q->buf - o, "fvpassa T3 T2\nfvmul T1 T2 O");
        q->steps = q->buf;
        return true;
    }
    case OP_Celu: /* relu(x) + alpha (e^min(x / alpha, 0) - 1) */
        q->k[0] = 1 / ir_attr_float(n, "alpha", 1.0);
        q->k[1] = -1;
        q->k[2] = 0;
        q->k[3] = ir_attr_float(n, "alpha", 1.0);
        q->nk = 4;
        q->steps = "fvmul X K0 T1\nfmin T1 K2 T1\nfexp T1 T1\nfvadd T1 K1 T1\nfvmul T1 K3 T1\nfrelu X X T2\n"
                   "fvadd T1 T2 O";
        return true;
    case OP_Asinh: /* sign(x) log(|x| + sqrt(x^2 + 1)), the sign as Erf's; sqrt(v) = 1 / rsqrt(v) */
        q->k[0] = 1;
        q->nk = 1;
        q->steps = "fvmul X X T1\nfvadd T1 K0 T1\nfrsqrt T1 T1\nfrcp T1 T1\nfvpassa -X T2\nfmax X T2 T2\n"
                   "fvadd T1 T2 T1\nflog T1 T1\nfrelu X T1 T2\nfvadd T1 -T2 T1\nfvadd T2 -T1 O";
        return true;
    case OP_Acosh: /* log(x + sqrt(x^2 - 1)); 1 / rsqrt(0) is 0 */
        q->k[0] = -1;
        q->nk = 1;
        q->steps = "fvmul X X T1\nfvadd T1 K0 T1\nfrsqrt T1 T1\nfrcp T1 T1\nfvadd T1 X T1\nflog T1 O";
        return true;
    case OP_Atanh: /* log((1 + x) / (1 - x)) / 2 */
        q->k[0] = 1;
        q->k[1] = 0.5;
        q->nk = 2;
        q->steps = "fvadd X K0 T1\nfvadd -X K0 T2\nfrcp T2 T2\nfvmul T1 T2 T1\nflog T1 T1\nfvmul T1 K1 O";
        return true;
    case OP_Shrink: { /* x - bias where x > lambd, x + bias where x < -lambd, else 0: each side v - relu-select(c,
                       * v), c's sign bit clear (v taken, then cancelled) exactly where x is not past it */
        double l = ir_attr_float(n, "lambd", 0.5), b = ir_attr_float(n, "bias", 0.0);
        q->k[0] = l;
        q->k[1] = b;
        q->k[2] = -b;
        q->nk = 3;
        q->steps = "fvadd X K2 T2\nfvadd -X K0 T1\nfrelu T1 T2 T1\nfvadd T2 -T1 T3\nfvadd X K1 T2\nfvadd X K0 T1\n"
                   "frelu T1 T2 T1\nfvadd T2 -T1 T2\nfvadd T3 T2 O";
        return true;
    }
    case OP_Atan: /* atan_steps on x */
    case OP_Asin: /* atan(x / sqrt(1 - x^2)): atan_steps on T4 */
    case OP_Acos: { /* pi/2 - asin x */
        memcpy(q->k, atan_k, sizeof atan_k);
        q->nk = 10;
        size_t o = n->op == OP_Atan ? 0
                                    : (size_t)snprintf(q->buf, sizeof q->buf,
                                                       "fvmul X X T1\nfvadd T1 K9 T1\nfvpassa -T1 T1\nfrsqrt T1 T1\n"
                                                       "fvmul X T1 T4\n");
        o = atan_steps(q->buf, o, sizeof q->buf, n->op == OP_Atan ? "X" : "T4");
        snprintf(q->buf + o, sizeof q->buf - o, "%s",
                 n->op == OP_Acos ? "fvadd T2 -T1 T1\nfvadd -T1 K8 O" : "fvadd T2 -T1 O");
        q->steps = q->buf;
        return true;
    }
    case OP_Tan: { /* r = x - pi floor(x / pi + 1/2) in [-pi/2, pi/2), then r s(r^2) / c(r^2): polynomials of
                    * degree 9 and 10 fitted within 4e-9 of sin and cos there */
        static const double c[14] = {0.3183098861837907,      0.5,
                                     3.141592653589793,       0.9999999765897533,
                                     -0.1666664763455824,     0.008332899821964283,
                                     -0.00019800897677113571, 2.5904883269034507e-06,
                                     0.9999999997806648,      -0.49999999358480485,
                                     0.041666636258212486,    -0.001388836140117214,
                                     2.476016137242798e-05,   -2.6051495255474677e-07};
        memcpy(q->k, c, sizeof c);
        q->nk = 14;
        size_t o = (size_t)snprintf(q->buf, sizeof q->buf,
                                    "fvmul X K0 T1\nfvadd T1 K1 T1\nffloor T1 T1\nfvmul T1 K2 T2\nfvadd X -T2 T3\n"
                                    "fvpassa T3 T4\nfvmul T3 T3 T2\n");
        o = horner(q->buf, o, sizeof q->buf, "T1", "T2", 7, 3);
        o += (size_t)snprintf(q->buf + o, sizeof q->buf - o, "fvmul T1 T4 T1\n");
        o = horner(q->buf, o, sizeof q->buf, "T3", "T2", 13, 8);
        snprintf(q->buf + o, sizeof q->buf - o, "frcp T3 T4\nfvmul T1 T4 O");
        q->steps = q->buf;
        return true;
    }
    case OP_Sinh: /* (e^x - e^-x) / 2 */
    case OP_Cosh: /* (e^x + e^-x) / 2 */
        q->steps = n->op == OP_Sinh ? "fexp X T1\nfvpassa -X T2\nfexp T2 T2\nfvadd T1 -T2 T1\nfvmul T1 K0 O"
                                    : "fexp X T1\nfvpassa -X T2\nfexp T2 T2\nfvadd T1 T2 T1\nfvmul T1 K0 O";
        q->nk = 1;
        q->k[0] = 0.5;
        return true;
    case OP_Softsign: /* x / (1 + |x|) */
        q->steps = "fvpassa -X T1\nfmax X T1 T1\nfvadd T1 K0 T1\nfrcp T1 T1\nfvmul T1 X O";
        q->nk = 1;
        q->k[0] = 1;
        return true;
    default: return *why = "no emitter", false;
    }
}

/* Integer and bool elementwise ops, on 64-bit lanes (Long, ULong, LongBool) or 32-bit
 * ones (Int, UInt), as sequences with Y the second operand. A comparison is 1 where a
 * difference is 0 (logical not), so wrapping never decides it: x > y is max(x, y) != y. */
static bool int_seq_of(const MNNode *n, Seq *q) {
    if (!n->nin || !n->in[0] || !n->out[0] || n->nout != 1) return false;
    MNDtype dt = n->in[0]->dtype;
    if (n->op ==
        OP_MNCoreBitAnd) { /* a mask's bit patterns: whole lanes, of any width (vector_why checks both operands') */
        q->nk = 0;
        q->steps = "land X Y O";
        return true;
    }
    if (n->op == OP_Where) { /* 64-bit lanes picked by the condition's mask m = 0 - c: (y & m) | (z & ~m) */
        const MNValue *a = n->nin == 3 ? n->in[1] : NULL, *b = n->nin == 3 ? n->in[2] : NULL;
        MNDtype d = a ? a->dtype : dt;
        if (!a || !b || dt != MN_DT_LongBool || b->dtype != d || n->out[0]->dtype != d ||
            b->loc_kind == MN_LOC_KIND_IMM || !(d == MN_DT_Long || d == MN_DT_ULong || d == MN_DT_LongBool))
            return false;
        q->nk = 1;
        q->k[0] = 0;
        q->steps = "lsub $ls16 X T1\nland Y T1 T2\nlnot T1 T1\nland Z T1 T3\nlor T2 T3 O";
        return true;
    }
    bool l64 = dt == MN_DT_Long || dt == MN_DT_ULong || dt == MN_DT_LongBool,
         uns = dt == MN_DT_ULong || dt == MN_DT_UInt;
    if (!l64 && dt != MN_DT_Int && dt != MN_DT_UInt) return false; /* float nodes (most): before touching q's 16 KB */
    q->nk = 0;
    q->buf[0] = 0;
    q->steps = q->buf;
    for (int k = 1; k < n->nin; k++)
        if (!n->in[k] || n->in[k]->dtype != dt) return false;
    const char *p = l64 ? "l" : "i", *u = uns ? "u" : "", *fmt = NULL;
    bool cmp = false, logical = dt == MN_DT_LongBool;
    switch (n->op) {
    case OP_Add: fmt = "Padd X Y O"; break;
    case OP_Sub: fmt = "Psub X Y O"; break;
    case OP_Max: fmt = "UPmax X Y O"; break;
    case OP_Min: fmt = "UPmin X Y O"; break;
    case OP_Mul: { /* shift and add, bit by bit of y (the ALU has no integer product): wraps as int64 does */
        int bits = l64 ? 64 : 32;
        size_t o = (size_t)snprintf(q->buf, sizeof q->buf, "%cpassa X $ls40v\n%cpassa Y $lr48v\nzero $lr32v", *p, *p);
        for (int i = 0; i < bits; i++) /* m = -(b & 1); acc += a & m; a += a; b >>= 1 */
            o += (size_t)snprintf(q->buf + o, sizeof q->buf - o,
                                  "\n%1$cand $lr48v $ls16 $lr40v\n%1$csub $ls24 $lr40v $lr40v\n%1$cand $ls40v $lr40v "
                                  "$ls56v\n%1$cadd $lr32v $ls56v $lr32v\n"
                                  "%1$cadd $ls40v $ls40v $ls40v\nu%1$clsr $lr48v $ls16 $lr48v",
                                  *p);
        snprintf(q->buf + o, sizeof q->buf - o, "\n%cpassa $lr32v O", *p);
        q->steps = q->buf;
        q->nk = 2;
        q->k[0] = 1;
        q->k[1] = 0;
        return n->out[0]->dtype == dt && !logical;
    }
    case OP_Mod: { /* |x| mod |y| by long division (the ALU has no integer division), then the sign */
        int bits = l64 ? 64 : 32;
        bool fmod = ir_attr_int(n, "fmod", 0) != 0;
        size_t o;
        /* A = |x| ($lr64v, shifted out bit by bit), B = |y| ($ls40v), R = 0 ($lr32v); K0 = bits - 1
         * ($ls16), K1 = 0 ($ls24); T ($lr40v), U ($ls56v), V ($lr56v) scratch; one GRF1 operand a step */
        if (uns)
            o = (size_t)snprintf(q->buf, sizeof q->buf, "%1$cpassa X $lr64v\n%1$cpassa Y $ls40v\nzero $lr32v", *p);
        else
            o = (size_t)snprintf(
                q->buf, sizeof q->buf,
                "%1$cpassa X $lr40v\n%1$csub $ls24 $lr40v $lr40v\n%1$cmax X $lr40v $lr64v\n"
                "%1$cpassa Y $lr40v\n%1$csub $ls24 $lr40v $lr40v\n%1$cmax Y $lr40v $ls40v\nzero $lr32v",
                *p);
        for (int i = 0; i < bits; i++) /* R = 2 R + top bit of A; A = 2 A; R -= B where R >= B */
            o += (size_t)snprintf(q->buf + o, sizeof q->buf - o,
                                  "\nu%1$clsr $lr64v $ls16 $ls56v\n%1$cadd $lr64v $lr64v $lr64v\n%1$cadd $lr32v $lr32v "
                                  "$lr32v\n%1$cadd $lr32v $ls56v $lr32v\nu%1$cmin $lr32v $ls40v $lr40v\n%1$csub $lr40v "
                                  "$ls40v $lr40v\n%1$clnot $lr40v $lr40v\n%1$csub $ls24 $lr40v $lr40v\n%1$cand $lr40v "
                                  "$ls40v $ls56v\n%1$csub $lr32v $ls56v $lr32v",
                                  *p);
        if (!uns) /* x's sign: R = (R ^ s) - s, s = x >> (bits - 1) arithmetically */
            o += (size_t)snprintf(
                q->buf + o, sizeof q->buf - o,
                "\n%1$clsr X $ls16 $ls56v\n%1$cxor $lr32v $ls56v $lr32v\n%1$csub $lr32v $ls56v $lr32v", *p);
        if (!uns && !fmod) /* Python's: y's sign, y added where R is not 0 and its sign differs */
            o += (size_t)snprintf(q->buf + o, sizeof q->buf - o,
                                  "\n%1$cxor $lr32v Y $lr40v\n%1$clsr $lr40v $ls16 $lr40v\n%1$clnot $lr32v $lr56v\n"
                                  "%1$clnot $lr56v $lr56v\n%1$csub $ls24 $lr56v $ls56v\n%1$cand $lr40v $ls56v $lr40v\n"
                                  "%1$cand $lr40v Y $lr40v\n%1$cpassa $lr40v $ls56v\n%1$cadd $lr32v $ls56v $lr32v",
                                  *p);
        if (o + 32 >= sizeof q->buf) die("Mod's steps past their buffer");
        snprintf(q->buf + o, sizeof q->buf - o, "\n%cpassa $lr32v O", *p);
        q->steps = q->buf;
        q->nk = 2;
        q->k[0] = bits - 1;
        q->k[1] = 0;
        return n->nin == 2 && n->out[0]->dtype == dt && !logical;
    }
    case OP_Neg:
        if (uns) return false;
        fmt = "zero T1\nPsub T1 X O";
        break;
    case OP_Abs:
        if (uns) return false;
        fmt = "zero T1\nPsub T1 X T1\nPmax X T1 O";
        break;
    case OP_And:
        if (!logical) return false;
        fmt = "land X Y O";
        break;
    case OP_Or:
        if (!logical) return false;
        fmt = "lor X Y O";
        break;
    case OP_Xor:
        if (!logical) return false;
        fmt = "lxor X Y O";
        break;
    case OP_Not:
        if (!logical) return false;
        fmt = "llnot X O";
        break;
    case OP_BitShift: { /* the machine shifts by y mod the width; ONNX gives 0 from the width on:
                         * the result is anded with 0 - (y < W), all ones or none (W at $ls16,
                         * 0 at $ls24; one GRF1 operand a step) */
        if (!uns) return false;
        bool left = !strcmp(ir_attr_string(n, "direction", ""), "LEFT");
        const MNValue *y = n->in[1];
        if (y && y->loc_kind == MN_LOC_KIND_IMM && y->konst) { /* a constant shift: known to be below the width, or 0 */
            uint64_t k = (uint64_t)ir_tensor_get_i(y->konst, 0);
            fmt = k >= (uint64_t)(l64 ? 64 : 32) ? "Psub X X O" : left ? "Plsl X Y O" : "uPlsr X Y O";
            break;
        }
        fmt = left ? "UPmin Y $ls16 T1\nPsub $ls16 T1 T1\nPlnot T1 T1\nPlnot T1 T1\nPsub $ls24 T1 T1\nPlsl X Y "
                     "T2\nPand T2 T1 O"
                   : "UPmin Y $ls16 T1\nPsub $ls16 T1 T1\nPlnot T1 T1\nPlnot T1 T1\nPsub $ls24 T1 T1\nuPlsr X Y "
                     "T2\nPand T2 T1 O";
        q->nk = 2;
        q->k[0] = l64 ? 64 : 32;
        q->k[1] = 0;
        break;
    }
    case OP_Equal:
        fmt = "Psub X Y T1\nllnot T1 O";
        cmp = true;
        break;
    case OP_Greater:
        fmt = "UPmax X Y T1\nPsub T1 Y T1\nllnot T1 T1\nllnot T1 O";
        cmp = true;
        break;
    case OP_Less:
        fmt = "UPmin X Y T1\nPsub T1 Y T1\nllnot T1 T1\nllnot T1 O";
        cmp = true;
        break;
    case OP_GreaterOrEqual:
        fmt = "UPmin X Y T1\nPsub T1 Y T1\nllnot T1 O";
        cmp = true;
        break;
    case OP_LessOrEqual:
        fmt = "UPmax X Y T1\nPsub T1 Y T1\nllnot T1 O";
        cmp = true;
        break;
    default: return false;
    }
    if (cmp ? !l64 || n->out[0]->dtype != MN_DT_LongBool : n->out[0]->dtype != dt)
        return false; /* a bool per 64-bit lane */
    if (logical && n->op != OP_Equal && n->op != OP_And && n->op != OP_Or && n->op != OP_Xor && n->op != OP_Not)
        return false;
    size_t o = 0; /* U: the unsigned prefix, P: the lane's precision */
    for (const char *f = fmt; *f && o + 2 < sizeof q->buf; f++)
        if (*f == 'U') {
            if (*u) q->buf[o++] = 'u';
        } else
            q->buf[o++] = *f == 'P' ? *p : *f;
    q->buf[o] = 0;
    q->steps = q->buf;
    return true;
}

static void emit_seq(Em *e, const Seq *q, const char *X, const char *Y, const char *Z, const char *O) {
    const char *s = q->steps;
    while (*s) {
        const char *eol = strchr(s, '\n');
        size_t len = eol ? (size_t)(eol - s) : strlen(s);
        for (size_t i = 0; i < len; i++) {
            if (s[i] == 'X' && (i + 1 == len || s[i + 1] == ' '))
                buf_printf(e->b, "%s", X);
            else if (s[i] == 'Y' && Y && (i + 1 == len || s[i + 1] == ' '))
                buf_printf(e->b, "%s", Y);
            else if (s[i] == 'Z' && Z && (i + 1 == len || s[i + 1] == ' '))
                buf_printf(e->b, "%s", Z);
            else if (s[i] == 'O' && i + 1 == len)
                buf_printf(e->b, "%s", O);
            else if (s[i] == 'T' && i + 1 < len && s[i + 1] >= '1' && s[i + 1] <= '4') {
                static const char *const tmp[4] = {"$lr16v", "$ls32v", "$lr32v", "$ls40v"};
                buf_printf(e->b, "%s", tmp[s[i + 1] - '1']);
                i++;
            } else if (s[i] == 'K' && i + 1 < len && s[i + 1] >= '0' && s[i + 1] <= '9') {
                int k = s[i + 1] - '0';
                if (i + 2 < len && s[i + 2] >= '0' && s[i + 2] <= '9') k = 10 * k + s[++i + 1] - '0'; /* K10.. */
                buf_printf(e->b, "$ls%d", 64 + 2 * k);
                i++;
            } else
                buf_append(e->b, &s[i], 1);
        }
        buf_printf(e->b, "\n");
        if (!eol) break;
        buf_printf(e->b, "nop\n");
        s = eol + 1;
    }
}

static Kind kind_of(const MNNode *n, const char **mn) {
    Seq iq;
    if (int_seq_of(n, &iq)) {
        *mn = "int";
        return EW_INT;
    }
    switch (n->op) {
    case OP_Relu: *mn = "frelu"; return EW_UNARY_ALU;
    case OP_Exp: *mn = "fexp"; return EW_UNARY_ALU;
    case OP_Log: *mn = "flog"; return EW_UNARY_ALU;
    case OP_Reciprocal: *mn = "frcp"; return EW_UNARY_ALU;
    case OP_Neg: *mn = "neg"; return EW_UNARY_MAU;
    case OP_Abs: *mn = "abs"; return EW_UNARY_ALU;
    case OP_Add: *mn = "fvadd"; return EW_BINARY_MAU;
    case OP_Sub: *mn = "sub"; return EW_BINARY_MAU;
    case OP_Mul: *mn = "fvmul"; return EW_BINARY_MAU;
    case OP_Max: *mn = "fmax"; return EW_BINARY_ALU;
    case OP_Min: *mn = "fmin"; return EW_BINARY_ALU;
    case OP_Div: *mn = "div"; return EW_DIV;
    case OP_Sigmoid: *mn = "sigmoid"; return EW_SIGMOID;
    case OP_Sqrt: *mn = "sqrt"; return EW_SQRT;
    case OP_Identity:
    case OP_Dropout: *mn = "fpassa"; return EW_COPY;
    case OP_Slice: *mn = "slice"; return EW_COPY; /* only when every element keeps its PE and slot (vector_why) */
    case OP_Transpose: *mn = "transpose"; return EW_COPY; /* only when laid out as its input permuted (moves_why) */
    case OP_Cast:
    case OP_CastLike: /* between ONNX types the machine keeps alike (a float16 kept as float) */
        if (n->in[0] && n->out[0] && n->in[0]->dtype == n->out[0]->dtype) {
            *mn = "fpassa";
            return EW_COPY;
        }
        return EW_NONE;
    case OP_Reshape:
    case OP_Flatten:
    case OP_Squeeze:
    case OP_Unsqueeze:
    case OP_MNCoreLayoutSwitch: *mn = "reshape"; return EW_COPY;
    case OP_Pow: /* x^0.5 is Sqrt (NaN below 0); other constant exponents are sequences */
        if (n->nin == 2 && n->in[1] && n->in[1]->konst && n->in[1]->konst->numel == 1 &&
            ir_tensor_get_f(n->in[1]->konst, 0) == 0.5)
            return *mn = "sqrt", EW_SQRT;
        /* fall through */
    default: {
        Seq q;
        const char *w;
        if (seq_of(n, &q, &w)) {
            *mn = "seq";
            return EW_SEQ;
        }
        return EW_NONE;
    }
    }
}

/* For each long word a of output o, the long word of operand v that an elementwise op
 * reads with it (map[a], a < n4). A broadcast operand reads the same long word for
 * every output position that differs only in the dimensions it lacks; false when v's
 * elements do not sit on the PEs and slots of the output elements they go with (then
 * only a layout switch helps). */
/* With reshape, for a node that only renames positions (Reshape, Flatten, Squeeze,
 * Unsqueeze, a layout switch): output element i is input element i in row-major order.
 * With shift (a Slice of steps 1): output element idx is input element idx + shift. */
static bool element_map_walk(const MNValue *v, const MNValue *o, int64_t n4, int64_t *map, bool reshape,
                             const int64_t *shift) {
    MNLayout lo, li;
    if (!layout_get(o, &lo) || !layout_get(v, &li)) return false;
    if (layout_timed(v) || layout_timed(o)) return false;
    for (int64_t a = 0; a < n4; a++) map[a] = -1;
    int64_t n = ir_shape_numel(&o->type), vi[LAYOUT_MAX_RANK];
    int off = o->type.rank - v->type.rank;
    if ((off < 0 && !reshape) || o->type.rank > LAYOUT_MAX_RANK || v->type.rank > LAYOUT_MAX_RANK) return false;
    /* the output's places by a walk; the input's too when it is walked in the same order
     * (a reshape, or the same shape), else from its broadcast index */
    bool same = reshape || (off == 0 && li.rank == lo.rank && !shift);
    for (int d = 0; same && !reshape && d < v->type.rank; d++)
        same = v->type.dims[d] == o->type.dims[d] && li.shape[d] == lo.shape[d];
    MNPlaceWalk wo, wi;
    place_walk_start(&wo, &lo);
    place_walk_start(&wi, &li);
    /* else the input's place as the sum of its dimensions' parts, each changed when its index does */
    MNPlace part[LAYOUT_MAX_RANK], sum = {{0}};
    for (int d = 0; d < v->type.rank; d++) vi[d] = -1;
    for (int64_t e = 0; e < n; e++, place_walk_next(&wo), same ? place_walk_next(&wi) : (void)0) {
        const MNPlace po = wo.p;
        MNPlace pi;
        if (same)
            pi = wi.p;
        else {
            for (int d = 0; d < v->type.rank; d++) {
                int64_t x = (v->type.dims[d] == 1 ? 0 : wo.idx[d + off]) + (shift ? shift[d] : 0);
                if (x == vi[d]) continue;
                if (vi[d] >= 0)
                    for (int lv = 0; lv < LV_COUNT; lv++) sum.c[lv] -= part[d].c[lv];
                vi[d] = x;
                layout_place_dim(&li, d, x, &part[d]);
                for (int lv = 0; lv < LV_COUNT; lv++) sum.c[lv] += part[d].c[lv];
            }
            pi = sum;
        }
        for (int lv = LV_PE; lv <= LV_W; lv++) {
            if (!(li.bcast & (1u << lv)) && pi.c[lv] != po.c[lv]) return false;
            /* every replica of the output needs the data: the input must be replicated there too */
            if ((lo.bcast & (1u << lv)) && !(li.bcast & (1u << lv))) return false;
        }
        int64_t a = po.c[LV_ADDR];
        if (a >= n4) return false;
        if (map[a] >= 0 && map[a] != pi.c[LV_ADDR]) return false;
        map[a] = pi.c[LV_ADDR];
    }
    for (int64_t a = 0; a < n4; a++)
        if (map[a] < 0) map[a] = a > 0 ? map[a - 1] : 0; /* padding: any long word of v */
    return true;
}

/* a Slice's first input element on every axis, when every step is 1; false when not
 * known at compile time or another step */
static bool slice_shift(const MNNode *n, int64_t *shift) {
    int64_t ax[LAYOUT_MAX_RANK], st[LAYOUT_MAX_RANK], sp[LAYOUT_MAX_RANK];
    int ns = emit_slice_params(n, ax, st, sp), r = n->in[0]->type.rank;
    if (ns < 0 || r > LAYOUT_MAX_RANK) return false;
    for (int d = 0; d < r; d++) shift[d] = 0;
    for (int i = 0; i < ns; i++) {
        if (sp[i] != 1) return false;
        shift[ax[i]] = st[i];
    }
    return true;
}

/* the shapes and layouts an element map depends on, as a memo key */
static void shape_key(MNBuf *k, const MNValue *v) {
    buf_printf(k, "|%s|%d", v->layout ? v->layout : "-", v->type.rank);
    for (int d = 0; d < v->type.rank; d++) buf_printf(k, ",%lld", (long long)v->type.dims[d]);
}

/* element_map_walk, once per layouts and shapes (Code Emit's memo) */
static bool element_map(const MNCompile *c, const MNValue *v, const MNValue *o, int64_t n4, int64_t *map, bool reshape,
                        const int64_t *shift) {
    EmMemo *mm = c->check_memo;
    if (!mm) return element_map_walk(v, o, n4, map, reshape, shift);
    MNBuf k = {0};
    buf_printf(&k, "element_map|%d|%lld|", reshape, (long long)n4);
    for (int d = 0; shift && d < v->type.rank; d++) buf_printf(&k, "%lld,", (long long)shift[d]);
    shape_key(&k, v);
    shape_key(&k, o);
    size_t len;
    const uint8_t *got = memo_get(mm, k.data, &len);
    size_t full = 1 + sizeof(int64_t) * (size_t)n4; /* a map that failed keeps only its flag */
    if (got) {
        if (len != (got[0] ? full : 1)) die("element map memo of %zu bytes for %lld long words", len, (long long)n4);
        if (got[0]) memcpy(map, got + 1, sizeof(int64_t) * (size_t)n4);
        buf_free(&k);
        return got[0];
    }
    bool ok = element_map_walk(v, o, n4, map, reshape, shift);
    uint8_t *val = xmalloc(full);
    val[0] = ok;
    if (ok) memcpy(val + 1, map, sizeof(int64_t) * (size_t)n4);
    memo_put(mm, k.data, val, ok ? full : 1);
    free(val);
    buf_free(&k);
    return ok;
}

/* does an element map of v onto o exist (element_map's arguments)? */
static bool lines_up(const MNCompile *c, const MNValue *v, const MNValue *o, bool reshape, const int64_t *shift) {
    AppLayoutImage im;
    MNLayout l;
    if (!emit_image_of(c, o, &im, &l)) return false;
    int64_t *map = xmalloc(sizeof(int64_t) * (size_t)im.n4);
    bool ok = element_map(c, v, o, im.n4, map, reshape, shift);
    free(map);
    return ok;
}

/* an operand of an elementwise node: a float LM value whose long words line up with the
 * output's, or a one-element constant (an immediate) */
/* why operand v cannot be read with output o element by element (NULL: it can) */
static const char *operand_why(const MNCompile *c, const MNValue *v, const MNValue *o) {
    static const char *elsewhere = "an operand whose elements sit elsewhere (a layout switch)";
    if (!v) return "missing operands";
    if (v->loc_kind == MN_LOC_KIND_IMM) return v->konst && v->konst->numel == 1 ? NULL : elsewhere;
    if (mn_dtype_bytes(v->dtype) != mn_dtype_bytes(o->dtype))
        return "operand and result of different element widths (a cast)"; /* the op checks types */
    if (v->loc != MN_LOC_LM0 && v->loc != MN_LOC_LM1) return elsewhere;
    if (v->lay && layout_equal(v, o)) return NULL;
    return lines_up(c, v, o, false, NULL) ? NULL : elsewhere;
}

/* does renaming node n keep every element on its PE and slot (a copy)? */
bool emit_is_copy(const MNCompile *c, const MNNode *n) { return lines_up(c, n->in[0], n->out[0], true, NULL); }
/* is Slice n a copy: of float data in LM, steps 1, each element on its input's PE and
 * slot (a cut along a packed last axis at a multiple of 8, say)? */
bool emit_slice_copy(const MNCompile *c, const MNNode *n) {
    const MNValue *x = n->in[0], *o = n->out[0];
    int64_t shift[MN_MAX_RANK];
    return o && x->dtype == o->dtype && (o->dtype == MN_DT_Float || o->dtype == MN_DT_Double) &&
           x->type.rank == o->type.rank && slice_shift(n, shift) && lines_up(c, x, o, false, shift);
}

/* is Transpose n laid out as its input permuted (every element where it was, its LM image
 * the same): then a copy of its long words */
bool emit_transpose_copy(const MNCompile *c, const MNNode *n) {
    (void)c;
    const MNValue *x = n->in[0], *o = n->out[0];
    const MNAttr *pa = ir_attr(n, "perm");
    MNLayout li, lo, lp;
    int r = x->type.rank;
    return n->op == OP_Transpose && o && x->dtype == o->dtype && emit_in_lm(x) && emit_in_lm(o) && layout_get(x, &li) &&
           layout_get(o, &lo) && !layout_timed(x) && !layout_timed(o) &&
           (!pa || (pa->type == MN_ATTR_INTS && pa->n == r)) && layout_permute(&li, pa ? pa->ints : NULL, r, &lp) &&
           layout_identical(&lp, &lo) && lp.bcast == lo.bcast && x->num_lw == o->num_lw;
}

static void opnd(const Em *e, char *s, size_t n, const MNValue *v, int64_t a, const int64_t *map);

/* A Concat whose inputs line up with its output (every element on its PE and slot, each
 * output long word from one input: products' panels side by side along N on their rows) is
 * a copy of long words, input by input, under write masks where inputs share a step.
 * maps[k][a]: input k's long word for output long word a, -1 where another's. */
static bool concat_maps(const MNNode *n, int64_t n4, int64_t **maps) {
    const MNValue *o = n->out[0];
    MNLayout lo, li;
    int r = o->type.rank;
    int64_t ax = ir_attr_int(n, "axis", 0), at = 0, idx[LAYOUT_MAX_RANK];
    if (ax < 0) ax += r;
    if (!layout_get(o, &lo) || layout_timed(o) || ax < 0 || ax >= r || r > LAYOUT_MAX_RANK) return false;
    int64_t *who = xmalloc(sizeof(int64_t) * (size_t)n4);
    for (int64_t a = 0; a < n4; a++) who[a] = -1;
    bool ok = true;
    for (int k = 0; k < n->nin && ok; k++) {
        const MNValue *x = n->in[k];
        maps[k] = xmalloc(sizeof(int64_t) * (size_t)n4);
        for (int64_t a = 0; a < n4; a++) maps[k][a] = -1;
        ok = emit_in_lm(x) && x->dtype == o->dtype && layout_get(x, &li) && !layout_timed(x) && x->type.rank == r;
        MNPlaceWalk wi;
        if (ok) place_walk_start(&wi, &li);
        for (int64_t e = 0, ne = ok ? ir_shape_numel(&x->type) : 0; e < ne && ok; e++, place_walk_next(&wi)) {
            MNPlace po;
            for (int d = 0; d < r; d++) idx[d] = wi.idx[d] + (d == ax ? at : 0);
            layout_place(&lo, idx, &po);
            for (int lv = LV_PE; lv <= LV_W && ok; lv++)
                ok = ((li.bcast & (1u << lv)) || wi.p.c[lv] == po.c[lv]) &&
                     (!(lo.bcast & (1u << lv)) || (li.bcast & (1u << lv)));
            int64_t a = po.c[LV_ADDR];
            ok = ok && a < n4 && (who[a] < 0 || who[a] == k) && (maps[k][a] < 0 || maps[k][a] == wi.p.c[LV_ADDR]);
            if (ok) who[a] = k, maps[k][a] = wi.p.c[LV_ADDR];
        }
        at += x->type.dims[ax];
    }
    free(who);
    return ok;
}

bool emit_concat_copy(const MNCompile *c, const MNNode *n) {
    AppLayoutImage im;
    MNLayout l;
    if (n->op != OP_Concat || !emit_in_lm(n->out[0]) || !emit_image_of(c, n->out[0], &im, &l)) return false;
    int64_t **maps = xcalloc((size_t)n->nin, sizeof(int64_t *));
    bool ok = concat_maps(n, im.n4, maps);
    for (int k = 0; k < n->nin; k++) free(maps[k]);
    free(maps);
    return ok;
}

void emit_concat(Em *e, const MNNode *n) {
    AppLayoutImage im;
    MNLayout l;
    const MNValue *o = n->out[0];
    emit_image_of(e->c, o, &im, &l);
    int64_t **maps = xcalloc((size_t)n->nin, sizeof(int64_t *));
    if (!concat_maps(n, im.n4, maps)) die("Concat '%s' does not line up", n->name);
    bool wrote = false; /* the output's bank written in the step before: read again 2 steps on */
    for (int64_t a = 0; a < im.n4 && a < o->num_lw; a += 4)
        for (int k = 0; k < n->nin; k++) {
            const MNValue *x = n->in[k];
            int64_t map[4], first = -1;
            char m[6] = "/0000", X[96], O[96];
            for (int i = 0; i < 4; i++)
                if (a + i < o->num_lw && maps[k][a + i] >= 0) {
                    m[1 + i] = '1';
                    if (first < 0) first = maps[k][a + i];
                }
            if (first < 0) continue;
            for (int i = 0; i < 4; i++) map[i] = m[1 + i] == '1' ? maps[k][a + i] : first;
            opnd(e, X, sizeof X, x, 0, map);
            opnd(e, O, sizeof O, o, a, NULL);
            const char *mask = strcmp(m, "/1111") ? m : "";
            if (bank_of(x) == bank_of(o)) { /* one bank read and written in one step: through GRF0 */
                buf_printf(e->b, "%slpassa %s $lr24v\nnop\nlpassa $lr24v %s%s\n", wrote ? "nop/2\n" : "", X, O, mask);
            } else
                buf_printf(e->b, "lpassa %s %s%s\n", X, O, mask);
            wrote = true;
        }
    for (int k = 0; k < n->nin; k++) free(maps[k]);
    free(maps);
    buf_printf(e->b, "nop/2\n");
}

/* A node that only renames positions (a reshape, or a layout switch) is a copy when
 * every element keeps its PE and slot, only its address changing; else a gather. */
const char *emit_rename_why(const MNCompile *c, const MNNode *n, Walk *w) {
    const MNValue *x = n->in[0], *o = n->out[0];
    if ((x->loc != MN_LOC_LM0 && x->loc != MN_LOC_LM1) || (o->loc != MN_LOC_LM0 && o->loc != MN_LOC_LM1) ||
        x->dtype != o->dtype)
        return "not in LM";
    if (emit_is_copy(c, n)) return NULL;
    if (emit_turn_take(c, n, w)) return NULL; /* 8 x 8 blocks turned inside every MAB */
    const char *why;
    if (emit_rowmove_take(c, n, w, &why)) return why; /* whole rows between L1Bs */
    why = emit_gather_why(c, n, w);
    if (why && emit_blockmove_take(c, n, w)) return NULL; /* whole blocks of a MAB, where a gather cannot */
    if (why && emit_quadmove_take(c, n, w)) return NULL; /* single addresses of a MAB, where a gather cannot */
    return why;
}

/* why elementwise node n cannot be emitted on the vector path (NULL: it can) */
const char *emit_ew_why(const MNCompile *c, const MNNode *n, Walk *w) {
    const char *mn;
    Kind k = kind_of(n, &mn);
    if (n->op == OP_Dropout) { /* inference: the identity; training mode draws a random mask */
        const MNValue *tm = n->nin >= 3 ? n->in[2] : NULL;
        if (tm && (!tm->konst || ir_tensor_get_f(tm->konst, 0) != 0)) return "training-mode dropout";
        for (int k2 = 1; k2 < n->nout; k2++)
            if (n->out[k2] && n->out[k2]->nuses) return "a dropout mask that is read";
        return operand_why(c, n->in[0], n->out[0]);
    }
    if (n->op == OP_Trilu)
        return "k computed at run time, or a mask above fold_max_elems"; /* else planners/mask_lower.c made it an and */
    if (k == EW_NONE || n->nout != 1 || !n->out[0]) return "no emitter";
    if (mn_op_has(n->op, MN_VIEW)) return emit_rename_why(c, n, w);
    const MNValue *o = n->out[0];
    bool dbl_ok =
        k == EW_BINARY_MAU || k == EW_BINARY_ALU || k == EW_UNARY_MAU || k == EW_COPY; /* double: one per long word */
    bool any_type =
        k == EW_INT ||
        (k == EW_COPY && (n->op == OP_Identity || n->op == OP_Cast || n->op == OP_CastLike)); /* bits moved whole */
    if (!(o->dtype == MN_DT_Float || (o->dtype == MN_DT_Double && dbl_ok) || any_type) ||
        (o->loc != MN_LOC_LM0 && o->loc != MN_LOC_LM1))
        return "not a float value in LM";
    int nin = k == EW_BINARY_MAU || k == EW_BINARY_ALU || k == EW_DIV ? 2 : k == EW_INT ? n->nin : 1;
    if (n->nin != nin && !((k == EW_COPY || k == EW_SEQ || (k == EW_SQRT && n->op == OP_Pow)) && n->nin >= 1))
        return n->nin > nin ? "more than two operands" : "missing operands";
    for (int i = 0; i < nin; i++) {
        const char *why = operand_why(c, n->in[i], o);
        if (why) return why;
    }
    if (n->in[0]->loc_kind == MN_LOC_KIND_IMM && (nin == 1 || n->in[1]->loc_kind == MN_LOC_KIND_IMM))
        return "only immediates";
    return NULL;
}

/* the operand text for the long words v gives output long words [a, a+4): map NULL is
 * the identity; four addresses that do not follow each other are listed per cycle */
static void opnd(const Em *e, char *s, size_t n, const MNValue *v, int64_t a, const int64_t *map) {
    int64_t w[4], base = emit_graph_value(e, v) ? 0 : v->addr;
    for (int i = 0; i < 4; i++) w[i] = 2 * (base + (map ? map[a + i] : a + i));
    char rel[24] = "";
    if (!base && emit_graph_value(e, v)) snprintf(rel, sizeof rel, "{%d}", v->id);
    if (w[1] == w[0] + 2 && w[2] == w[0] + 4 && w[3] == w[0] + 6)
        snprintf(s, n, "$%s%s%lldv", emit_bank_reg(v), rel, (long long)w[0]);
    else
        snprintf(s, n, "$%s%s[%lld,%lld,%lld,%lld]", emit_bank_reg(v), rel, (long long)w[0], (long long)w[1],
                 (long long)w[2], (long long)w[3]);
}

static double imm_of(const MNValue *v) { return ir_tensor_get_f(v->konst, 0); }

void emit_elementwise(Em *e, const MNNode *n) {
    const char *mn;
    Kind k = kind_of(n, &mn);
    const MNValue *o = n->out[0], *x = n->in[0], *y = n->nin > 1 ? n->in[1] : NULL;
    int nin = k == EW_BINARY_MAU || k == EW_BINARY_ALU || k == EW_DIV ? 2 : k == EW_INT ? n->nin : 1;
    AppLayoutImage im;
    MNLayout l;
    emit_image_of(e->c, o, &im, &l);
    /* immediates into GRF1 once ("imm" may not touch LM0 in its step); GRF1, so that a
     * step reading one with a GRF0 temporary uses both read ports */
    bool xi = x->loc_kind == MN_LOC_KIND_IMM, yi = nin >= 2 && y->loc_kind == MN_LOC_KIND_IMM;
    Seq sq;
    const char *sw;
    if (k == EW_SEQ) {
        seq_of(n, &sq, &sw);
        nin = 1;
        yi = false;
        for (int i = 0; i < sq.nk; i++) buf_printf(e->b, "imm f\"%.9g\" $ls%d\nnop\n", sq.k[i], 64 + 2 * i);
    }
    bool dbl = o->dtype == MN_DT_Double;
    if (k == EW_INT) { /* integer immediates: 64-bit or 32-bit lanes */
        const char *ip = mn_dtype_bytes(x->dtype) == 8 ? "l" : "i";
        int_seq_of(n, &sq);
        /* the sequence's constants at GRF1 LW 8 and 12, below a small machine's 32 LW (the
         * immediates sit at 0 and 4): 1 and 0 for Mul */
        for (int i = 0; i < sq.nk; i++)
            buf_printf(e->b, "imm %s\"%lld\" $ls%d\nnop\n", ip, (long long)sq.k[i], 16 + 8 * i);
        if (xi) buf_printf(e->b, "imm %s\"%lld\" $ls0\nnop\n", ip, (long long)ir_tensor_get_i(x->konst, 0));
        if (yi) buf_printf(e->b, "imm %s\"%lld\" $ls8\nnop\n", ip, (long long)ir_tensor_get_i(y->konst, 0));
    } else {
        if (xi) buf_printf(e->b, dbl ? "imm d\"%.17g\" $ls0\nnop\n" : "imm f\"%.9g\" $ls0\nnop\n", imm_of(x));
        if (yi) buf_printf(e->b, dbl ? "imm d\"%.17g\" $ls8\nnop\n" : "imm f\"%.9g\" $ls8\nnop\n", imm_of(y));
    }
    bool same_in = nin == 2 && !xi && !yi && bank_of(x) == bank_of(y) && x != y;
    bool out_shares = (!xi && bank_of(x) == bank_of(o)) || (nin == 2 && !yi && bank_of(y) == bank_of(o));
    int64_t *xm = NULL, *ym = NULL; /* operands laid out otherwise (broadcast): their long words */
    bool rename = mn_op_has(n->op, MN_VIEW) || n->op == OP_MNCoreLayoutSwitch;
    int64_t shift[MN_MAX_RANK];
    bool sliced = n->op == OP_Slice && slice_shift(n, shift);
    if (!xi && n->op != OP_Transpose && (rename || sliced || !layout_equal(x, o))) {
        xm = xmalloc(sizeof(int64_t) * (size_t)im.n4);
        element_map(e->c, x, o, im.n4, xm, rename, sliced ? shift : NULL);
    }
    if (nin >= 2 && !yi && !layout_equal(y, o)) {
        ym = xmalloc(sizeof(int64_t) * (size_t)im.n4);
        element_map(e->c, y, o, im.n4, ym, false, NULL);
    }
    const MNValue *z = nin == 3 ? n->in[2] : NULL; /* (Where's third: never an immediate) */
    int64_t *zm = NULL;
    if (z && !layout_equal(z, o)) {
        zm = xmalloc(sizeof(int64_t) * (size_t)im.n4);
        element_map(e->c, z, o, im.n4, zm, false, NULL);
    }
    for (int64_t a = 0; a < im.n4; a += 4) {
        char X[96], Y[96], Z[96], O[128];
        if (z) opnd(e, Z, sizeof Z, z, a, zm);
        if (xi)
            snprintf(X, sizeof X, "$ls0");
        else
            opnd(e, X, sizeof X, x, a, xm);
        if (nin >= 2) {
            if (yi)
                snprintf(Y, sizeof Y, "$ls8");
            else
                opnd(e, Y, sizeof Y, y, a, ym);
        }
        char OA[96], FINAL[112];
        opnd(e, OA, sizeof OA, o, a, NULL);
        same_in = nin == 2 && !xi && !yi && bank_of(x) == bank_of(y) && strcmp(X, Y);
        /* a step may read and write one bank only in the same region: else via GRF0 */
        bool via = (!xi && bank_of(x) == bank_of(o) && strcmp(X, OA)) ||
                   (nin == 2 && !yi && bank_of(y) == bank_of(o) && strcmp(Y, OA));
        snprintf(FINAL, sizeof FINAL, "%s%s", OA,
                 emit_tail_mask(o->num_lw, a)); /* the last long words past the value are not written */
        snprintf(O, sizeof O, "%s", via ? "$lr24v" : FINAL);
        if (same_in) { /* one read port per bank: y through GRF1 first */
            buf_printf(e->b, "lpassa %s $ls0v\nnop\n", Y);
            snprintf(Y, sizeof Y, "$ls0v");
        }
        if (dbl &&
            k != EW_INT) /* products on PEs 0,1 then 2,3 (the second adds the first's forwarded result elsewhere) */
            switch (n->op) {
            case OP_Add: buf_printf(e->b, "dvadd %s %s %s\n", X, Y, O); break;
            case OP_Sub: buf_printf(e->b, "dvadd %s -%s %s\n", X, Y, O); break;
            case OP_Mul: buf_printf(e->b, "dvmulu %s %s $nowrite\ndvfmad %s %s $mauf %s\n", X, Y, X, Y, O); break;
            case OP_Max:
            case OP_Min: buf_printf(e->b, "d%s %s %s %s\n", n->op == OP_Max ? "max" : "min", X, Y, O); break;
            case OP_Neg: buf_printf(e->b, "dvpassa -%s %s\n", X, O); break;
            default: buf_printf(e->b, "lpassa %s %s\n", X, O); break;
            }
        else
            switch (k) {
            case EW_UNARY_ALU:
                if (n->op == OP_Relu)
                    buf_printf(e->b, "frelu %s %s %s\n", X, X, O);
                else if (n->op == OP_Abs)
                    buf_printf(e->b, "fmax %s %s $lr16v\nnop\nfvpassa -%s $ls16v\nnop\nfmax $lr16v $ls16v %s\n", X, X,
                               X, O);
                else
                    buf_printf(e->b, "%s %s %s\n", mn, X, O);
                break;
            case EW_UNARY_MAU: buf_printf(e->b, "fvpassa -%s %s\n", X, O); break;
            case EW_BINARY_MAU:
                if (n->op == OP_Sub)
                    buf_printf(e->b, "fvadd %s -%s %s\n", X, Y, O);
                else
                    buf_printf(e->b, "%s %s %s %s\n", mn, X, Y, O);
                break;
            case EW_BINARY_ALU: buf_printf(e->b, "%s %s %s %s\n", mn, X, Y, O); break;
            case EW_DIV: buf_printf(e->b, "frcp %s $lr16v\nnop\nfvmul %s $lr16v %s\n", Y, X, O); break;
            case EW_SIGMOID: /* 1 / (1 + e^-x) */
                buf_printf(e->b,
                           "fvpassa -%s $lr16v\nnop\nfexp $lr16v $lr16v\nnop\nimm f\"1.0\" $ls16v\nnop\nfvadd $lr16v "
                           "$ls16v $lr16v\nnop\nfrcp $lr16v %s\n",
                           X, O);
                break;
            case EW_SQRT:
                /* 1 / rsqrt(|x|) (0 stays 0, where x * rsqrt(x) would be 0 * inf), kept only where
             * rsqrt's flag says x >= 0, over a quiet NaN; then to O in one plain write */
                buf_printf(e->b,
                           "frsqrt %s $lr16v $omr1\nimm i\"2143289344\" $ls16v\nnop\nfrcp $lr16v $lr16v\nnop/3\nlpassa "
                           "$lr16v $ls16v/$imr1\nnop\nlpassa $ls16v %s\n",
                           X, O);
                break;
            case EW_COPY: buf_printf(e->b, "lpassa %s %s\n", X, O); break;
            case EW_SEQ: emit_seq(e, &sq, X, NULL, NULL, O); break;
            case EW_INT: emit_seq(e, &sq, X, nin >= 2 ? Y : NULL, nin == 3 ? Z : NULL, O); break;
            case EW_NONE: break;
            }
        if (via) buf_printf(e->b, "nop\nlpassa $lr24v %s\n", FINAL);
        if (out_shares || same_in) buf_printf(e->b, "nop/2\n"); /* the bank written is read again next */
    }
    free(xm);
    free(ym);
    free(zm);
    buf_printf(e->b, "nop/2\n");
}

void emit_bank_move(Em *e, const MNNode *n) {
    AppLayoutImage im;
    MNLayout l;
    emit_image_of(e->c, n->in[0], &im, &l);
    for (int64_t a = 0; a < im.n4; a += 4) {
        char X[64], O[64];
        opnd(e, X, sizeof X, n->in[0], a, NULL);
        opnd(e, O, sizeof O, n->out[0], a, NULL);
        buf_printf(e->b, "lpassa %s %s%s\n", X, O, emit_tail_mask(n->out[0]->num_lw, a));
    }
    buf_printf(e->b, "nop/2\n");
}
