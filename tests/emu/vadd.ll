target datalayout = "e-p6:32:32-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()

define ptx_kernel void @vadd(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %t0 = mul i32 %bid, %bdim
  %i = add i32 %t0, %tid
  %ok = icmp slt i32 %i, %n
  br i1 %ok, label %body, label %done
body:
  %idx = sext i32 %i to i64
  %pa = getelementptr float, ptr addrspace(1) %a, i64 %idx
  %pb = getelementptr float, ptr addrspace(1) %b, i64 %idx
  %pc = getelementptr float, ptr addrspace(1) %c, i64 %idx
  %x = load float, ptr addrspace(1) %pa
  %y = load float, ptr addrspace(1) %pb
  %s = fadd float %x, %y
  store float %s, ptr addrspace(1) %pc
  br label %done
done:
  ret void
}
