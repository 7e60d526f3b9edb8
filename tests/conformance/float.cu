// float.cu - f32/f64 arithmetic with every rounding mode, conversions between
// integers, f64, f32, f16 and bf16 with every rounding mode, f16/bf16 and
// packed f16x2/bf16x2 arithmetic.  Results are stored as bits; the host
// checks them exactly (tests/test_conformance.c).
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#define NF 44
extern "C" __global__ void f32_ops(const float *a, const float *b, const float *c, unsigned *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = a[i], y = b[i], z = c[i];
    float r[NF];
    r[0] = __fadd_rn(x, y); r[1] = __fadd_rz(x, y); r[2] = __fadd_ru(x, y); r[3] = __fadd_rd(x, y);
    r[4] = __fsub_rn(x, y); r[5] = __fsub_rz(x, y); r[6] = __fsub_ru(x, y); r[7] = __fsub_rd(x, y);
    r[8] = __fmul_rn(x, y); r[9] = __fmul_rz(x, y); r[10] = __fmul_ru(x, y); r[11] = __fmul_rd(x, y);
    r[12] = __fmaf_rn(x, y, z); r[13] = __fmaf_rz(x, y, z); r[14] = __fmaf_ru(x, y, z); r[15] = __fmaf_rd(x, y, z);
    r[16] = __fdiv_rn(x, y); r[17] = __fdiv_rz(x, y); r[18] = __fdiv_ru(x, y); r[19] = __fdiv_rd(x, y);
    r[20] = __frcp_rn(x); r[21] = __frcp_rz(x); r[22] = __frcp_ru(x); r[23] = __frcp_rd(x);
    r[24] = __fsqrt_rn(x); r[25] = __fsqrt_rz(x); r[26] = __fsqrt_ru(x); r[27] = __fsqrt_rd(x);
    r[28] = x / y;            // IEEE division (-prec-div=true)
    r[29] = sqrtf(x);         // IEEE square root
    r[30] = fminf(x, y); r[31] = fmaxf(x, y); r[32] = fabsf(x); r[33] = copysignf(x, y);
    r[34] = floorf(x); r[35] = ceilf(x); r[36] = truncf(x); r[37] = rintf(x); r[38] = roundf(x);
    r[39] = __saturatef(x);
    r[40] = x * y + z;        // contracted into fma
    r[41] = fmodf(x, y);
    r[42] = -x;
    r[43] = fdimf(x, y);
    for (int k = 0; k < NF; k++) out[i * NF + k] = __float_as_uint(r[k]);
}

#define ND 28
extern "C" __global__ void f64_ops(const double *a, const double *b, const double *c, unsigned long long *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double x = a[i], y = b[i], z = c[i];
    double r[ND];
    r[0] = __dadd_rn(x, y); r[1] = __dadd_rz(x, y); r[2] = __dadd_ru(x, y); r[3] = __dadd_rd(x, y);
    r[4] = __dsub_rn(x, y); r[5] = __dsub_rz(x, y); r[6] = __dsub_ru(x, y); r[7] = __dsub_rd(x, y);
    r[8] = __dmul_rn(x, y); r[9] = __dmul_rz(x, y); r[10] = __dmul_ru(x, y); r[11] = __dmul_rd(x, y);
    r[12] = __fma_rn(x, y, z); r[13] = __fma_rz(x, y, z); r[14] = __fma_ru(x, y, z); r[15] = __fma_rd(x, y, z);
    r[16] = __ddiv_rn(x, y); r[17] = __ddiv_rz(x, y); r[18] = __ddiv_ru(x, y); r[19] = __ddiv_rd(x, y);
    r[20] = __drcp_rn(x); r[21] = __drcp_rz(x); r[22] = __drcp_ru(x); r[23] = __drcp_rd(x);
    r[24] = __dsqrt_rn(x); r[25] = __dsqrt_rz(x); r[26] = __dsqrt_ru(x); r[27] = __dsqrt_rd(x);
    for (int k = 0; k < ND; k++) out[i * ND + k] = __double_as_longlong(r[k]);
}

