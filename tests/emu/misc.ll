target triple = "nvptx64-nvidia-cuda"
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare float @llvm.sqrt.f32(float)
declare float @llvm.exp2.f32(float)
declare float @llvm.nvvm.ex2.approx.ftz.f(float)
declare float @llvm.nvvm.lg2.approx.f(float)
declare float @llvm.nvvm.rsqrt.approx.f(float)
declare float @llvm.nvvm.sin.approx.f(float)
declare float @llvm.nvvm.cos.approx.f(float)
declare float @llvm.floor.f32(float)
declare float @llvm.ceil.f32(float)
declare float @llvm.rint.f32(float)
declare float @llvm.trunc.f32(float)
declare float @llvm.fabs.f32(float)
declare float @llvm.fma.f32(float, float, float)
declare float @llvm.maximum.f32(float, float)
declare float @llvm.minnum.f32(float, float)
declare float @llvm.copysign.f32(float, float)
declare i1 @llvm.is.fpclass.f32(float, i32)

define ptx_kernel void @math(ptr addrspace(1) %x, ptr addrspace(1) %y, ptr addrspace(1) %o, ptr addrspace(1) %h, i32 %n) {
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
  %pa = getelementptr float, ptr addrspace(1) %x, i64 %idx
  %pb = getelementptr float, ptr addrspace(1) %y, i64 %idx
  %a = load float, ptr addrspace(1) %pa
  %b = load float, ptr addrspace(1) %pb
  %base = mul i64 %idx, 16
  %q0 = getelementptr float, ptr addrspace(1) %o, i64 %base
  %r0 = call float @llvm.sqrt.f32(float %a)
  store float %r0, ptr addrspace(1) %q0
  %r1 = fdiv float %a, %b
  %q1 = getelementptr float, ptr addrspace(1) %q0, i64 1
  store float %r1, ptr addrspace(1) %q1
  %r2 = call float @llvm.nvvm.ex2.approx.ftz.f(float %a)
  %q2 = getelementptr float, ptr addrspace(1) %q0, i64 2
  store float %r2, ptr addrspace(1) %q2
  %r3 = call float @llvm.nvvm.lg2.approx.f(float %a)
  %q3 = getelementptr float, ptr addrspace(1) %q0, i64 3
  store float %r3, ptr addrspace(1) %q3
  %r4 = call float @llvm.floor.f32(float %a)
  %q4 = getelementptr float, ptr addrspace(1) %q0, i64 4
  store float %r4, ptr addrspace(1) %q4
  %r5 = call float @llvm.ceil.f32(float %a)
  %q5 = getelementptr float, ptr addrspace(1) %q0, i64 5
  store float %r5, ptr addrspace(1) %q5
  %r6 = call float @llvm.rint.f32(float %a)
  %q6 = getelementptr float, ptr addrspace(1) %q0, i64 6
  store float %r6, ptr addrspace(1) %q6
  %r7 = call float @llvm.maximum.f32(float %a, float %b)
  %q7 = getelementptr float, ptr addrspace(1) %q0, i64 7
  store float %r7, ptr addrspace(1) %q7
  %r8 = call float @llvm.fma.f32(float %a, float %b, float %a)
  %q8 = getelementptr float, ptr addrspace(1) %q0, i64 8
  store float %r8, ptr addrspace(1) %q8
  %r9 = fptosi float %a to i32
  %q9 = getelementptr float, ptr addrspace(1) %q0, i64 9
  store i32 %r9, ptr addrspace(1) %q9
  %hv = fptrunc float %a to half
  %hb = fptrunc float %b to bfloat
  %hi = getelementptr half, ptr addrspace(1) %h, i64 %base
  store half %hv, ptr addrspace(1) %hi
  %hi2 = getelementptr bfloat, ptr addrspace(1) %hi, i64 1
  store bfloat %hb, ptr addrspace(1) %hi2
  %hx = fpext half %hv to float
  %r10 = call float @llvm.nvvm.rsqrt.approx.f(float %hx)
  %q10 = getelementptr float, ptr addrspace(1) %q0, i64 10
  store float %r10, ptr addrspace(1) %q10
  %r11 = call float @llvm.copysign.f32(float %a, float %b)
  %q11 = getelementptr float, ptr addrspace(1) %q0, i64 11
  store float %r11, ptr addrspace(1) %q11
  %r12 = fcmp uno float %a, %b
  %r12i = zext i1 %r12 to i32
  %q12 = getelementptr float, ptr addrspace(1) %q0, i64 12
  store i32 %r12i, ptr addrspace(1) %q12
  %c13 = fcmp ult float %a, %b
  %r13 = select i1 %c13, float %a, float 2.0
  %q13 = getelementptr float, ptr addrspace(1) %q0, i64 13
  store float %r13, ptr addrspace(1) %q13
  %r14 = uitofp i32 %i to float
  %q14 = getelementptr float, ptr addrspace(1) %q0, i64 14
  store float %r14, ptr addrspace(1) %q14
  %r15 = call float @llvm.nvvm.sin.approx.f(float %a)
  %q15 = getelementptr float, ptr addrspace(1) %q0, i64 15
  store float %r15, ptr addrspace(1) %q15
  br label %done
done:
  ret void
}

define ptx_kernel void @atomics(ptr addrspace(1) %c, ptr addrspace(1) %f, i32 %n) {
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %bid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %bdim = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %t0 = mul i32 %bid, %bdim
  %i = add i32 %t0, %tid
  %old = atomicrmw add ptr addrspace(1) %c, i32 1 monotonic
  %c1 = getelementptr i32, ptr addrspace(1) %c, i64 1
  %o2 = atomicrmw max ptr addrspace(1) %c1, i32 %i monotonic
  %c2 = getelementptr i32, ptr addrspace(1) %c, i64 2
  %o3 = atomicrmw min ptr addrspace(1) %c2, i32 %i monotonic
  %fi = uitofp i32 %i to float
  %o4 = atomicrmw fadd ptr addrspace(1) %f, float %fi monotonic
  %c3 = getelementptr i32, ptr addrspace(1) %c, i64 3
  %o5 = cmpxchg ptr addrspace(1) %c3, i32 %i, i32 0 monotonic monotonic
  %c4 = getelementptr i32, ptr addrspace(1) %c, i64 4
  %o6 = atomicrmw xchg ptr addrspace(1) %c4, i32 %old monotonic
  %c5 = getelementptr i32, ptr addrspace(1) %c, i64 5
  %o7 = atomicrmw umax ptr addrspace(1) %c5, i32 %o6 monotonic
  ret void
}
