// hw_facts.cu - what the GPU does where the PTX ISA is silent and the emulator had to choose (run on a lent
// GPU by hand or from a device script; prints one line per fact, the result's bits beside the emulator's).
//
//   nvcc -arch=sm_90 -o /tmp/hw_facts bench/gpu/hw_facts.cu && /tmp/hw_facts
//
// .sat of a -0 result: an H200 gave +0 for every form here, f32 and f16 (2026-12-04; the emulator
// kept the sign of an f32 -0 before).  Inputs come from memory so nothing folds at compile time.
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

__global__ void facts(const float *in, unsigned *out) {
    float nz = in[0], pz = in[1], one = in[2];
    unsigned short hnz = (unsigned short)(__float_as_uint(in[3]) & 0xFFFF); // f16 -0 bits
    float r;
    asm volatile("add.sat.f32 %0, %1, %2;" : "=f"(r) : "f"(nz), "f"(nz));
    out[0] = __float_as_uint(r);
    asm volatile("mul.sat.f32 %0, %1, %2;" : "=f"(r) : "f"(pz), "f"(nz));
    out[1] = __float_as_uint(r);
    asm volatile("fma.rn.sat.f32 %0, %1, %2, %3;" : "=f"(r) : "f"(nz), "f"(one), "f"(nz));
    out[2] = __float_as_uint(r);
    asm volatile("cvt.sat.f32.f32 %0, %1;" : "=f"(r) : "f"(nz));
    out[3] = __float_as_uint(r);
    asm volatile("sub.sat.f32 %0, %1, %2;" : "=f"(r) : "f"(nz), "f"(pz));
    out[4] = __float_as_uint(r);
    asm volatile("add.ftz.sat.f32 %0, %1, %2;" : "=f"(r) : "f"(nz), "f"(nz));
    out[5] = __float_as_uint(r);
    unsigned short h;
    asm volatile("add.sat.f16 %0, %1, %2;" : "=h"(h) : "h"(hnz), "h"(hnz));
    out[6] = h;
    unsigned h2, hnz2 = (unsigned)hnz << 16 | hnz;
    asm volatile("add.sat.f16x2 %0, %1, %2;" : "=r"(h2) : "r"(hnz2), "r"(hnz2));
    out[7] = h2;
    asm volatile("mul.sat.f32 %0, %1, %2;" : "=f"(r) : "f"(-one), "f"(pz));
    out[8] = __float_as_uint(r);
}

int main() {
    const char *what[] = {"add.sat.f32 -0 + -0", "mul.sat.f32 +0 * -0", "fma.rn.sat.f32 -0 * 1 + -0", "cvt.sat.f32.f32 -0",
                          "sub.sat.f32 -0 - +0", "add.ftz.sat.f32 -0 + -0", "add.sat.f16 -0 + -0", "add.sat.f16x2 -0 + -0",
                          "mul.sat.f32 -1 * +0"};
    const unsigned emu[] = {0, 0, 0, 0, 0, 0, 0, 0, 0}; // an H200 gave +0 for all nine (2026-12-04)
    const int n = sizeof what / sizeof *what;
    float hin[4] = {-0.0f, 0.0f, 1.0f, 0.0f};
    unsigned hz = 0x8000;
    memcpy(&hin[3], &hz, 4);
    float *din;
    unsigned *dout, hout[16];
    if (cudaMalloc(&din, sizeof hin) || cudaMalloc(&dout, sizeof hout) || cudaMemcpy(din, hin, sizeof hin, cudaMemcpyHostToDevice)) {
        printf("hw_facts: cuda setup failed\n");
        return 1;
    }
    cudaMemset(dout, 0xAB, sizeof hout);
    facts<<<1, 1>>>(din, dout);
    cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess) e = cudaMemcpy(hout, dout, sizeof hout, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) {
        printf("hw_facts: %s\n", cudaGetErrorString(e));
        return 1;
    }
    for (int i = 0; i < n; i++)
        printf("fact %-28s gpu %#010x  emulator %#010x  %s\n", what[i], hout[i], emu[i], hout[i] == emu[i] ? "same" : "DIFFERENT");
    return 0;
}
