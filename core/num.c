/* Number formats: IEEE half (float16) and bfloat16 as ONNX stores them, and the MN-Core
 * half the machine computes in (docs/vsm.md section 4), to and from float with
 * round-to-nearest-even. */
#include "num.h"
#include <math.h>
#include <string.h>

float num_half_to_float(uint16_t h) {
    uint32_t s = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31, m = h & 1023, bits;
    if (e == 0) {
        if (m == 0)
            bits = s;
        else { /* subnormal: renormalise */
            int sh = 0;
            while (!(m & 1024)) {
                m <<= 1;
                sh++;
            }
            m &= 1023;
            bits = s | (uint32_t)(127 - 15 - sh + 1) << 23 | m << 13;
        }
    } else if (e == 31)
        bits = s | 0x7f800000u | m << 13;
    else
        bits = s | (e + 127 - 15) << 23 | m << 13;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t num_float_to_half(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t s = (x >> 16) & 0x8000, e = (x >> 23) & 255, m = x & 0x7fffff;
    if (e == 255) return (uint16_t)(s | 0x7c00 | (m ? 0x200 | (m >> 13) : 0));
    int ee = (int)e - 127 + 15;
    if (ee >= 31) return (uint16_t)(s | 0x7c00);
    if (ee <= 0) { /* subnormal or zero, round to nearest even */
        if (ee < -10) return (uint16_t)s;
        m |= 0x800000;
        int sh = 14 - ee;
        uint32_t r = m >> sh, rem = m & ((1u << sh) - 1), half = 1u << (sh - 1);
        if (rem > half || (rem == half && (r & 1))) r++;
        return (uint16_t)(s | r);
    }
    uint32_t r = (uint32_t)ee << 10 | m >> 13, rem = m & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (r & 1))) r++; /* may carry into inf: correct */
    return (uint16_t)(s | r);
}

float num_bf16_to_float(uint16_t h) {
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

uint16_t num_float_to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffff) > 0x7f800000) return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

float num_mnhalf_to_float(uint16_t h) {
    unsigned s = h >> 15, e = (h >> 9) & 63, m = h & 511;
    if (e == 0) return s ? -0.0f : 0.0f;
    if (e == 63) return m ? (s ? -NAN : NAN) : (s ? -INFINITY : INFINITY);
    float v = ldexpf(1.0f + (float)m / 512.0f, (int)e - 31);
    return s ? -v : v;
}

uint16_t num_float_to_mnhalf(float f) {
    uint32_t b;
    memcpy(&b, &f, 4);
    uint16_t s = (uint16_t)((b >> 16) & 0x8000);
    if (isnan(f)) return (uint16_t)(s | 0x7e00 | 1);
    float a = fabsf(f);
    if (a == 0) return s; /* signed zero */
    if (isinf(a)) return (uint16_t)(s | 0x7e00);
    int ex;
    float fr = frexpf(a, &ex); /* a = fr * 2^ex, fr in [0.5,1) */
    int e = ex - 1 + 31;
    float r = nearbyintf((fr * 2.0f - 1.0f) * 512.0f); /* round half to even */
    if (r >= 512.0f) {
        r = 0;
        e++;
    }
    if (e >= 63) return (uint16_t)(s | 0x7e00);
    if (e <= 0) return s; /* no subnormals: flush to a signed zero */
    return (uint16_t)(s | (uint16_t)e << 9 | (uint16_t)r);
}
