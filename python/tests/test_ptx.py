"""tile.load_ptx: PTX another compiler wrote, launched with NumPy arrays on the emulator.

The PTX below is written the ways Triton (qualified .ptr params, .maxntid) and nvcc (plain .u64
params, no block directive, structs by value as .b8 arrays, extern dynamic shared memory) write
it.  Results are checked against float64 NumPy references on fresh random inputs, outputs
poisoned first, at sizes that are not multiples of the block."""
import os
import struct
import unittest

import numpy as np

import tile

rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))

# spins until *flag is non-zero (the Ctrl-C tests)
SPIN = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry spin(.param .u64 flag)
.maxntid 32, 1, 1
{
    .reg .pred %p<2>;
    .reg .b32 %r<2>;
    .reg .b64 %rd<2>;
    ld.param.u64 %rd1, [flag];
$L:
    ld.volatile.global.u32 %r1, [%rd1];
    setp.eq.u32 %p1, %r1, 0;
    @%p1 bra $L;
    ret;
}
"""

# y[i] = alpha * x[i] + y[i] for i < n; 128 threads a block (Triton's header style)
AXPY = """
.version 8.0
.target sm_80
.address_size 64

.visible .entry axpy(
	.param .u64 .ptr .global .align 1 axpy_param_0,
	.param .u64 .ptr .global .align 1 axpy_param_1,
	.param .f32 axpy_param_2,
	.param .u32 axpy_param_3
)
.maxntid 128, 1, 1
{
	.reg .pred %p<2>;
	.reg .b32 %r<6>;
	.reg .f32 %f<5>;
	.reg .b64 %rd<6>;
	ld.param.u64 %rd1, [axpy_param_0];
	ld.param.u64 %rd2, [axpy_param_1];
	ld.param.f32 %f1, [axpy_param_2];
	ld.param.u32 %r1, [axpy_param_3];
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %tid.x;
	mad.lo.s32 %r4, %r2, 128, %r3;
	setp.ge.u32 %p1, %r4, %r1;
	@%p1 bra DONE;
	mul.wide.u32 %rd3, %r4, 4;
	add.s64 %rd4, %rd1, %rd3;
	add.s64 %rd5, %rd2, %rd3;
	ld.global.f32 %f2, [%rd4];
	ld.global.f32 %f3, [%rd5];
	fma.rn.f32 %f4, %f1, %f2, %f3;
	st.global.f32 [%rd5], %f4;
DONE:
	ret;
}
"""

# out[y][x] = in[y * s.stride + x] * s.scale + s.bias, through dynamic shared memory in reverse
# row order within the block; a 2-D block from .reqntid; the struct {u32 stride; f32 scale; f64 bias}
# passed by value (nvcc's .b8 array); no block directive on the second entry (block= required).
STRUCT2D = """
.version 8.0
.target sm_80
.address_size 64
.extern .shared .align 16 .b8 smem[];

.visible .entry rows(
	.param .u64 rows_param_0,
	.param .u64 rows_param_1,
	.param .align 8 .b8 rows_param_2[16]
)
.reqntid 16, 4, 1
{
	.reg .b32 %r<12>;
	.reg .f32 %f<4>;
	.reg .f64 %fd<4>;
	.reg .b64 %rd<10>;
	ld.param.u64 %rd1, [rows_param_0];
	ld.param.u64 %rd2, [rows_param_1];
	ld.param.u32 %r1, [rows_param_2];
	ld.param.f32 %f1, [rows_param_2+4];
	ld.param.f64 %fd1, [rows_param_2+8];
	mov.u32 %r2, %tid.x;
	mov.u32 %r3, %tid.y;
	mad.lo.s32 %r4, %r3, %r1, %r2;
	mul.wide.u32 %rd3, %r4, 4;
	add.s64 %rd4, %rd1, %rd3;
	ld.global.f32 %f2, [%rd4];
	// smem[(3 - y) * 16 + x] = in
	mov.u32 %r5, 3;
	sub.s32 %r6, %r5, %r3;
	shl.b32 %r7, %r6, 4;
	add.s32 %r8, %r7, %r2;
	shl.b32 %r9, %r8, 2;
	mov.u32 %r10, smem;
	add.s32 %r11, %r10, %r9;
	st.shared.f32 [%r11], %f2;
	bar.sync 0;
	// out[y * 16 + x] = smem[(3 - y) * 16 + x] read back by row 3 - y: the row's own value
	ld.shared.f32 %f3, [%r11];
	cvt.f64.f32 %fd2, %f3;
	cvt.f64.f32 %fd3, %f1;
	fma.rn.f64 %fd2, %fd2, %fd3, %fd1;
	cvt.rn.f32.f64 %f3, %fd2;
	mad.lo.s32 %r4, %r3, 16, %r2;
	mul.wide.u32 %rd5, %r4, 4;
	add.s64 %rd6, %rd2, %rd5;
	st.global.f32 [%rd6], %f3;
	ret;
}

