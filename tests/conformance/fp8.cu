// fp8.cu - CUDA's FP8 conversions (cuda_fp8.h): float, float2, half2 and bfloat162 to E4M3 and E5M2 with
// and without saturation, FP8 pairs back to half2, and the __nv_fp8_e4m3 / __nv_fp8_e5m2 types.  On sm_90a
// nvcc writes cvt.rn.satfinite.{e4m3x2,e5m2x2}.{f32,f16x2} and cvt.rn.f16x2.{e4m3x2,e5m2x2}; on sm_80,
// which has none of them, the header's integer code.  Results are stored as bits; the host checks them
// exactly against the conversions as CUDA documents them (tests/test_conformance.c).
// Also cuda_fp4.h / cuda_fp6.h: floats to FP4 E2M1 and FP6 E2M3 / E3M2 and back (integer code on sm_80 and sm_90a).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_fp4.h>
#include <cuda_fp6.h>

#define NO 14
extern "C" __global__ void fp8_cvt(const float *x, const float *y, const unsigned *h2, const unsigned *b2, const unsigned short *q,
                                   unsigned *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float a = x[i], b = y[i];
    __half2_raw h;
    h.x = (unsigned short)(h2[i] & 0xFFFF), h.y = (unsigned short)(h2[i] >> 16);
    __nv_bfloat162_raw bf;
    bf.x = (unsigned short)(b2[i] & 0xFFFF), bf.y = (unsigned short)(b2[i] >> 16);
    unsigned r[NO];
    r[0] = __nv_cvt_float_to_fp8(a, __NV_SATFINITE, __NV_E4M3);
    r[1] = __nv_cvt_float_to_fp8(a, __NV_NOSAT, __NV_E4M3);
    r[2] = __nv_cvt_float_to_fp8(a, __NV_SATFINITE, __NV_E5M2);
    r[3] = __nv_cvt_float_to_fp8(a, __NV_NOSAT, __NV_E5M2);
    r[4] = __nv_cvt_float2_to_fp8x2(make_float2(a, b), __NV_SATFINITE, __NV_E4M3);
    r[5] = __nv_cvt_float2_to_fp8x2(make_float2(a, b), __NV_SATFINITE, __NV_E5M2);
    r[6] = __nv_cvt_halfraw2_to_fp8x2(h, __NV_SATFINITE, __NV_E4M3);
    r[7] = __nv_cvt_halfraw2_to_fp8x2(h, __NV_SATFINITE, __NV_E5M2);
    r[8] = __nv_cvt_bfloat16raw2_to_fp8x2(bf, __NV_SATFINITE, __NV_E4M3);
    r[9] = __nv_cvt_bfloat16raw2_to_fp8x2(bf, __NV_SATFINITE, __NV_E5M2);
    __half2_raw o1 = __nv_cvt_fp8x2_to_halfraw2(q[i], __NV_E4M3);
    __half2_raw o2 = __nv_cvt_fp8x2_to_halfraw2(q[i], __NV_E5M2);
    r[10] = o1.x | (unsigned)o1.y << 16;
    r[11] = o2.x | (unsigned)o2.y << 16;
    r[12] = __float_as_uint(float(__nv_fp8_e4m3(a)));
    r[13] = __float_as_uint(float(__nv_fp8_e5m2(b)));
    for (int k = 0; k < NO; k++) out[i * NO + k] = r[k];
}

// FP4 and FP6 (cuda_fp4.h, cuda_fp6.h): float to __nv_fp4_e2m1, __nv_fp6_e2m3 and __nv_fp6_e3m2 (nearest even,
// saturating) and back to float; the header's integer code on sm_80 and sm_90a.
extern "C" __global__ void fp46_cvt(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = in[i];
    out[i * 3 + 0] = float(__nv_fp4_e2m1(x));
    out[i * 3 + 1] = float(__nv_fp6_e2m3(x));
    out[i * 3 + 2] = float(__nv_fp6_e3m2(x));
}
