/* Number formats (num.c): conversions between float and the 16-bit formats. */
#ifndef MN_NUM_H
#define MN_NUM_H
#include <stdint.h>

float num_half_to_float(uint16_t h); /* IEEE half */
uint16_t num_float_to_half(float f);
float num_bf16_to_float(uint16_t h);
uint16_t num_float_to_bf16(float f);
/* The MN-Core half: 1 sign, 6 exponent, 9 mantissa bits, bias 31, no subnormals. */
float num_mnhalf_to_float(uint16_t h);
uint16_t num_float_to_mnhalf(float f);
/* ceil(a / b) for a >= 0, b > 0; the least power of two >= x, at most cap */
static inline int64_t num_cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static inline int64_t num_pow2_at_least(int64_t x, int64_t cap) {
    int64_t p = 1;
    while (p < x && p < cap) p *= 2;
    return p;
}
#endif