.visible .entry fill_i16(
	.param .u64 fill_i16_param_0,
	.param .s16 fill_i16_param_1,
	.param .u32 fill_i16_param_2
)
{
	.reg .pred %p<2>;
	.reg .b16 %h<2>;
	.reg .b32 %r<6>;
	.reg .b64 %rd<4>;
	ld.param.u64 %rd1, [fill_i16_param_0];
	ld.param.s16 %h1, [fill_i16_param_1];
	ld.param.u32 %r1, [fill_i16_param_2];
	mov.u32 %r2, %ctaid.x;
	mov.u32 %r3, %ntid.x;
	mov.u32 %r4, %tid.x;
	mad.lo.s32 %r5, %r2, %r3, %r4;
	setp.ge.u32 %p1, %r5, %r1;
	@%p1 bra END;
	mul.wide.u32 %rd2, %r5, 2;
	add.s64 %rd3, %rd1, %rd2;
	st.global.b16 [%rd3], %h1;
END:
	ret;
}
"""


# A box of a 2-D f32 tensor through a host-encoded tensor map (`.param .align 64 .b8 tmap[128]`, as
# CUTLASS and Triton's host descriptors pass one): thread 0 issues the TMA copy on an mbarrier, every
# thread stores one element of the 8 x 16 box to out (elements past the tensor read as zero).
TMA_BOX = """.version 8.0
.target sm_90a
.address_size 64

.visible .entry k(.param .align 64 .b8 tmap[128], .param .u64 out, .param .u32 c0, .param .u32 c1)
.reqntid 128, 1, 1
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<6>;
    .reg .pred %p<3>;
    .reg .f32 %f1;
    .shared .align 8 .b64 bar;
    .shared .align 128 .b8 buf[512];
    mov.u32 %r0, %tid.x;
    mov.u32 %r1, bar;
    mov.u32 %r2, buf;
    mov.u64 %rd1, tmap;
    ld.param.u32 %r3, [c0];
    ld.param.u32 %r4, [c1];
    setp.ne.u32 %p1, %r0, 0;
    @%p1 bra SKIP;
    mbarrier.init.shared::cta.b64 [%r1], 1;
    mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r1], 512;
    cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r2], [%rd1, {%r3, %r4}], [%r1];
SKIP:
    bar.sync 0;
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r1], 0;
    @!%p2 bra WAIT;
    shl.b32 %r5, %r0, 2;
    add.u32 %r6, %r2, %r5;
    ld.shared.f32 %f1, [%r6];
    ld.param.u64 %rd2, [out];
    cvta.to.global.u64 %rd3, %rd2;
    mul.wide.u32 %rd4, %r0, 4;
    add.u64 %rd5, %rd3, %rd4;
    st.global.f32 [%rd5], %f1;
    ret;
}
"""

# One .im2col load of 32 pixels of 8 channels (1024 bytes) from (c0, w0, h0, n0) with the filter tap's offsets
# (ow, oh); each of 128 threads copies two words out.
TMA_IM2COL = """.version 8.0
.target sm_90a
.address_size 64

.visible .entry k(.param .align 64 .b8 tmap[128], .param .u64 out, .param .u32 c0, .param .u32 w0, .param .u32 h0,
                  .param .u32 n0, .param .u16 ow, .param .u16 oh)
