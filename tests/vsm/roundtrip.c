/* Assembler round trip: text -> GPFNBin -> text -> GPFNBin must give identical bytes
 * (and the canonical text must be a fixed point), for the given programs and for a
 * generated program that uses every instruction at every precision it accepts.
 *   vsm_roundtrip [FILE.vsm...]  ends with "roundtrip: N passed, M failed" */
#include "buf.h"
#include "diag.h"
#include "vsm.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool check(const char *name, const char *text, char *why, size_t n) {
    VProgram p1, p2, p3;
    MNBuf b1 = {0}, t1 = {0}, b2 = {0}, t2 = {0};
    char err[512];
    bool ok = false;
    if (!vsm_parse(name, text, &p1, err, sizeof err)) {
        snprintf(why, n, "parse: %s", err);
        return false;
    }
    vsm_encode(&p1, &b1);
    if (!vsm_decode((const uint8_t *)b1.data, b1.len, &p3, err, sizeof err)) {
        snprintf(why, n, "decode: %s", err);
        vsm_program_free(&p1);
        buf_free(&b1);
        return false;
    }
    vsm_print(&t1, &p3);
    if (!vsm_parse(name, t1.data ? t1.data : "", &p2, err, sizeof err))
        snprintf(why, n, "reparse of the printed text: %s", err);
    else {
        vsm_encode(&p2, &b2);
        vsm_print(&t2, &p2);
        if (b1.len != b2.len || memcmp(b1.data, b2.data, b1.len))
            snprintf(why, n, "binary differs after text round trip");
        else if (t1.len != t2.len || memcmp(t1.data, t2.data, t1.len))
            snprintf(why, n, "printed text is not a fixed point");
        else
            ok = true;
        vsm_program_free(&p2);
    }
    vsm_program_free(&p1);
    vsm_program_free(&p3);
    buf_free(&b1), buf_free(&t1), buf_free(&b2), buf_free(&t2);
    return ok;
}

