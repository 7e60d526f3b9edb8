; mma.ll - tensor-core pipeline as the NVPTX backend emits it: A (16x16 f16,
; row-major) and B (16x8 f16, row-major [k][n]) are copied to shared memory
; with cp.async.cg, A is loaded with ldmatrix.x4, B with ldmatrix.x2.trans,
; and one mma.m16n8k16 f32.f16.f16.f32 computes D = A*B + C per warp.
; Block: 32*W threads; warp w uses A + 512w, B + 256w, C/D + 512w.
target datalayout = "e-p3:32:32-p4:32:32-p5:32:32-p6:32:32-p7:32:32-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"

@sa = internal addrspace(3) global [4 x [256 x half]] undef, align 16
@sb = internal addrspace(3) global [4 x [128 x half]] undef, align 16

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare void @llvm.nvvm.cp.async.cg.shared.global.16(ptr addrspace(3), ptr addrspace(1))
declare void @llvm.nvvm.cp.async.commit.group()
declare void @llvm.nvvm.cp.async.wait.group(i32)
declare void @llvm.nvvm.barrier0()
declare { i32, i32, i32, i32 } @llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16(ptr addrspace(3))
declare { i32, i32 } @llvm.nvvm.ldmatrix.sync.aligned.m8n8.x2.trans.b16(ptr addrspace(3))
declare { float, float, float, float } @llvm.nvvm.mma.m16n8k16.row.col.f32.f32(<2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, float, float, float, float)

define ptx_kernel void @mma_pipe(ptr addrspace(1) %a, ptr addrspace(1) %b, ptr addrspace(1) %c, ptr addrspace(1) %d) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %w = lshr i32 %tid, 5
  %l = and i32 %tid, 31
  %sa_w = getelementptr [256 x half], ptr addrspace(3) @sa, i32 %w
  %sb_w = getelementptr [128 x half], ptr addrspace(3) @sb, i32 %w
  ; A: 32 chunks of 16 bytes, one per lane
  %aoff = mul i32 %tid, 16
  %aoff64 = zext i32 %aoff to i64
  %asrc = getelementptr i8, ptr addrspace(1) %a, i64 %aoff64
  %lo16 = mul i32 %l, 16
  %adst = getelementptr i8, ptr addrspace(3) %sa_w, i32 %lo16
  call void @llvm.nvvm.cp.async.cg.shared.global.16(ptr addrspace(3) %adst, ptr addrspace(1) %asrc)
  %isb = icmp ult i32 %l, 16
  br i1 %isb, label %copyb, label %wait
copyb:
  %boff = mul i32 %w, 256
  %boff2 = add i32 %boff, %lo16
  %boff64 = zext i32 %boff2 to i64
  %bsrc = getelementptr i8, ptr addrspace(1) %b, i64 %boff64
  %bdst = getelementptr i8, ptr addrspace(3) %sb_w, i32 %lo16
  call void @llvm.nvvm.cp.async.cg.shared.global.16(ptr addrspace(3) %bdst, ptr addrspace(1) %bsrc)
  br label %wait
wait:
  call void @llvm.nvvm.cp.async.commit.group()
  call void @llvm.nvvm.cp.async.wait.group(i32 0)
  call void @llvm.nvvm.barrier0()
  ; A rows: matrix i = l/8, row r = l%8 -> A row r + 8*(i&1), column 8*(i>>1)
  %i = lshr i32 %l, 3
  %r = and i32 %l, 7
  %i1 = and i32 %i, 1
  %i1x8 = shl i32 %i1, 3
  %row = add i32 %r, %i1x8
  %ih = lshr i32 %i, 1
  %kc = shl i32 %ih, 3
  %rowx16 = shl i32 %row, 4
  %ael = add i32 %rowx16, %kc
  %aptr = getelementptr half, ptr addrspace(3) %sa_w, i32 %ael
  %af = call { i32, i32, i32, i32 } @llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16(ptr addrspace(3) %aptr)
  ; B rows: lane l%16 gives row k = l%16
  %k = and i32 %l, 15
  %bel = shl i32 %k, 3
  %bptr = getelementptr half, ptr addrspace(3) %sb_w, i32 %bel
  %bf = call { i32, i32 } @llvm.nvvm.ldmatrix.sync.aligned.m8n8.x2.trans.b16(ptr addrspace(3) %bptr)
  %a0 = extractvalue { i32, i32, i32, i32 } %af, 0
  %a1 = extractvalue { i32, i32, i32, i32 } %af, 1
  %a2 = extractvalue { i32, i32, i32, i32 } %af, 2
  %a3 = extractvalue { i32, i32, i32, i32 } %af, 3
  %b0 = extractvalue { i32, i32 } %bf, 0
  %b1 = extractvalue { i32, i32 } %bf, 1
  %ha0 = bitcast i32 %a0 to <2 x half>
  %ha1 = bitcast i32 %a1 to <2 x half>
  %ha2 = bitcast i32 %a2 to <2 x half>
  %ha3 = bitcast i32 %a3 to <2 x half>
  %hb0 = bitcast i32 %b0 to <2 x half>
  %hb1 = bitcast i32 %b1 to <2 x half>
  ; C/D: 4 floats per lane at c + 16*tid
  %coff64 = zext i32 %aoff to i64
  %cptr = getelementptr i8, ptr addrspace(1) %c, i64 %coff64
  %cv = load <4 x float>, ptr addrspace(1) %cptr, align 16
  %c0 = extractelement <4 x float> %cv, i32 0
  %c1 = extractelement <4 x float> %cv, i32 1
  %c2 = extractelement <4 x float> %cv, i32 2
  %c3 = extractelement <4 x float> %cv, i32 3
  %dv = call { float, float, float, float } @llvm.nvvm.mma.m16n8k16.row.col.f32.f32(<2 x half> %ha0, <2 x half> %ha1, <2 x half> %ha2, <2 x half> %ha3, <2 x half> %hb0, <2 x half> %hb1, float %c0, float %c1, float %c2, float %c3)
  %d0 = extractvalue { float, float, float, float } %dv, 0
  %d1 = extractvalue { float, float, float, float } %dv, 1
  %d2 = extractvalue { float, float, float, float } %dv, 2
  %d3 = extractvalue { float, float, float, float } %dv, 3
  %o0 = insertelement <4 x float> undef, float %d0, i32 0
  %o1 = insertelement <4 x float> %o0, float %d1, i32 1
  %o2 = insertelement <4 x float> %o1, float %d2, i32 2
  %o3 = insertelement <4 x float> %o2, float %d3, i32 3
  %dptr = getelementptr i8, ptr addrspace(1) %d, i64 %coff64
  store <4 x float> %o3, ptr addrspace(1) %dptr, align 16
  ret void
}