.reqntid 128, 1, 1
{
    .reg .b16 %rs<3>;
    .reg .b32 %r<12>;
    .reg .b64 %rd<6>;
    .reg .pred %p<3>;
    .shared .align 8 .b64 bar;
    .shared .align 128 .b8 buf[1024];
    mov.u32 %r0, %tid.x;
    mov.u32 %r1, bar;
    mov.u32 %r2, buf;
    mov.u64 %rd1, tmap;
    ld.param.u32 %r3, [c0];
    ld.param.u32 %r4, [w0];
    ld.param.u32 %r5, [h0];
    ld.param.u32 %r6, [n0];
    ld.param.u16 %rs1, [ow];
    ld.param.u16 %rs2, [oh];
    setp.ne.u32 %p1, %r0, 0;
    @%p1 bra SKIP;
    mbarrier.init.shared::cta.b64 [%r1], 1;
    mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r1], 1024;
    cp.async.bulk.tensor.4d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes [%r2], [%rd1, {%r3, %r4, %r5, %r6}], [%r1], {%rs1, %rs2};
SKIP:
    bar.sync 0;
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r1], 0;
    @!%p2 bra WAIT;
    ld.param.u64 %rd2, [out];
    cvta.to.global.u64 %rd3, %rd2;
    shl.b32 %r7, %r0, 3;
    add.u32 %r8, %r2, %r7;
    ld.shared.v2.u32 {%r9, %r10}, [%r8];
    cvt.u64.u32 %rd4, %r7;
    add.u64 %rd5, %rd3, %rd4;
    st.global.v2.u32 [%rd5], {%r9, %r10};
    ret;
}
"""


class Ptx(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dev = tile.device("emu")

    def test_numpy_integers_are_values(self):
        """A NumPy integer for a 64-bit parameter is its value (it passed the address of a copy: NumPy scalars
        show the array protocols); the PTX types are not made by calling them."""
        ptx = (".version 7.0\n.target sm_80\n.address_size 64\n"
               ".visible .entry st2(.param .u64 p, .param .u64 a, .param .s64 b)\n.reqntid 1, 1, 1\n{\n .reg .b64 %rd<5>;\n"
               " ld.param.u64 %rd1, [p];\n ld.param.u64 %rd2, [a];\n ld.param.u64 %rd3, [b];\n"
               " st.global.u64 [%rd1], %rd2;\n st.global.u64 [%rd1+8], %rd3;\n ret;\n}\n")
        mod = tile.load_ptx(ptx, device=self.dev)
        for a, b in ((1000, -5), (np.uint64(1000), np.int64(-5)), (np.uint64(2**63 + 1), np.int32(-7))):
            y = np.zeros(2, np.int64)
            mod.st2[1](y, a, b)
            self.assertEqual([int(v) for v in y.view(np.uint64)], [int(a), int(b) % 2**64])
        with self.assertRaisesRegex(ValueError, r"shared must be >= 0 bytes, got -1"):  # it wrapped to 4294967295
            mod.st2[1](np.zeros(2, np.int64), 1, 2, shared=-1)
        with self.assertRaisesRegex(ValueError, r"emu_threads must be >= 0"):
            tile.Device("emu", emu_threads=-1)
        made = [t for t in (type(mod), type(mod.st2), type(mod.st2[1])) if t.__module__ == "tile._tile"]
        self.assertTrue(made)
        for t in made:  # the extension's own types (PtxModule is a Python wrapper of one)
            with self.assertRaisesRegex(TypeError, r"objects are made by tile"):
                t()

    def test_triton_style_entry(self):
        mod = tile.load_ptx(AXPY, device=self.dev)
        self.assertEqual(mod.kernels, ["axpy"])
        # an entry in a comment is none: nvcc and hand-written PTX keep old ones there
        commented = AXPY.replace(".address_size 64\n", ".address_size 64\n// .visible .entry old_axpy(\n"
                                 "/* .entry older(\n\t.param .u64 p\n) { ret; } */\n")
        self.assertEqual(tile.load_ptx(commented, device=self.dev).kernels, ["axpy"])
        # nor is a parameter or a .maxntid commented out (the runtime reads the header; they were the kernel's)
        old = AXPY.replace("\t.param .f32 axpy_param_2,", "\t// .param .u64 was,\n\t.param .f32 axpy_param_2, /* .param .f64 x, */")
        old = old.replace(".maxntid 128, 1, 1", "// .maxntid 256\n.maxntid 128, 1, 1")
        k = tile.load_ptx(old, device=self.dev).axpy
        self.assertEqual((k.signature, k.block_threads), ("ptr, ptr, f32, u32", 128))
        # the names as the lexer reads them: past a newline, or right after .entry ("%k"); not ".entry_x"
        odd = tile.load_ptx(AXPY.replace(".entry axpy(", ".entry\n\taxpy(") + ".visible .entry%k(.param .u32 n)\n{\n\tret;\n}\n",
                            device=self.dev)
        self.assertEqual(odd.kernels, ["axpy", "%k"])
        self.assertEqual((odd.axpy.signature, odd["%k"].signature), ("ptr, ptr, f32, u32", "u32"))
        k = mod.axpy
        self.assertEqual(k.signature, "ptr, ptr, f32, u32")
        self.assertEqual(k.block_threads, 128)
        for n in (1, 300, 1001):
            x = rng.standard_normal(n).astype(np.float32)
            y = rng.standard_normal(n + 5).astype(np.float32)
            y[n:] = np.nan  # past n: never written
            alpha = float(rng.standard_normal())
            want = np.float32(alpha).astype(np.float64) * x.astype(np.float64) + y[:n].astype(np.float64)
            k[(n + 127) // 128](x, y, alpha, n)
            np.testing.assert_allclose(y[:n], want, rtol=1e-6, atol=1e-6)
            self.assertTrue(np.isnan(y[n:]).all(), "written past n")

    def test_struct_by_value_2d_block_and_dynamic_shared(self):
        mod = tile.load_ptx(STRUCT2D, device=self.dev)
        self.assertEqual(mod.kernels, ["rows", "fill_i16"])
        k = mod["rows"]
        self.assertEqual(k.signature, "u64, u64, b8[16]")
        self.assertEqual(k.block_threads, 64)
        stride = 21
        src = rng.standard_normal(4 * stride).astype(np.float32)
        out = np.full(64, np.nan, dtype=np.float32)
        scale, bias = float(rng.standard_normal()), float(rng.standard_normal())
        geo = struct.pack("<Ifd", stride, scale, bias)
        k[1](src, out, geo, shared=256)
        want = np.array([src[y * stride + x] * np.float64(np.float32(scale)) + bias for y in range(4) for x in range(16)])
        np.testing.assert_allclose(out, want.astype(np.float32), rtol=1e-6, atol=1e-6)
        # a NumPy structured scalar serves as well
        rec = np.array([(stride, scale, bias)], dtype=np.dtype([("s", "<u4"), ("a", "<f4"), ("b", "<f8")]))[0]
        out[:] = np.nan
        k[1](src, out, rec, shared=256)
        np.testing.assert_allclose(out, want.astype(np.float32), rtol=1e-6, atol=1e-6)

    def test_block_required_without_directive(self):
        k = tile.load_ptx(STRUCT2D, device=self.dev).fill_i16
        self.assertEqual(k.block_threads, 0)
        out = np.zeros(77, dtype=np.int16)
        with self.assertRaisesRegex(ValueError, "block="):
            k[2](out, -5, 77)
        sentinel = np.full(3, 7, dtype=np.int16)
        buf = np.concatenate([out, sentinel])
        k[(77 + 31) // 32](buf, -5, 77, block=32)
        self.assertTrue((buf[:77] == -5).all())
        self.assertTrue((buf[77:] == 7).all(), "written past n")

    def test_argument_errors(self):
        mod = tile.load_ptx(STRUCT2D, device=self.dev)
        x = np.zeros(64, dtype=np.float32)
        with self.assertRaisesRegex(TypeError, "takes 3 arguments"):
            mod.rows[1](x, x)
        with self.assertRaisesRegex(ValueError, "takes 16 bytes, got 12"):
            mod.rows[1](x, x, struct.pack("<Iff", 1, 2.0, 3.0))
        with self.assertRaisesRegex(ValueError, "does not fit"):
            mod.fill_i16[1](x, 40000, 1, block=32)
        with self.assertRaisesRegex(ValueError, "does not fit"):
            mod.fill_i16[1](x, 1, -2**31 - 1, block=32)
        with self.assertRaisesRegex(ValueError, "does not fit"):
            mod.fill_i16[1](x, 1, 2**32, block=32)
        # a .u32 takes a negative int as two's complement (Triton declares its signed scalars .u32): n = -1 is
        # 2^32 - 1 elements, so the fill runs off the array, which the emulator reports
        with self.assertRaises(tile.Error):
            mod.fill_i16[1](np.zeros(8, dtype=np.int16), 1, -1, block=32)
        with self.assertRaisesRegex(TypeError, "expected an integer"):
            mod.fill_i16[1](x, 1.5, 1, block=32)
        with self.assertRaises(tile.Error):  # an address no allocation holds: the emulator's fault
            mod.fill_i16[1](12345, 1, 1, block=32)
        with self.assertRaisesRegex(KeyError, "no entry named 'nope'"):
            mod["nope"]
        # PTX the device cannot load is a source with an error: tile.CompileError, its line in .diagnostics
        with self.assertRaisesRegex(tile.CompileError, "ptx:3: ") as cm:
            tile.load_ptx(".version 8.0\n.target sm_80\n.visible .entry broken( {\n", device=self.dev)
        self.assertIn("ptx:3: ", cm.exception.diagnostics)

    def test_file_path(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "axpy.ptx")
            with open(p, "w") as f:
                f.write(AXPY)
            self.assertEqual(tile.load_ptx(p, device=self.dev).kernels, ["axpy"])

    def test_tensor_map_for_tma(self):
        dev = "emu:sm_90a"
        x = rng.standard_normal((13, 40)).astype(np.float32)
        k = tile.load_ptx(TMA_BOX, device=dev).k
        self.assertEqual(k.signature, "b8[128], u64, u32, u32")
        tm = tile.tensor_map(x, (8, 16), device=dev)
        self.assertEqual(len(tm), 128)
        for c0, c1 in [(0, 0), (16, 8), (30, 10)]:  # inside; past the last rows; past both ends
            out = np.full(128, np.nan, np.float32)
            k[1](tm, out, c0, c1)
            want = np.zeros((8, 16), np.float32)
            part = x[c1:c1 + 8, c0:c0 + 16]
            want[:part.shape[0], :part.shape[1]] = part
            np.testing.assert_array_equal(out.reshape(8, 16), want, err_msg=f"box at ({c0}, {c1})")
        with self.assertRaisesRegex(ValueError, "box has 1 entries, the array 2 dimensions"):
            tile.tensor_map(x, (8,), device=dev)
        with self.assertRaisesRegex(ValueError, "swizzle must be"):
            tile.tensor_map(x, (8, 16), swizzle="16B", device=dev)
        with self.assertRaisesRegex(ValueError, "innermost dimension must be contiguous"):
            tile.tensor_map(x[:, ::2], (8, 16), device=dev)
        with self.assertRaisesRegex(ValueError, "the array is empty"):
            tile.tensor_map(np.zeros((0, 16), np.float32), (4, 4), device=dev)
        with self.assertRaisesRegex(ValueError, r"elem_strides\[0\] is 9, not 1 to 8"):
            tile.tensor_map(x, (8, 16), elem_strides=(9, 1), device=dev)
        with self.assertRaises(tile.Error):  # 12 bytes of a box row: not a multiple of 16
            tile.tensor_map(x, (8, 3), device=dev)

    def test_tensor_map_im2col(self):
        # a 3x3 convolution, padding 1, stride 2 over N=2, H=5, W=7, C=8: rows of the im2col matrix of each tap
        dev = "emu:sm_90a"
        x = rng.standard_normal((2, 5, 7, 8)).astype(np.float32)
        k = tile.load_ptx(TMA_IM2COL, device=dev).k
        tm = tile.tensor_map_im2col(x, (-1, -1), (1 - 2, 1 - 2), 8, 32, elem_strides=(1, 2, 2, 1), device=dev)
        self.assertIsInstance(tm, tile.TensorMap)
        oh, ow = (5 - 1 + 2 - 2) // 2 + 1, (7 - 1 + 2 - 2) // 2 + 1
        xp = np.zeros((2, 5 + 2, 7 + 2, 8), np.float32)
        xp[:, 1:6, 1:8, :] = x
        for r, s in [(0, 0), (1, 2), (2, 1)]:
            want = np.zeros((32, 8), np.float32)  # rows past the last image: zero
            rows = xp[:, r:r + 2 * oh:2, s:s + 2 * ow:2, :].reshape(-1, 8)
            want[:rows.shape[0]] = rows
            out = np.full(256, np.nan, np.float32)
            k[1](tm, out, 0, -1, -1, 0, s, r)
            np.testing.assert_array_equal(out.reshape(32, 8), want, err_msg=f"tap ({r}, {s})")
        with self.assertRaisesRegex(ValueError, "lower has 1 entries, the array 2 spatial dimensions"):
            tile.tensor_map_im2col(x, (-1,), (-1, -1), 8, 32, device=dev)
        with self.assertRaisesRegex(ValueError, "the array has 2 dimensions, a tensor map 3 to 5"):
            tile.tensor_map_im2col(x[0, 0], (), (), 8, 32, device=dev)
        with self.assertRaisesRegex(tile.Error, r"channels_per_pixel \* element size = 24 bytes"):
            tile.tensor_map_im2col(x, (-1, -1), (-1, -1), 6, 32, device=dev)
        # made for another device: encoded again for the launch's
        tm2 = tile.tensor_map_im2col(x, (-1, -1), (1 - 2, 1 - 2), 8, 32, elem_strides=(1, 2, 2, 1), device="emu")
        out = np.full(256, np.nan, np.float32)
        k[1](tm2, out, 0, -1, -1, 0, 0, 0)
        want = np.zeros((32, 8), np.float32)
        rows = xp[:, 0:2 * oh:2, 0:2 * ow:2, :].reshape(-1, 8)
        want[:rows.shape[0]] = rows
        np.testing.assert_array_equal(out.reshape(32, 8), want)

    def test_tensor_map_follows_the_launching_device(self):
        # a map made on another context (the default device, or plain "emu") holds an address of that
        # context's memory: launched on emu:sm_90a it is encoded again there (it was a memcheck failure)
        k = tile.load_ptx(TMA_BOX, device="emu:sm_90a").k
        x = rng.standard_normal((13, 40)).astype(np.float32)
        for tm in (tile.tensor_map(x, (8, 16)), tile.tensor_map(x, (8, 16), device="emu")):
            self.assertIsInstance(tm, tile.TensorMap)
            self.assertEqual(len(tm), 128)
            for c0, c1 in [(0, 0), (30, 10)]:
                out = np.full(128, np.nan, np.float32)
                k[1](tm, out, c0, c1)
                want = np.zeros((8, 16), np.float32)
                part = x[c1:c1 + 8, c0:c0 + 16]
                want[:part.shape[0], :part.shape[1]] = part
                np.testing.assert_array_equal(out.reshape(8, 16), want, err_msg=f"box at ({c0}, {c1})")
        self.assertEqual(bytes(tm), tile.tensor_map(x, (8, 16), device="emu"))  # the bytes for its own device

    def test_ctrl_c_stops_an_emulated_launch(self):
        import signal
        import threading
        import time
        if not tile.device(self.dev).is_emulator:
            self.skipTest("a GPU kernel runs to its end")
        spin = SPIN
        k = tile.load_ptx(spin, device=self.dev).spin
        flag = np.zeros(1, np.uint32)
        timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
        t0 = time.monotonic()
        timer.start()
        with self.assertRaises(KeyboardInterrupt):
            k[1](flag)
        timer.join()
        self.assertLess(time.monotonic() - t0, 10)
        flag[0] = 1  # the device still runs kernels: this one ends at once
        k[1](flag)

    def test_ctrl_c_handler_is_python_s_own_around_launches(self):
        # A launch from the main thread runs in that thread with a SIGINT handler of its own for the call
        # (no thread per launch): the signal still reaches the program's own Python handler, whatever it
        # raises, and once the launch returns Python's handling is back as it was.
        import signal
        import threading
        import time
        if not tile.device(self.dev).is_emulator:
            self.skipTest("a GPU kernel runs to its end")
        spin = SPIN
        k = tile.load_ptx(spin, device=self.dev).spin

        class Stop(Exception):
            pass

        def handler(signum, frame):
            raise Stop(signum)

        flag = np.zeros(1, np.uint32)
        previous = signal.signal(signal.SIGINT, handler)
        try:
            for delay in (0.0, 0.2):  # before the kernel starts running, and while it spins
                timer = threading.Timer(delay, lambda: os.kill(os.getpid(), signal.SIGINT))
                with self.assertRaises(Stop):
                    timer.start()
                    k[1](flag)
                timer.join()
            flag[0] = 1
            for _ in range(3):
                k[1](flag)  # launches that end: nothing pending is raised afterwards
            # the launch's own handler is gone: a signal now goes straight to Python's handler
            with self.assertRaises(Stop):
                os.kill(os.getpid(), signal.SIGINT)
                for _ in range(1000):
                    time.sleep(0.001)
        finally:
            signal.signal(signal.SIGINT, previous)


if __name__ == "__main__":
    unittest.main()