/* One expression per instruction and precision, with operands of the right kinds. */
static void all_insns(MNBuf *b) {
    static const int precs[] = {P_D, P_F, P_H, P_L, P_I, P_S};
    for (int i = 0; i < VI_COUNT; i++) {
        const VInsnInfo *in = &vsm_insns[i];
        if (in->precs & P_NONE) {
            switch (i) {
            case VI_nop: buf_printf(b, "nop\nnop/3\n"); break;
            case VI_wait: buf_printf(b, "mvp/n64i05 $d0 $lc0\nnop; wait i05\n"); break;
            case VI_noforward: buf_printf(b, "noforward\n"); break;
            case VI_zero: buf_printf(b, "zero $lr0 $ls2/1010\n"); break;
            case VI_imm:
                buf_printf(
                    b,
                    "imm i\"-7\" $lr0\nimm f\"1.5\" $lls4\nimm h\"0x3e00\" $n0\nimm ul\"0x0123456789abcdef\" $lr8\n");
                break;
            case VI_msl:
            case VI_msr: buf_printf(b, "%s $lm0v $ln0v/$imr3\n", in->name); break;
            case VI_l1bmp: buf_printf(b, "l1bmp $lb0 $lr0v\nl1bmp $llb8 $llr0v/1100\n"); break;
            case VI_l1bmm: buf_printf(b, "l1bmm $lb0 $lm0v\nl1bmm@3 $lr0v $lb64\n"); break;
            case VI_l1bmd: buf_printf(b, "l1bmd $lb0 $lm0v\nl1bmd $ln8v $lb256\n"); break;
            case VI_l2bmb: buf_printf(b, "l2bmb $lc0 $lb0\nl2bmb@2 $lc64 $lb64\n"); break;
            case VI_l2bm: buf_printf(b, "l2bm@1 $lb0 $lc128\nl2bm@0 $lc0 $lb512\n"); break;
            case VI_l2bmd: buf_printf(b, "l2bmd $lc0 $lb0\nl2bmd $lb32 $lc256\n"); break;
            case VI_mvp: buf_printf(b, "mvp/n128i01 $d64@1 $lc0@1.1\nmvp/n64 $lc0 $d0\n"); break;
            case VI_mvb2: buf_printf(b, "mvb2/n64i02 $d0 $lc64\n"); break;
            default: break;
            }
            continue;
        }
        if (in->flags & F_RRN) {
            for (int r = 1; r < RRN_COUNT; r++) {
                if (i == VI_l1bmr) buf_printf(b, "l1bmr%s $lr0v $lb0\n", vsm_rrn_names[r]);
                if (i == VI_l2bmr) buf_printf(b, "l2bmr%s $lb0 $lc0\n", vsm_rrn_names[r]);
                if (i == VI_mvr2) buf_printf(b, "mvr2%s/n64i03 $lc0 $d0\n", vsm_rrn_names[r]);
            }
            continue;
        }
        for (size_t k = 0; k < sizeof precs / sizeof precs[0]; k++) {
            int pr = precs[k];
            if (!(in->precs & pr)) continue;
            const char *pl = vsm_prec_letter(pr);
            for (int u = 0; u <= !!(in->flags & F_U); u++)
                for (int red = 0; red <= !!(in->flags & F_RED); red++) {
                    char mn[32];
                    snprintf(mn, sizeof mn, "%s%s%s%s", u ? "u" : "", pl, in->name, red ? "r" : "");
                    if (i == VI_mwrite)
                        buf_printf(b, "%s $lr0v $lx0\n", mn);
                    else if (i == VI_mread)
                        buf_printf(b, "%s $lx0 $lr8v\n", mn);
                    else if (in->unit == U_MAU && vsm_insns[i].name[0] == 'm')
                        buf_printf(b, "%s $ly $lm0v%s $ln0v\n", mn, in->nsrc == 3 ? " $mauf" : "");
                    else if (in->nsrc == 1)
                        buf_printf(b, "%s %s$lm[0,2,4,6] $ln0v/$imr2 $omr4\n", mn, in->unit == U_MAU ? "-" : "");
                    else if (in->nsrc == 2)
                        buf_printf(b, "%s/$imr1 $lm8v2 $lr0 $ls0v\n", mn);
                    else
                        buf_printf(b, "%s $lmt4v $ln0v -$aluf $lls0v\n", mn);
                }
        }
    }
    buf_printf(b, "maskrsn 3\nmaskll 20\nmask 0\nlpassa $peid $lm0; lpassa $lm0 $lr0\nd set $lm0n0c0b0 1 "
                  "3FF0000000000000\nd getd $lm0n0c0b0m0 1\n");
}

int main(int argc, char **argv) {
    int pass = 0, fail = 0;
    char why[700];
    MNBuf gen = {0};
    all_insns(&gen);
    if (check("<every instruction>", gen.data, why, sizeof why))
        pass++;
    else
        fail++, printf("FAIL roundtrip <every instruction>: %s\n", why);
    buf_free(&gen);
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            fail++;
            printf("FAIL roundtrip %s: cannot read\n", argv[i]);
            continue;
        }
        MNBuf t = {0};
        char chunk[65536];
        for (size_t n; (n = fread(chunk, 1, sizeof chunk, f)) > 0;) buf_append(&t, chunk, n);
        fclose(f);
        buf_append(&t, "", 1);
        /* programs meant to fail at assembly are not round-trip material */
        VProgram p;
        char err[512];
        if (!vsm_parse(argv[i], t.data, &p, err, sizeof err)) {
            buf_free(&t);
            continue;
        }
        vsm_program_free(&p);
        if (check(argv[i], t.data, why, sizeof why))
            pass++;
        else
            fail++, printf("FAIL roundtrip %s: %s\n", argv[i], why);
        buf_free(&t);
    }
    printf("roundtrip: %d passed, %d failed\n", pass, fail);
    return fail ? 1 : 0;
}
