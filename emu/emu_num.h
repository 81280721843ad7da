/* Number formats of the machine: IEEE double and float without subnormals, and the
 * MN-Core half (1 sign, 6 exponent, 9 mantissa bits, bias 31, no subnormals). */
#ifndef MN_EMU_NUM_H
#define MN_EMU_NUM_H
#include "num.h"
#include "ir.h"
#include <math.h>
#include <stdint.h>
#include <string.h>

static inline double bits_d(uint64_t b) {
    double d;
    memcpy(&d, &b, 8);
    return d;
}
static inline uint64_t d_bits(double d) {
    uint64_t b;
    memcpy(&b, &d, 8);
    return b;
}
static inline float bits_f(uint32_t b) {
    float f;
    memcpy(&f, &b, 4);
    return f;
}
static inline uint32_t f_bits(float f) {
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
}

/* Read with subnormal inputs treated as zero (sign kept), as the MAU does. */
static inline double in_d(uint64_t b) {
    return (b & 0x7ff0000000000000ull) ? bits_d(b) : bits_d(b & 0x8000000000000000ull);
}
static inline float in_f(uint32_t b) { return (b & 0x7f800000u) ? bits_f(b) : bits_f(b & 0x80000000u); }
/* Output normalisation: subnormal results flush to +0, a zero result is +0. */
static inline uint64_t out_d(double d) {
    uint64_t b = d_bits(d);
    if (!(b & 0x7ff0000000000000ull)) return 0;
    if ((b & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (b & 0xfffffffffffffull))
        return 0x7ff8000000000000ull | (b & 0x8000000000000000ull);
    return b;
}
static inline uint32_t out_f(float f) {
    uint32_t b = f_bits(f);
    if (!(b & 0x7f800000u)) return 0;
    if ((b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffffu)) return (b & 0x80000000u) | 0x7fc00000u;
    return b;
}

static inline float mnh_to_f(uint16_t h) { return num_mnhalf_to_float(h); }
static inline uint16_t f_to_mnh(float f) { return num_float_to_mnhalf(f); }
#endif