// Conversions: from f32 x (and f64 d, int s, long long l) to every type and rounding mode.
#define NC 56
extern "C" __global__ void cvt_ops(const float *a, const double *b, const long long *c, unsigned long long *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = a[i];
    double d = b[i];
    long long l = c[i];
    int s = (int)l;
    unsigned long long *o = out + (long long)i * NC;
    o[0] = (unsigned)__float2int_rn(x); o[1] = (unsigned)__float2int_rz(x); o[2] = (unsigned)__float2int_ru(x); o[3] = (unsigned)__float2int_rd(x);
    o[4] = __float2uint_rn(x); o[5] = __float2uint_rz(x); o[6] = __float2uint_ru(x); o[7] = __float2uint_rd(x);
    o[8] = __float2ll_rn(x); o[9] = __float2ll_rz(x); o[10] = __float2ll_ru(x); o[11] = __float2ll_rd(x);
    o[12] = __float2ull_rn(x); o[13] = __float2ull_rz(x);
    o[14] = (unsigned)__double2int_rn(d); o[15] = (unsigned)__double2int_rz(d); o[16] = (unsigned)__double2int_ru(d); o[17] = (unsigned)__double2int_rd(d);
    o[18] = __double2ll_rn(d); o[19] = __double2ull_rz(d);
    o[20] = __float_as_uint(__int2float_rn(s)); o[21] = __float_as_uint(__int2float_rz(s));
    o[22] = __float_as_uint(__int2float_ru(s)); o[23] = __float_as_uint(__int2float_rd(s));
    o[24] = __float_as_uint(__uint2float_rn((unsigned)s)); o[25] = __float_as_uint(__uint2float_rz((unsigned)s));
    o[26] = __float_as_uint(__ll2float_rn(l)); o[27] = __float_as_uint(__ll2float_rz(l));
    o[28] = __float_as_uint(__ll2float_ru(l)); o[29] = __float_as_uint(__ll2float_rd(l));
    o[30] = __float_as_uint(__ull2float_rn((unsigned long long)l));
    o[31] = __double_as_longlong(__ll2double_rn(l)); o[32] = __double_as_longlong(__ll2double_rz(l));
    o[33] = __double_as_longlong(__ll2double_ru(l)); o[34] = __double_as_longlong(__ll2double_rd(l));
    o[35] = __float_as_uint(__double2float_rn(d)); o[36] = __float_as_uint(__double2float_rz(d));
    o[37] = __float_as_uint(__double2float_ru(d)); o[38] = __float_as_uint(__double2float_rd(d));
    o[39] = __double_as_longlong((double)x);
    o[40] = __half_as_ushort(__float2half_rn(x)); o[41] = __half_as_ushort(__float2half_rz(x));
    o[42] = __half_as_ushort(__float2half_ru(x)); o[43] = __half_as_ushort(__float2half_rd(x));
    o[44] = __float_as_uint(__half2float(__ushort_as_half((unsigned short)s)));
    o[45] = __half_as_ushort(__double2half(d));
    o[46] = __bfloat16_as_ushort(__float2bfloat16_rn(x)); o[47] = __bfloat16_as_ushort(__float2bfloat16_rz(x));
    o[48] = __bfloat16_as_ushort(__float2bfloat16_ru(x)); o[49] = __bfloat16_as_ushort(__float2bfloat16_rd(x));
    o[50] = __float_as_uint(__bfloat162float(__ushort_as_bfloat16((unsigned short)s)));
    o[51] = __half_as_ushort(__int2half_rn(s % 70000)); o[52] = (unsigned)(short)__half2short_rz(__float2half_rn(x));
    o[53] = __bfloat16_as_ushort(__double2bfloat16(d));
    o[54] = (unsigned)(int)x;            // C conversions: truncation
    o[55] = __float_as_uint((float)l);
}

