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
#endif
