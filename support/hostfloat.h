/* hostfloat.h - 16-bit and 8-bit floats on the host, for the CLI's `tile run`, the tests
 * and the benchmarks that make device data and check results: f16 and bf16 round to
 * nearest even (with subnormals, overflow to infinity and NaN kept); every format widens
 * exactly to double; doubles round to f8 (d_to_f8) for `tile run`'s f8 operands. */
#ifndef TILE_HOSTFLOAT_H
#define TILE_HOSTFLOAT_H

#include <math.h>
#include <stdint.h>
#include <string.h>

static inline uint16_t f32_to_f16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000;
    if ((x & 0x7fffffff) > 0x7f800000) return (uint16_t)(sign | 0x7e00); /* NaN */
    int e = (int)((x >> 23) & 0xff) - 127 + 15;
    uint32_t m = x & 0x7fffff;
    if (e >= 31) return (uint16_t)(sign | 0x7c00);
    if (e <= 0) {
        if (e < -10) return (uint16_t)sign;
        m |= 0x800000;
        int sh = 14 - e;
        uint32_t r = m >> sh, rem = m & ((1u << sh) - 1), half = 1u << (sh - 1);
        if (rem > half || (rem == half && (r & 1))) r++;
        return (uint16_t)(sign | r);
    }
    uint32_t r = ((uint32_t)e << 10) | (m >> 13), rem = m & 0x1fff;
    if (rem > 0x1000 || (rem == 0x1000 && (r & 1))) r++; /* a carry into the exponent is right, up to infinity */
    return (uint16_t)(sign | r);
}

static inline double f16_to_d(uint16_t h) {
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 31 ? (m ? NAN : INFINITY) : e ? ldexp(1024 + m, e - 25) : ldexp(m, -24);
    return (h & 0x8000) ? -v : v;
}

static inline uint16_t f32_to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    if ((x & 0x7fffffff) > 0x7f800000) return (uint16_t)((x >> 16) | 0x40); /* NaN stays NaN */
    return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

static inline double bf16_to_d(uint16_t h) {
    uint32_t x = (uint32_t)h << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

/* E4M3FN: bias 7, 3 mantissa bits, no infinity; 0x7f and 0xff are NaN, 448 the largest */
static inline double f8e4m3_to_d(uint8_t c) {
    int e = (c >> 3) & 15, m = c & 7;
    double v = e == 15 && m == 7 ? NAN : e ? ldexp(8 + m, e - 10) : ldexp(m, -9);
    return (c & 0x80) ? -v : v;
}

/* E5M2: bias 15, 2 mantissa bits, IEEE-like (exponent 31: infinity or NaN) */
static inline double f8e5m2_to_d(uint8_t c) {
    int e = (c >> 2) & 31, m = c & 3;
    double v = e == 31 ? (m ? NAN : INFINITY) : e ? ldexp(4 + m, e - 17) : ldexp(m, -16);
    return (c & 0x80) ? -v : v;
}

/* A finite double to E4M3 (e5 false) or E5M2, rounded to nearest even, magnitudes past the largest
 * finite value (448, 57344) clamped to it (as a saturating conversion); NaN to NaN. */
static inline uint8_t d_to_f8(double v, int e5) {
    int mb = e5 ? 2 : 3, bias = e5 ? 15 : 7;
    uint8_t sign = signbit(v) ? 0x80 : 0, top = e5 ? 0x7B : 0x7E;
    double a = fabs(v), maxv = e5 ? 57344.0 : 448.0;
    if (isnan(v)) return 0x7F;
    if (a >= maxv) return (uint8_t)(sign | top);
    int e;
    frexp(a, &e); /* a = f 2^e, f in [0.5, 1) */
    e -= 1;       /* a in [2^e, 2^(e+1)) */
    if (e < 1 - bias) e = 1 - bias; /* subnormal: the smallest normal exponent's step */
    double q = rint(ldexp(a, mb - e)); /* in units of 2^(e - mb), ties to even */
    if (q == 0) return sign;
    if (q >= (double)(2 << mb)) q /= 2, e++; /* rounded up to the next binade */
    if (ldexp(q, e - mb) > maxv) return (uint8_t)(sign | top);
    if (q < (double)(1 << mb)) return (uint8_t)(sign | (uint8_t)q); /* subnormal */
    return (uint8_t)(sign | (uint8_t)((e + bias) << mb) | (uint8_t)(q - (1 << mb)));
}

#endif