// f16 and bf16 arithmetic, scalar and packed (the halves from bits).
#define NH 22
extern "C" __global__ void half_ops(const unsigned *a, const unsigned *b, const unsigned *c, unsigned *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned ua = a[i], ub = b[i], uc = c[i];
    __half ha = __ushort_as_half((unsigned short)ua), hb = __ushort_as_half((unsigned short)ub), hc = __ushort_as_half((unsigned short)uc);
    __half2 pa = *(__half2 *)&ua, pb = *(__half2 *)&ub, pc = *(__half2 *)&uc;
    __nv_bfloat16 ba = __ushort_as_bfloat16((unsigned short)ua), bb = __ushort_as_bfloat16((unsigned short)ub),
                  bc = __ushort_as_bfloat16((unsigned short)uc);
    __nv_bfloat162 qa = *(__nv_bfloat162 *)&ua, qb = *(__nv_bfloat162 *)&ub, qc = *(__nv_bfloat162 *)&uc;
    unsigned *o = out + i * NH;
    o[0] = __half_as_ushort(__hadd(ha, hb));
    o[1] = __half_as_ushort(__hsub(ha, hb));
    o[2] = __half_as_ushort(__hmul(ha, hb));
    o[3] = __half_as_ushort(__hfma(ha, hb, hc));
    o[4] = __half_as_ushort(__hmax(ha, hb));
    o[5] = __half_as_ushort(__hmin(ha, hb));
    o[6] = __half_as_ushort(__hneg(ha));
    o[7] = __half_as_ushort(__habs(ha));
    o[8] = __hlt(ha, hb) ? 1u : 0u;
    o[9] = __half_as_ushort(__hadd_sat(ha, hb));
    __half2 s2 = __hadd2(pa, pb), m2 = __hmul2(pa, pb), f2 = __hfma2(pa, pb, pc);
    o[10] = *(unsigned *)&s2;
    o[11] = *(unsigned *)&m2;
    o[12] = *(unsigned *)&f2;
    o[13] = __bfloat16_as_ushort(__hadd(ba, bb));
    o[14] = __bfloat16_as_ushort(__hsub(ba, bb));
    o[15] = __bfloat16_as_ushort(__hmul(ba, bb));
    o[16] = __bfloat16_as_ushort(__hfma(ba, bb, bc));
    o[17] = __bfloat16_as_ushort(__hmax(ba, bb));
    __nv_bfloat162 t2 = __hadd2(qa, qb), u2 = __hfma2(qa, qb, qc);
    o[18] = *(unsigned *)&t2;
    o[19] = *(unsigned *)&u2;
    o[20] = __half_as_ushort(__float2half_rn(__half2float(ha) * 0.5f));
    o[21] = __half_as_ushort(__hdiv(ha, hb));
}

// More of cuda_fp16.h / cuda_bf16.h: the NaN-propagating min/max, relu and saturating forms, the
// rounding functions, classification and the all-lanes comparisons, packing from float2.
#define NHM 16
extern "C" __global__ void half_more(const unsigned *a, const unsigned *b, const unsigned *c, unsigned *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned ua = a[i], ub = b[i], uc = c[i];
    __half ha = __ushort_as_half((unsigned short)ua), hb = __ushort_as_half((unsigned short)ub), hc = __ushort_as_half((unsigned short)uc);
    __half2 pa = *(__half2 *)&ua, pb = *(__half2 *)&ub, pc = *(__half2 *)&uc;
    __nv_bfloat162 qa = *(__nv_bfloat162 *)&ua, qb = *(__nv_bfloat162 *)&ub, qc = *(__nv_bfloat162 *)&uc;
    unsigned *o = out + i * NHM;
    __half2 r;
    __nv_bfloat162 q;
    r = __hmax2_nan(pa, pb); o[0] = *(unsigned *)&r;
    r = __hfma2_relu(pa, pb, pc); o[1] = *(unsigned *)&r;
    o[2] = __half_as_ushort(__hmin_nan(ha, hb));
    o[3] = __half_as_ushort(__hfma_sat(ha, hb, hc));
    o[4] = __half_as_ushort(hceil(ha));
    o[5] = __half_as_ushort(hrint(ha));
    o[6] = __half_as_ushort(htrunc(ha));
    o[7] = __half_as_ushort(hfloor(ha));
    o[8] = (unsigned)(__hisinf(ha) + 2) | (unsigned)__hisnan(hb) << 4;
    o[9] = (unsigned)__hbeq2(pa, pb) | (unsigned)__hbgtu2(pa, pb) << 1 | (unsigned)__hble2(pa, pc) << 2 |
           (unsigned)__hbequ2(pa, pb) << 3 | (unsigned)__hbneu2(pa, pc) << 4;
    r = __habs2(pa); o[10] = *(unsigned *)&r;
    r = __hsub2_sat(pa, pb); o[11] = *(unsigned *)&r;
    r = __float22half2_rn(make_float2(__uint_as_float(ua), __uint_as_float(ub))); o[12] = *(unsigned *)&r;
    q = __hmax2_nan(qa, qb); o[13] = *(unsigned *)&q;
    r = __hmul2_rn(pa, pb); o[14] = *(unsigned *)&r;
    q = __hfma2_relu(qa, qb, qc); o[15] = *(unsigned *)&q;
}
