target triple = "nvptx64-nvidia-cuda"
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.shfl.sync.down.i32(i32, i32, i32, i32)
declare i32 @llvm.nvvm.shfl.sync.up.i32(i32, i32, i32, i32)
declare i32 @llvm.nvvm.shfl.sync.idx.i32(i32, i32, i32, i32)
@dyn = external addrspace(3) global [0 x <4 x float>], align 16

; y[i] = f16(x[i] * s) for 4-wide vectors through dynamic shared memory, plus
; lane data movement: sh[3*i] = shfl.down(i, 1), sh[3*i+1] = shfl.up(i, 2), sh[3*i+2] = shfl.idx(i, 5)
define ptx_kernel void @scale_h(ptr addrspace(1) %x, ptr addrspace(1) %y, ptr addrspace(1) %sh, float %s) {
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %t0 = mul i32 %bid, %bdim
  %i = add i32 %t0, %tid
  %i64 = sext i32 %i to i64
  %px = getelementptr <4 x float>, ptr addrspace(1) %x, i64 %i64
  %v = load <4 x float>, ptr addrspace(1) %px, align 16
  %t64 = zext i32 %tid to i64
  %ps = getelementptr [0 x <4 x float>], ptr addrspace(3) @dyn, i64 0, i64 %t64
  store <4 x float> %v, ptr addrspace(3) %ps, align 16
  %w = load <4 x float>, ptr addrspace(3) %ps, align 16
  %ins = insertelement <4 x float> undef, float %s, i32 0
  %splat = shufflevector <4 x float> %ins, <4 x float> undef, <4 x i32> zeroinitializer
  %m = fmul <4 x float> %w, %splat
  %h = fptrunc <4 x float> %m to <4 x half>
  %py = getelementptr <4 x half>, ptr addrspace(1) %y, i64 %i64
  store <4 x half> %h, ptr addrspace(1) %py, align 8
  %d = call i32 @llvm.nvvm.shfl.sync.down.i32(i32 -1, i32 %i, i32 1, i32 31)
  %u = call i32 @llvm.nvvm.shfl.sync.up.i32(i32 -1, i32 %i, i32 2, i32 0)
  %x5 = call i32 @llvm.nvvm.shfl.sync.idx.i32(i32 -1, i32 %i, i32 5, i32 31)
  %b3 = mul i64 %i64, 3
  %q0 = getelementptr i32, ptr addrspace(1) %sh, i64 %b3
  store i32 %d, ptr addrspace(1) %q0
  %q1 = getelementptr i32, ptr addrspace(1) %q0, i64 1
  store i32 %u, ptr addrspace(1) %q1
  %q2 = getelementptr i32, ptr addrspace(1) %q0, i64 2
  store i32 %x5, ptr addrspace(1) %q2
  ret void
}
