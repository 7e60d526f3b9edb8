target triple = "nvptx64-nvidia-cuda"
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare float @llvm.nvvm.shfl.sync.bfly.f32(i32, float, i32, i32)
declare i32 @llvm.nvvm.shfl.sync.down.i32(i32, i32, i32, i32)
declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32)
@partial = internal addrspace(3) global [32 x float] undef, align 4

; out[blockIdx] = sum of x[blockIdx*ntid .. +ntid) (masked by n); ntid multiple of 32, <= 1024
define ptx_kernel void @block_sum(ptr addrspace(1) %x, ptr addrspace(1) %out, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %t0 = mul i32 %bid, %bdim
  %i = add i32 %t0, %tid
  %ok = icmp slt i32 %i, %n
  br i1 %ok, label %ld, label %red
ld:
  %idx = sext i32 %i to i64
  %pa = getelementptr float, ptr addrspace(1) %x, i64 %idx
  %v0 = load float, ptr addrspace(1) %pa
  br label %red
red:
  %v = phi float [ %v0, %ld ], [ 0.0, %entry ]
  %s1 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %v, i32 16, i32 31)
  %a1 = fadd float %v, %s1
  %s2 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %a1, i32 8, i32 31)
  %a2 = fadd float %a1, %s2
  %s3 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %a2, i32 4, i32 31)
  %a3 = fadd float %a2, %s3
  %s4 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %a3, i32 2, i32 31)
  %a4 = fadd float %a3, %s4
  %s5 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %a4, i32 1, i32 31)
  %a5 = fadd float %a4, %s5
  %lane = and i32 %tid, 31
  %warp = lshr i32 %tid, 5
  %l0 = icmp eq i32 %lane, 0
  br i1 %l0, label %wr, label %sync
wr:
  %wi = zext i32 %warp to i64
  %pp = getelementptr [32 x float], ptr addrspace(3) @partial, i64 0, i64 %wi
  store float %a5, ptr addrspace(3) %pp
  br label %sync
sync:
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %w0 = icmp eq i32 %warp, 0
  br i1 %w0, label %final, label %done
final:
  %nw = lshr i32 %bdim, 5
  %has = icmp ult i32 %lane, %nw
  %li = zext i32 %lane to i64
  %pq = getelementptr [32 x float], ptr addrspace(3) @partial, i64 0, i64 %li
  %pv = load float, ptr addrspace(3) %pq
  %w = select i1 %has, float %pv, float 0.0
  %t1 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %w, i32 16, i32 31)
  %b1 = fadd float %w, %t1
  %t2 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %b1, i32 8, i32 31)
  %b2 = fadd float %b1, %t2
  %t3 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %b2, i32 4, i32 31)
  %b3 = fadd float %b2, %t3
  %t4 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %b3, i32 2, i32 31)
  %b4 = fadd float %b3, %t4
  %t5 = call float @llvm.nvvm.shfl.sync.bfly.f32(i32 -1, float %b4, i32 1, i32 31)
  %b5 = fadd float %b4, %t5
  br i1 %l0, label %st, label %done
st:
  %bi = zext i32 %bid to i64
  %po = getelementptr float, ptr addrspace(1) %out, i64 %bi
  store float %b5, ptr addrspace(1) %po
  br label %done
done:
  ret void
}
