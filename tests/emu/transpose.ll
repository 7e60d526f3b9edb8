target triple = "nvptx64-nvidia-cuda"
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.tid.y()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
declare void @llvm.nvvm.barrier.cta.sync.aligned.all(i32)
@tile = internal addrspace(3) global [32 x [33 x float]] undef, align 4

; out[c][r] = in[r][c] for an rows x cols matrix; 32x8 thread blocks, 32x32 tiles
define ptx_kernel void @transpose(ptr addrspace(1) %in, ptr addrspace(1) %out, i32 %rows, i32 %cols) {
entry:
  %tx = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %ty = call i32 @llvm.nvvm.read.ptx.sreg.tid.y()
  %bx = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %by = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.y()
  %c0 = shl i32 %bx, 5
  %r0 = shl i32 %by, 5
  %col = add i32 %c0, %tx
  br label %load
load:
  %j = phi i32 [ 0, %entry ], [ %j1, %load.next ]
  %yy = add i32 %ty, %j
  %row = add i32 %r0, %yy
  %okr = icmp slt i32 %row, %rows
  %okc = icmp slt i32 %col, %cols
  %ok = and i1 %okr, %okc
  br i1 %ok, label %load.do, label %load.next
load.do:
  %lin = mul i32 %row, %cols
  %idx = add i32 %lin, %col
  %idx64 = sext i32 %idx to i64
  %p = getelementptr float, ptr addrspace(1) %in, i64 %idx64
  %v = load float, ptr addrspace(1) %p
  %yy64 = zext i32 %yy to i64
  %tx64 = zext i32 %tx to i64
  %s = getelementptr [32 x [33 x float]], ptr addrspace(3) @tile, i64 0, i64 %yy64, i64 %tx64
  store float %v, ptr addrspace(3) %s
  br label %load.next
load.next:
  %j1 = add i32 %j, 8
  %more = icmp ult i32 %j1, 32
  br i1 %more, label %load, label %sync, !llvm.loop !0
sync:
  call void @llvm.nvvm.barrier.cta.sync.aligned.all(i32 0)
  %ocol = add i32 %r0, %tx
  br label %store
store:
  %k = phi i32 [ 0, %sync ], [ %k1, %store.next ]
  %ky = add i32 %ty, %k
  %orow = add i32 %c0, %ky
  %ok2r = icmp slt i32 %orow, %cols
  %ok2c = icmp slt i32 %ocol, %rows
  %ok2 = and i1 %ok2r, %ok2c
  br i1 %ok2, label %store.do, label %store.next
store.do:
  %tx64b = zext i32 %tx to i64
  %ky64 = zext i32 %ky to i64
  %s2 = getelementptr [32 x [33 x float]], ptr addrspace(3) @tile, i64 0, i64 %tx64b, i64 %ky64
  %w = load float, ptr addrspace(3) %s2
  %olin = mul i32 %orow, %rows
  %oidx = add i32 %olin, %ocol
  %oidx64 = sext i32 %oidx to i64
  %q = getelementptr float, ptr addrspace(1) %out, i64 %oidx64
  store float %w, ptr addrspace(1) %q
  br label %store.next
store.next:
  %k1 = add i32 %k, 8
  %more2 = icmp ult i32 %k1, 32
  br i1 %more2, label %store, label %done, !llvm.loop !0
done:
  ret void
}
!0 = distinct !{!0, !1}
!1 = !{!"llvm.loop.unroll.disable"}
