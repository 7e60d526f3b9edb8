// mma.cu - tensor-core code through inline PTX, as hand-tuned kernels write
// it: cp.async global -> shared (16-byte chunks, commit/wait), ldmatrix
// (A: .x4 from a row-major tile; B: .x2 .trans from a row-major k x n tile)
// and mma.sync.m16n8k16 f16 x f16 + f32.  One warp computes a 16x8 tile per
// block; small integer values make the f32 result exact.
#include <cuda_fp16.h>

extern "C" __global__ void mma_tile(const __half *A, const __half *B, const float *C, float *D) {
    __shared__ __align__(16) __half As[16 * 16];
    __shared__ __align__(16) __half Bs[16 * 8];
    const __half *Ab = A + blockIdx.x * 256, *Bb = B + blockIdx.x * 128;
    const float *Cb = C + blockIdx.x * 128;
    float *Db = D + blockIdx.x * 128;
    int lane = threadIdx.x;
    unsigned as = (unsigned)__cvta_generic_to_shared(As + lane * 8);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16;\n" ::"r"(as), "l"(Ab + lane * 8));
    if (lane < 16) {
        unsigned bs = (unsigned)__cvta_generic_to_shared(Bs + lane * 8);
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(bs), "l"(Bb + lane * 8));
    }
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group 0;\n" ::);
    __syncwarp();
    unsigned a0, a1, a2, a3, b0, b1;
    unsigned arow = (unsigned)__cvta_generic_to_shared(As + (lane % 16) * 16 + (lane / 16) * 8);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3) : "r"(arow));
    unsigned brow = (unsigned)__cvta_generic_to_shared(Bs + (lane % 16) * 8);
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n" : "=r"(b0), "=r"(b1) : "r"(brow));
    int g = lane / 4, t = lane % 4;
    float c0 = Cb[g * 8 + 2 * t], c1 = Cb[g * 8 + 2 * t + 1], c2 = Cb[(g + 8) * 8 + 2 * t], c3 = Cb[(g + 8) * 8 + 2 * t + 1];
    float d0, d1, d2, d3;
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%10, %11, %12, %13};\n"
                 : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c0), "f"(c1), "f"(c2), "f"(c3));
    Db[g * 8 + 2 * t] = d0;
    Db[g * 8 + 2 * t + 1] = d1;
    Db[(g + 8) * 8 + 2 * t] = d2;
    Db[(g + 8) * 8 + 2 * t + 1] = d3;
}
