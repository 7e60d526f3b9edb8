; mma_loop.ll - tensor-core throughput for bench/emu_speed: each warp takes one A (16x16 f16) and
; B (16x8 f16) fragment from `in` and runs 64 iterations of 4 dependent chains of
; mma.m16n8k16 f32.f16.f16.f32, then stores its 4 accumulators (16 floats a lane) to out + 64*tid.
; n: the number of threads (a multiple of 32); in: 768 bytes, out: 64*n bytes.
target datalayout = "e-p3:32:32-p4:32:32-p5:32:32-p6:32:32-p7:32:32-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare { float, float, float, float } @llvm.nvvm.mma.m16n8k16.row.col.f32.f32(<2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, float, float, float, float)

define ptx_kernel void @mma_loop(ptr addrspace(1) %in, ptr addrspace(1) %out, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %cta = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %base = mul i32 %cta, %ntid
  %g = add i32 %base, %tid
  %live = icmp ult i32 %g, %n
  br i1 %live, label %load, label %done
load:
  %l = and i32 %g, 31
  %l6 = mul i32 %l, 6
  %p = getelementptr i32, ptr addrspace(1) %in, i32 %l6
  %v = load <2 x i32>, ptr addrspace(1) %p, align 8
  %p2 = getelementptr i32, ptr addrspace(1) %p, i32 2
  %w = load <4 x i32>, ptr addrspace(1) %p2, align 8
  %x0 = extractelement <2 x i32> %v, i32 0
  %x1 = extractelement <2 x i32> %v, i32 1
  %x2 = extractelement <4 x i32> %w, i32 0
  %x3 = extractelement <4 x i32> %w, i32 1
  %x4 = extractelement <4 x i32> %w, i32 2
  %x5 = extractelement <4 x i32> %w, i32 3
  %a0 = bitcast i32 %x0 to <2 x half>
  %a1 = bitcast i32 %x1 to <2 x half>
  %a2 = bitcast i32 %x2 to <2 x half>
  %a3 = bitcast i32 %x3 to <2 x half>
  %b0 = bitcast i32 %x4 to <2 x half>
  %b1 = bitcast i32 %x5 to <2 x half>
  br label %loop
loop:
  %i = phi i32 [ 0, %load ], [ %i.next, %loop ]
  %c00 = phi float [ 0.0, %load ], [ %d00, %loop ]
  %c01 = phi float [ 0.0, %load ], [ %d01, %loop ]
  %c02 = phi float [ 0.0, %load ], [ %d02, %loop ]
  %c03 = phi float [ 0.0, %load ], [ %d03, %loop ]
  %c10 = phi float [ 0.0, %load ], [ %d10, %loop ]
  %c11 = phi float [ 0.0, %load ], [ %d11, %loop ]
  %c12 = phi float [ 0.0, %load ], [ %d12, %loop ]
  %c13 = phi float [ 0.0, %load ], [ %d13, %loop ]
  %c20 = phi float [ 0.0, %load ], [ %d20, %loop ]
  %c21 = phi float [ 0.0, %load ], [ %d21, %loop ]
  %c22 = phi float [ 0.0, %load ], [ %d22, %loop ]
  %c23 = phi float [ 0.0, %load ], [ %d23, %loop ]
  %c30 = phi float [ 0.0, %load ], [ %d30, %loop ]
  %c31 = phi float [ 0.0, %load ], [ %d31, %loop ]
  %c32 = phi float [ 0.0, %load ], [ %d32, %loop ]
  %c33 = phi float [ 0.0, %load ], [ %d33, %loop ]
  %r0 = call { float, float, float, float } @llvm.nvvm.mma.m16n8k16.row.col.f32.f32(<2 x half> %a0, <2 x half> %a1, <2 x half> %a2, <2 x half> %a3, <2 x half> %b0, <2 x half> %b1, float %c00, float %c01, float %c02, float %c03)
  %r1 = call { float, float, float, float } @llvm.nvvm.mma.m16n8k16.row.col.f32.f32(<2 x half> %a1, <2 x half> %a2, <2 x half> %a3, <2 x half> %a0, <2 x half> %b0, <2 x half> %b1, float %c10, float %c11, float %c12, float %c13)
  %r2 = call { float, float, float, float } @llvm.nvvm.mma.m16n8k16.row.col.f32.f32(<2 x half> %a2, <2 x half> %a3, <2 x half> %a0, <2 x half> %a1, <2 x half> %b1, <2 x half> %b0, float %c20, float %c21, float %c22, float %c23)
  %r3 = call { float, float, float, float } @llvm.nvvm.mma.m16n8k16.row.col.f32.f32(<2 x half> %a3, <2 x half> %a0, <2 x half> %a1, <2 x half> %a2, <2 x half> %b1, <2 x half> %b0, float %c30, float %c31, float %c32, float %c33)
  %d00 = extractvalue { float, float, float, float } %r0, 0
  %d01 = extractvalue { float, float, float, float } %r0, 1
  %d02 = extractvalue { float, float, float, float } %r0, 2
  %d03 = extractvalue { float, float, float, float } %r0, 3
  %d10 = extractvalue { float, float, float, float } %r1, 0
  %d11 = extractvalue { float, float, float, float } %r1, 1
  %d12 = extractvalue { float, float, float, float } %r1, 2
  %d13 = extractvalue { float, float, float, float } %r1, 3
  %d20 = extractvalue { float, float, float, float } %r2, 0
  %d21 = extractvalue { float, float, float, float } %r2, 1
  %d22 = extractvalue { float, float, float, float } %r2, 2
  %d23 = extractvalue { float, float, float, float } %r2, 3
  %d30 = extractvalue { float, float, float, float } %r3, 0
  %d31 = extractvalue { float, float, float, float } %r3, 1
  %d32 = extractvalue { float, float, float, float } %r3, 2
  %d33 = extractvalue { float, float, float, float } %r3, 3
  %i.next = add i32 %i, 1
  %more = icmp ult i32 %i.next, 64
  br i1 %more, label %loop, label %store
store:
  %o = mul i32 %g, 16
  %q = getelementptr float, ptr addrspace(1) %out, i32 %o
  %s0 = insertelement <4 x float> poison, float %d00, i32 0
  %s1 = insertelement <4 x float> %s0, float %d01, i32 1
  %s2 = insertelement <4 x float> %s1, float %d02, i32 2
  %s3 = insertelement <4 x float> %s2, float %d03, i32 3
  store <4 x float> %s3, ptr addrspace(1) %q, align 16
  %q1 = getelementptr float, ptr addrspace(1) %q, i32 4
  %t0 = insertelement <4 x float> poison, float %d10, i32 0
  %t1 = insertelement <4 x float> %t0, float %d11, i32 1
  %t2 = insertelement <4 x float> %t1, float %d12, i32 2
  %t3 = insertelement <4 x float> %t2, float %d13, i32 3
  store <4 x float> %t3, ptr addrspace(1) %q1, align 16
  %q2 = getelementptr float, ptr addrspace(1) %q, i32 8
  %u0 = insertelement <4 x float> poison, float %d20, i32 0
  %u1 = insertelement <4 x float> %u0, float %d21, i32 1
  %u2 = insertelement <4 x float> %u1, float %d22, i32 2
  %u3 = insertelement <4 x float> %u2, float %d23, i32 3
  store <4 x float> %u3, ptr addrspace(1) %q2, align 16
  %q3 = getelementptr float, ptr addrspace(1) %q, i32 12
  %w0 = insertelement <4 x float> poison, float %d30, i32 0
  %w1 = insertelement <4 x float> %w0, float %d31, i32 1
  %w2 = insertelement <4 x float> %w1, float %d32, i32 2
  %w3 = insertelement <4 x float> %w2, float %d33, i32 3
  store <4 x float> %w3, ptr addrspace(1) %q3, align 16
  br label %done
done:
  ret void
}
