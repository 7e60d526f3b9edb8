// math.cu - the CUDA math library as nvcc inlines it (libdevice) into the
// PTX: each thread evaluates every function on its inputs; the host checks
// the results against the maximum ulp errors the CUDA Programming Guide
// documents (tests/test_conformance.c has the table).

#define MF 26
extern "C" __global__ void math_f32(const float *a, const float *b, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = a[i], y = b[i];
    float *o = out + i * MF;
    o[0] = sinf(x);
    o[1] = cosf(x);
    o[2] = tanf(x);
    o[3] = expf(x);
    o[4] = exp2f(x);
    o[5] = exp10f(x);
    o[6] = logf(x);
    o[7] = log2f(x);
    o[8] = log10f(x);
    o[9] = powf(x, y);
    o[10] = erff(x);
    o[11] = erfcf(x);
    o[12] = sqrtf(x);
    o[13] = rsqrtf(x);
    o[14] = cbrtf(x);
    o[15] = atanf(x);
    o[16] = atan2f(x, y);
    o[17] = sinhf(x);
    o[18] = tanhf(x);
    o[19] = asinf(x);
    o[20] = acosf(x);
    o[21] = expm1f(x);
    o[22] = log1pf(x);
    o[23] = __sinf(x);     // fast intrinsics: absolute error bounds
    o[24] = __expf(x);
    o[25] = __logf(x);
}

#define MD 12
extern "C" __global__ void math_f64(const double *a, const double *b, double *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    double x = a[i], y = b[i];
    double *o = out + i * MD;
    o[0] = sin(x);
    o[1] = cos(x);
    o[2] = tan(x);
    o[3] = exp(x);
    o[4] = log(x);
    o[5] = pow(x, y);
    o[6] = erf(x);
    o[7] = sqrt(x);
    o[8] = atan2(x, y);
    o[9] = tanh(x);
    o[10] = cbrt(x);
    o[11] = log1p(x);
}
