"""Tests of the tile package on the emulator with NumPy arrays.

Every kernel result is checked against a float64 NumPy reference computed on
fresh random inputs, with the output poisoned first (NaN) and sizes that are
not multiples of the block.  scripts/test_python.sh runs these from a fresh
venv with the package installed by pip."""
import gc
import os
import re
import tempfile
import unittest

import numpy as np

import tile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
KERNELS = os.path.join(ROOT, "kernels")

rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))

DOT_F16 = """
// C = A x B: f16 operands, f32 accumulator and output; one BM x BN tile per program.
@num_warps(4)
kernel dot_f16(a: *f16, b: *f16, c: *f32, m: i32, n: i32, k: i32,
               const BM: i32 = 32, const BN: i32 = 32, const BK: i32 = 32) {
    let rm = program_id(0) * BM + arange(0, BM);
    let rn = program_id(1) * BN + arange(0, BN);
    let rk = arange(0, BK);
    let acc = zeros([BM, BN], f32);
    for k0 in range(0, k, BK) {
        let ka = k0 + rk;
        let ta = load(a + rm[:, None] * k + ka[None, :], (rm[:, None] < m) && (ka[None, :] < k), 0.0);
        let tb = load(b + ka[:, None] * n + rn[None, :], (ka[:, None] < k) && (rn[None, :] < n), 0.0);
        acc = dot(ta, tb, acc);
    }
    store(c + rm[:, None] * n + rn[None, :], acc, (rm[:, None] < m) && (rn[None, :] < n));
}
"""


def poisoned(shape, dtype):
    return np.full(shape, np.nan, dtype=dtype)


def close(test, got, want, rtol, atol):
    got = np.asarray(got, dtype=np.float64)
    test.assertFalse(np.isnan(got).any(), "NaN left in the output (some element was never written)")
    err = np.abs(got - want)
    bound = atol + rtol * np.abs(want)
    worst = np.unravel_index(np.argmax(err - bound), err.shape)
    test.assertTrue((err <= bound).all(), "max error %g at %s: got %g, want %g" % (err[worst], worst, got[worst], want[worst]))


class OnlyDLPack:
    """An array seen only through DLPack (no NumPy protocols), as a non-NumPy CPU tensor is."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, stream=None):
        return self.a.__dlpack__()

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


class Launch(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dev = tile.device("emu")
        cls.add = tile.compile(os.path.join(KERNELS, "add.tile"), BLOCK=256, device=cls.dev).add

    def test_device(self):
        self.assertIs(tile.device("emu"), self.dev)
        self.assertEqual(self.dev.name, "emu")
        self.assertTrue(self.dev.is_emulator)
        self.assertTrue(self.dev.arch.startswith("sm_"))

    def test_vector_add(self):
        for n in (1, 1001, 4099):
            x = rng.standard_normal(n).astype(np.float32)
            y = rng.standard_normal(n).astype(np.float32)
            out = poisoned(n, np.float32)
            self.add[lambda meta: (tile.cdiv(n, meta["BLOCK"]),)](x, y, out, n)
            close(self, out, x.astype(np.float64) + y.astype(np.float64), 1e-6, 1e-6)

    def test_none_defaults_and_is_none(self):
        # Triton's optional arguments: a fn parameter defaults to None, `is None` / `is not None` decide at compile time
        src = """
        fn layer(x, w, b = None, const RELU = false) {
            let y = x * w;
            if b is not None { y = y + b; }
            if RELU { y = maximum(y, 0.0); }
            return y;
        }
        kernel k(x: *f32, w: *f32, b: *f32, out: *f32, n: i32, const HAS_B: i1 = true, const B: i32 = 128) {
            let o = program_id(0) * B + arange(0, B);
            let m = o < n;
            let xv = load(x + o, m, 0.0);
            let wv = load(w + o, m, 0.0);
            if HAS_B { store(out + o, layer(xv, wv, load(b + o, m, 0.0), RELU=true), m); }
            else { store(out + o, layer(xv, wv), m); }
        }
        """
        n = 301
        x, w, b = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
        for has_b in (True, False):
            out = poisoned(n, np.float32)
            tile.compile(src, device=self.dev, HAS_B=has_b).k[(tile.cdiv(n, 128),)](x, w, b, out, n)
            xd, wd, bd = (a.astype(np.float64) for a in (x, w, b))
            close(self, out, np.maximum(xd * wd + bd, 0) if has_b else xd * wd, 1e-6, 1e-6)

    def test_kernel_generic_over_dtype(self):
        # one source, its element types set per compile: a string or a NumPy dtype names the type
        src = """
        kernel twice(x: *T, out: *OT, n: i32, const T = f32, const OT = T, const B: i32 = 128) {
            let o = program_id(0) * B + arange(0, B);
            store(out + o, cast(cast(load(x + o, o < n, 0), f32) * 2.0, OT), o < n);
        }
        """
        n = 301
        for t, ot in ((np.float16, np.float32), ("f32", "f16"), (np.float64, np.float64), (np.int8, np.float32)):
            k = tile.compile(src, device=self.dev, T=t, OT=ot).twice
            tin, tout = np.dtype({"f16": np.float16, "f32": np.float32}.get(t, t)), np.dtype({"f16": np.float16}.get(ot, ot))
            x = (rng.standard_normal(n) * 20).astype(tin)
            out = poisoned(n, tout)
            k[(tile.cdiv(n, 128),)](x, out, n)
            want = (x.astype(np.float64) * 2).astype(tout).astype(np.float64)
            close(self, out, want, 1e-3 if tout == np.float16 else 1e-6, 1e-6)
        with self.assertRaises(TypeError):
            tile.compile(src, device=self.dev, T=np.complex64)
        # a string constexpr picks code at compile time (Triton's ACTIVATION="leaky_relu")
        act = """
        kernel k(x: *f32, out: *f32, n: i32, const ACT = "none", const B: i32 = 128) {
            let o = program_id(0) * B + arange(0, B);
            let v = load(x + o, o < n, 0.0);
            if ACT == "relu" { v = maximum(v, 0.0); }
            store(out + o, v, o < n);
        }
        """
        x = rng.standard_normal(n).astype(np.float32)
        # a string that is no name is quoted for the define, as Triton passes ACTIVATION="leaky relu" or a
        # cache_modifier=".cg" (both were errors at their first character)
        for a, want in (("relu", np.maximum(x, 0)), ("none", x), ('"relu"', np.maximum(x, 0)), ("leaky relu", x), (".cg", x),
                        ('say "hi"', x)):
            out = poisoned(n, np.float32)
            k = tile.compile(act, device=self.dev, ACT=a).k
            k[(tile.cdiv(n, 128),)](x, out, n)
            close(self, out, want.astype(np.float64), 0, 0)
            self.assertEqual(k.meta["ACT"], a[1:-1] if a[0] == '"' else a)  # quoted or not, meta holds the kernel's string

    def test_installed_data(self):
        # installed by pip, the library reads the kernels and stdlib shipped in the package, not a source tree
        pkg = os.path.dirname(os.path.abspath(tile.__file__))
        if os.environ.get("TILE_DATA_DIR") or not os.path.isfile(os.path.join(pkg, "lib", "libtile.so")):
            self.skipTest("not an installed package, or TILE_DATA_DIR set")
        self.assertEqual(os.path.realpath(tile.data_dir()), os.path.realpath(os.path.join(pkg, "share", "tile")))
        self.assertTrue(os.path.isfile(os.path.join(tile.data_dir(), "stdlib", "math.tile")))

    def test_readme_example(self):
        """README.md's Python example, run as it is written (from the repository root, as its paths are)."""
        with open(os.path.join(ROOT, "README.md")) as f:
            text = f.read()
        code = text.split("```python\n", 1)[1].split("```", 1)[0]
        cwd, env = os.getcwd(), {}
        os.chdir(ROOT)
        try:
            exec(compile(code, "README.md", "exec"), env)
        finally:
            os.chdir(cwd)
        x, y, out, a, b, c = (env[name] for name in ("x", "y", "out", "a", "b", "c"))
        np.testing.assert_array_equal(out, x + y)
        want = a.astype(np.float64) @ b.astype(np.float64)
        self.assertEqual((c.shape, c.dtype), (want.shape, a.dtype))
        close(self, c, want, 2e-3, 2e-3 * np.sqrt(a.shape[1]))

    def test_python_md_examples(self):
        """docs/python.md's whole programs (the ```python blocks that begin with `import`; the others are
        fragments), run as written from the repository root."""
        with open(os.path.join(ROOT, "docs", "python.md")) as f:
            blocks = [b.split("```", 1)[0] for b in f.read().split("```python\n")[1:]]
        whole = [b for b in blocks if b.startswith("import ")]
        self.assertGreaterEqual(len(whole), 2)
        cwd = os.getcwd()
        os.chdir(ROOT)
        try:
            envs = []
            for i, code in enumerate(whole):
                env = {}
                exec(compile(code, "docs/python.md block %d" % i, "exec"), env)
                envs.append(env)
        finally:
            os.chdir(cwd)
        e = envs[0]  # the add, a GEMM and attention
        np.testing.assert_array_equal(e["out"], e["x"] + e["y"])
        a, b, c = e["a16"], e["b16"], e["c"]
        close(self, c, a.astype(np.float64) @ b.astype(np.float64), 2e-3, 2e-3 * np.sqrt(a.shape[1]))
        q, k, v = (e[name].astype(np.float64) for name in "qkv")
        s = np.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(q.shape[3])
        s[:, :, np.triu_indices(s.shape[2], 1)[0], np.triu_indices(s.shape[2], 1)[1]] = -np.inf
        p = np.exp(s - s.max(axis=3, keepdims=True))
        want = np.einsum("bhqk,bkhd->bqhd", p / p.sum(axis=3, keepdims=True), v)
        self.assertEqual((e["o"].shape, e["o"].dtype), (e["q"].shape, e["q"].dtype))
        close(self, e["o"], want, 1e-2, 1e-2)
        e = envs[1]  # autotuning: the chosen config is one of the two and the result is right
        self.assertIn(e["k"].best_config, ({"BLOCK": 128, "num_warps": 4}, {"BLOCK": 512, "num_warps": 8}))
        np.testing.assert_array_equal(e["y"], e["x"] * np.float32(2.0))

    def test_grid_forms(self):
        n = 700
        x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
        for grid in (3, (3,), [3, 1, 1], lambda meta: (tile.cdiv(n, meta["BLOCK"]),)):
            out = poisoned(n, np.float32)
            self.add[grid](x, y, out, n)
            close(self, out, x.astype(np.float64) + y, 1e-6, 1e-6)
        out = poisoned(n, np.float32)
        self.add[1](x, y, out, n)  # one program of 256: the rest stays NaN
        self.assertTrue(np.isnan(out[256:]).all() and not np.isnan(out[:256]).any())

    def test_meta(self):
        meta = self.add.meta
        self.assertEqual(meta["BLOCK"], 256)
        self.assertEqual(meta["num_warps"], 4)

    def test_meta_and_kernels_ignore_comments_and_strings(self):
        # the defaults a grid's meta holds and the kernels autotune=True finds are the code's: not an older
        # version kept in a block comment, nor a string that reads like a kernel's header
        src = ('/* the first version, kept for reference:\n'
               'kernel scale(x: *f32, y: *f32, n: i32, const BLOCK: i32 = 1024, const ACT = "relu") { }\n'
               'kernel gone(x: *f32) { }\n*/\n'
               '@config(S=2.0)\n@config(S=3.0)\n'
               'kernel scale(x: *f32, y: *f32, n: i32, const BLOCK: i32 = 128, const ACT = "none, // (x", const S: f32 = 1.0) {\n'
               '    static_assert(BLOCK > 0, "the kernel launch(es) take one BLOCK each");\n'
               '    let offs = program_id(0) * BLOCK + arange(0, BLOCK);\n'
               '    store(y + offs, load(x + offs, offs < n, 0.0) * S, offs < n);\n'
               '}\n')
        n = 1000
        x = rng.random(n, dtype=np.float32)
        for auto in (False, True):
            mod = tile.compile(src, autotune=auto, device=self.dev)
            self.assertEqual(sorted(mod.kernels), ["scale"])
            seen = {}
            out = poisoned(n, np.float32)
            mod.scale[lambda meta: (seen.update(meta), tile.cdiv(n, meta["BLOCK"]))[1]](x, out, n)
            self.assertEqual((seen["BLOCK"], seen["ACT"]), (128, "none, // (x"))
            s = seen.get("S", 1.0)
            close(self, out, x.astype(np.float64) * s, 1e-6, 0)

    def test_specialization_variants(self):
        mod = tile.compile(os.path.join(KERNELS, "add.tile"), BLOCK=128)
        k = mod.add
        self.assertEqual(k.variants, [])
        base = np.zeros(2048 + 8, np.float32)
        for n, spec in ((1024, "n=16"), (1, "n=1"), (1000, ""), (1008, "n=16")):
            x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
            out = poisoned(n, np.float32)
            k[tile.cdiv(n, 128),](x, y, out, n)
            close(self, out, x.astype(np.float64) + y, 1e-6, 1e-6)
            self.assertIn(spec, k.variants)
        self.assertEqual(sorted(k.variants), sorted(["n=16", "n=1", ""]))
        # 0 and -16 are multiples of 16 but not specialized (a 0 or negative stride cannot go through a tensor map)
        k0 = tile.compile(os.path.join(KERNELS, "add.tile"), BLOCK=64).add
        for n in (0, -16):
            out = poisoned(4, np.float32)
            k0[1,](out, out, out, n)
            self.assertTrue(np.isnan(out).all())
        self.assertEqual(k0.variants, [""])
        # a pointer one element (4 bytes) off 16-byte alignment: the variant without the assumption
        n = 333
        x = base[1:1 + n]
        x[:] = rng.random(n, dtype=np.float32)
        y = rng.random(n, dtype=np.float32)
        out = poisoned(n, np.float32)
        k[tile.cdiv(n, 128),](x, y, out, n)
        close(self, out, x.astype(np.float64) + y, 1e-6, 1e-6)
        self.assertIn("no_align_ptrs", k.variants)

    def test_empty_arch_is_the_devices(self):
        # arch="" is no arch, as in the C API and the CLI: the device's target (it compiled for sm_80 on emu:sm_90a)
        with tempfile.TemporaryDirectory() as d:
            dev = tile.Device("emu:sm_90a", cache_dir=d)
            x = np.zeros(4, np.float32)
            tile.compile("kernel k(x: *f32) { store(x, 3.0); }\n", arch="", device=dev).k[1,](x)
            self.assertEqual(x[0], 3.0)
            arches = set()
            for root, _, files in os.walk(os.path.join(d, "v1")):
                for f in files:
                    with open(os.path.join(root, f), "rb") as fh:
                        data = fh.read(4096)
                    arches |= {a for a in (b"sm_80", b"sm_90a") if a + b"\0" in data}
            self.assertEqual(arches, {b"sm_90a"})

    def test_nul_in_strings_is_refused(self):
        # C strings end at a NUL: the source after it, or a define's tail, was dropped without a word
        with self.assertRaisesRegex(ValueError, "NUL character at offset 21"):
            tile.compile("kernel k(x: *f32) {}\n\0kernel j(x: *f32) { bad }\n")
        with self.assertRaisesRegex(ValueError, "embedded null character"):
            tile.compile("const ACT = 1;\nkernel k(x: *f32) { store(x, ACT as f32); }\n", ACT="1\0")

    def test_none_pointer_argument(self):
        # Triton's None argument: a variant where `b is None` (the bias add dropped), b launched as 0
        src = ("kernel bias_add(x: *f32, b: *f32, out: *f32, n: i32) {\n"
               "    let o = program_id(0) * 128 + arange(0, 128);\n"
               "    let v = load(x + o, o < n, 0.0);\n"
               "    if b is not None {\n"
               "        v = v + load(b + o, o < n, 0.0);\n"
               "    }\n"
               "    store(out + o, v * 3.0, o < n);\n"
               "}\n"
               "kernel copy_to(x: *f32, b: *f32, n: i32) {\n"
               "    let o = arange(0, 128);\n"
               "    store(b + o, load(x + o, o < n, 0.0), o < n);\n"
               "}\n")
        mod = tile.compile(src)
        k = mod.bias_add
        n = 301
        x, b = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
        for bias in (None, b, None):
            out = poisoned(n, np.float32)
            k[tile.cdiv(n, 128),](x, bias, out, n)
            want = x.astype(np.float64) * 3 if bias is None else (x.astype(np.float64) + b.astype(np.float32)) * 3
            close(self, out, want, 1e-6, 1e-6)
        self.assertEqual(sorted(k.variants), sorted(["b=None", ""]))
        out = poisoned(n, np.float32)
        k[tile.cdiv(n, 128),](x, b=None, out=out, n=n)  # by name too
        close(self, out, x.astype(np.float64) * 3, 1e-6, 1e-6)
        # a kernel that uses the pointer: the compile error names the use and the None parameter
        with self.assertRaises(tile.CompileError) as cm:
            mod.copy_to[1,](x, None, n)
        self.assertIn("'b' is None in this compile", str(cm.exception))
        # None for an integer, float or i1 is a TypeError that says only pointers take None and what to write
        with self.assertRaisesRegex(TypeError, r"argument 'n': kernel 'bias_add' takes i32, got None: only pointer parameters "
                                               r"take None"):
            k[1,](x, b, out, None)
        fk = tile.compile("kernel sc(x: *f32, s: f32, t: f16, p: i1) { store(x, s + (t as f32)); }\n").sc
        for args, name, ty in (((x, None, 1.0, True), "s", "f32"), ((x, 1.0, None, True), "t", "f16"),
                               ((x, 1.0, 1.0, None), "p", "i1")):
            with self.assertRaisesRegex(TypeError, r"argument '%s': kernel 'sc' takes %s, got None.*`const %s = None`" % (name, ty, name)):
                fk[1,](*args)
        # a constexpr None (Triton's): the const is None in the kernel
        src = ("kernel scale(x: *f32, n: i32, const F = 2.0) {\n"
               "    let o = arange(0, 128);\n"
               "    let v = load(x + o, o < n, 0.0);\n"
               "    if F is not None { v = v * F; }\n"
               "    store(x + o, v + 1.0, o < n);\n"
               "}\n")
        for f, want in ((None, x.astype(np.float64) + 1), (3.0, x.astype(np.float64) * 3 + 1)):
            y = x.copy()
            tile.compile(src, F=f).scale[1,](y, 100)
            close(self, y[:100], want[:100], 1e-6, 1e-6)

    def test_read_only_pages_are_refused(self):
        # a read-only array works where the kernel reads; read-only pages (a file mapped for reading) cannot be registered
        n = 300
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "x.bin")
            x = rng.random(n, dtype=np.float32)
            x.tofile(path)
            ro = x.copy()
            ro.flags.writeable = False
            out = poisoned(n, np.float32)
            self.add[tile.cdiv(n, 256),](ro, ro, out, n)
            close(self, out, 2 * x.astype(np.float64), 1e-6, 1e-6)
            mm = np.memmap(path, dtype=np.float32, mode="r")
            with self.assertRaisesRegex(ValueError, "argument 'x': .*not all writable memory"):
                self.add[tile.cdiv(n, 256),](mm, ro, out, n)
            del mm

    def test_writes_numpy_memory_in_place(self):
        n = 515
        buf = poisoned(3 * n, np.float32)
        x, y, out = buf[:n], buf[n:2 * n], buf[2 * n:]  # three views of one array: one registration
        x[:] = rng.standard_normal(n)
        y[:] = rng.standard_normal(n)
        self.add[tile.cdiv(n, 256),](x, y, out, n)
        close(self, buf[2 * n:], x.astype(np.float64) + y, 1e-6, 1e-6)
        # strided views and the same array as input and output
        z = poisoned(2 * n, np.float32)
        z[::2] = rng.standard_normal(n)
        want = z[::2].astype(np.float64) * 2
        v = np.ascontiguousarray(z[::2])
        self.add[tile.cdiv(n, 256),](v, v, v, n)
        close(self, v, want, 1e-6, 1e-6)

    def test_registration_cache(self):
        gc.collect()  # arrays earlier tests left to the collector (an exception's traceback holds its arguments)
        before = self.dev.stats()["registered_arrays"]
        n = 300
        arrs = [rng.random(n, dtype=np.float32) for _ in range(3)]
        for _ in range(3):
            self.add[2,](*arrs, n)
        self.assertEqual(self.dev.stats()["registered_arrays"], before + 3)
        del arrs
        gc.collect()
        self.assertEqual(self.dev.stats()["registered_arrays"], before)

    def test_memory_no_array_owns(self):
        n = 100
        raw = bytearray(n * 4 * 3)
        x = np.frombuffer(raw, np.float32, n, 0)
        y = np.frombuffer(raw, np.float32, n, n * 4)
        out = np.frombuffer(raw, np.float32, n, 2 * n * 4)
        x[:] = rng.random(n)
        y[:] = rng.random(n)
        out[:] = np.nan
        self.add[1,](x, y, out, n)
        close(self, out, x.astype(np.float64) + y, 1e-6, 1e-6)
        # overlapping views of one such array in one call: the call's registration covers the array over the
        # buffer (each view's own range, registered alone, overlapped the other's and was refused)
        f = np.frombuffer(bytearray(400), np.float32)
        f[:] = np.arange(100)
        res = poisoned(40, np.float32)
        self.add[1,](f[0:50], f[30:100], res, 40)
        self.assertTrue(np.array_equal(res, np.arange(40) + np.arange(30, 70)), res)
        a = np.arange(100, dtype=np.float32)
        b = np.frombuffer(memoryview(a)[:200], np.float32)  # no array owns b's memory, though a does
        res = poisoned(40, np.float32)
        self.add[1,](b, a, res, 40)
        self.assertTrue(np.array_equal(res, 2 * np.arange(40)), res)

    def test_dlpack(self):
        n = 257
        x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
        out = poisoned(n, np.float32)
        self.add[2,](OnlyDLPack(x), OnlyDLPack(y), OnlyDLPack(out), n)
        close(self, out, x.astype(np.float64) + y, 1e-6, 1e-6)
        # messages name the argument and the type in words
        with self.assertRaisesRegex(TypeError, r"argument 'x'.*'int32'"):
            self.add[2,](OnlyDLPack(np.zeros(n, np.int32)), OnlyDLPack(y), OnlyDLPack(out), n)
        bad = OnlyDLPack(x)
        bad.__dlpack__ = lambda stream=None: 42
        with self.assertRaisesRegex(TypeError, r"argument 'x': kernel 'add' takes \*f32: its __dlpack__\(\) returned no 'dltensor' capsule"):
            self.add[2,](bad, OnlyDLPack(y), OnlyDLPack(out), n)

    def test_dlpack_overlapping_views(self):
        # torch's t[:-1] and t[1:] in one call: DLPack gives each view's own bytes, which overlap; the storage
        # the views share (torch's untyped_storage(): data_ptr(), nbytes()) is registered for the call instead
        class Storage:
            def __init__(self, base):
                self.base = base

            def data_ptr(self):
                return self.base.__array_interface__["data"][0]

            def nbytes(self):
                return self.base.nbytes

        class TorchLike(OnlyDLPack):  # a CPU tensor as torch shows it: DLPack and its storage, no NumPy protocols
            def __init__(self, view, base):
                super().__init__(view)
                self.base = base

            def untyped_storage(self):
                return Storage(self.base)

        n = 301
        t = rng.random(n + 1, dtype=np.float32)
        out = poisoned(n + 8, np.float32)
        self.add[2,](TorchLike(t[:-1], t), TorchLike(t[1:], t), TorchLike(out[3:n + 3], out), n)
        close(self, out[3:n + 3], t[:-1].astype(np.float64) + t[1:], 1e-6, 1e-6)
        self.assertTrue(np.isnan(out[:3]).all() and np.isnan(out[n + 3:]).all(), out)
        # without a storage to widen to, the two views overlap and are refused with a message
        with self.assertRaisesRegex(ValueError, r"argument 'y': kernel 'add' takes \*f32: cannot use this host memory: .*overlaps"):
            self.add[2,](OnlyDLPack(t[:-1]), OnlyDLPack(t[1:]), OnlyDLPack(out), n)
        # a storage that does not hold the view is not used
        with self.assertRaisesRegex(ValueError, r"argument 'y': kernel 'add' takes \*f32: cannot use this host memory: .*overlaps"):
            self.add[2,](TorchLike(t[:-1], out), TorchLike(t[1:], out), OnlyDLPack(out), n)

    def test_threads(self):
        # launches from several threads (the GIL is released while a kernel runs), new variants among them
        import threading
        mod = tile.compile(os.path.join(KERNELS, "add.tile"), BLOCK=64)
        errors = []

        def work(seed):
            r = np.random.default_rng(seed)
            try:
                for n in (1, 16 * (seed + 1), 100 + seed, 333):
                    x, y = r.random(n, dtype=np.float32), r.random(n, dtype=np.float32)
                    out = poisoned(n, np.float32)
                    mod.add[tile.cdiv(n, 64),](x, y, out, n)
                    if not np.allclose(out, x.astype(np.float64) + y, rtol=1e-6, atol=1e-6):
                        errors.append("thread %d, n=%d: wrong sums" % (seed, n))
            except Exception as e:  # reported below
                errors.append("thread %d: %r" % (seed, e))

        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])

    def test_threads_first_launch_one_variant(self):
        # threads that all miss the same variant compile it once each without the GIL; one copy is kept
        import threading
        mod = tile.compile(os.path.join(KERNELS, "add.tile"), BLOCK=32)
        x = np.ones(64, np.float32)
        barrier = threading.Barrier(6)

        def work():
            barrier.wait()
            out = np.zeros(64, np.float32)
            mod.add[2,](x, x, out, 64)
            self.assertTrue((out == 2).all())

        threads = [threading.Thread(target=work) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(len(mod.add.variants), len(set(mod.add.variants)), mod.add.variants)

    def test_host_memory_waits_without_the_gil(self):
        # registering a new host array (and dropping a used one) waits for the emulator, busy with another
        # thread's launch, without holding the GIL: this thread wakes from a short sleep long before that
        # launch ends (holding it, the wait kept every thread out until then)
        import threading
        import time
        spin = tile.compile("kernel spin(out: *f32, it: i32) { let a = 0.0; for i in range(0, it) { a = a + 1.0; }"
                            " store(out + program_id(0), a); }").spin
        mod = tile.compile(os.path.join(KERNELS, "add.tile"), BLOCK=32)
        used, out, sink = np.ones(32, np.float32), np.zeros(32, np.float32), np.zeros(4, np.float32)
        spin[4,](sink, 1)
        mod.add[1,](used, used, out, 32)
        for kind in ("new", "drop"):
            holder = [np.ones(32, np.float32)]
            mod.add[1,](holder[0], used, out, 32)
            state = {}

            def a():
                state["a_start"] = time.monotonic()
                spin[4,](sink, 3000000)
                state["a_end"] = time.monotonic()

            def b():
                state["b_start"] = time.monotonic()
                if kind == "new":
                    mod.add[1,](np.ones(32, np.float32), used, out, 32)
                else:
                    holder.pop()  # the last reference to a used array: its registration ends

            ta = threading.Thread(target=a)
            ta.start()
            time.sleep(0.2)  # a's launch is running
            tb = threading.Thread(target=b)
            tb.start()
            while "b_start" not in state:
                time.sleep(0.001)
            time.sleep(0.05)
            woke = time.monotonic() - state["b_start"]
            ta.join()
            tb.join()
            left = state["a_end"] - state["b_start"]  # a's launch still to run when b began to wait
            if left < 0.3:
                self.skipTest("a's launch ended %.2f s after b began: too soon to tell" % left)
            self.assertLess(woke, left / 2, "%s: this thread woke %.2f s after b began waiting, a's launch ran %.2f s more"
                            % (kind, woke, left))

    def test_softmax(self):
        mod = tile.compile(os.path.join(KERNELS, "softmax.tile"), BLOCK=512)
        rows, cols, stride = 37, 301, 320
        inp = rng.standard_normal((rows, stride)).astype(np.float32) * 4
        out = poisoned((rows, cols), np.float32)
        mod.softmax[rows,](out, inp, stride, cols, cols)
        x = inp[:, :cols].astype(np.float64)
        e = np.exp(x - x.max(axis=1, keepdims=True))
        close(self, out, e / e.sum(axis=1, keepdims=True), 1e-5, 1e-7)

    def test_dot_f16(self):
        mod = tile.compile(DOT_F16)
        m, n, k = 77, 53, 45
        a = rng.standard_normal((m, k)).astype(np.float16)
        b = rng.standard_normal((k, n)).astype(np.float16)
        c = poisoned((m, n), np.float32)
        mod.dot_f16[lambda meta: (tile.cdiv(m, meta["BM"]), tile.cdiv(n, meta["BN"]))](a, b, c, m, n, k)
        want = a.astype(np.float64) @ b.astype(np.float64)
        close(self, c, want, 1e-4, 1e-4 * np.sqrt(k))

    def test_dot_f16_warp_specialized(self):
        # on an emulated Hopper: tensor-map loads issued by a producer warpgroup (4 warps after the 4)
        dev = tile.device("emu:sm_90a")
        mod = tile.compile(DOT_F16, device=dev, BM=64, BN=64, warp_specialize=1)
        m, n, k = 77, 80, 112  # k and n multiples of 16: rows 16-byte aligned, so tensor maps can read them
        a = rng.standard_normal((m, k)).astype(np.float16)
        b = rng.standard_normal((k, n)).astype(np.float16)
        c = poisoned((m, n), np.float32)
        mod.dot_f16[tile.cdiv(m, 64), tile.cdiv(n, 64)](a, b, c, m, n, k)
        close(self, c, a.astype(np.float64) @ b.astype(np.float64), 1e-4, 1e-4 * np.sqrt(k))

    def test_matmul_f32(self):
        mod = tile.compile(os.path.join(KERNELS, "matmul.tile"), BLOCK_M=32, BLOCK_N=32, BLOCK_K=16, num_stages=2)
        m, n, k = 45, 67, 39
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        c = poisoned((m, n), np.float32)
        mod["matmul"][tile.cdiv(m, 32), tile.cdiv(n, 32)](a, b, c, m, n, k, k, n, n)
        close(self, c, a.astype(np.float64) @ b.astype(np.float64), 1e-5, 1e-5 * k)


    def test_tables_of_pointers(self):
        """kernels/examples/grouped_gemm.tile: **f16 parameters, tables built with tile.data_ptr (Triton's
        torch.tensor([t.data_ptr() ...]) pattern), three problems of odd sizes, float64-checked."""
        mod = tile.compile(os.path.join(KERNELS, "examples", "grouped_gemm.tile"), device=self.dev)
        k = mod.grouped_matmul
        self.assertEqual([t for _, t in k.params][:3], ["**f16", "**f16", "**f16"])
        shapes = [(70, 45, 33), (17, 130, 64), (100, 9, 71)]
        a = [rng.standard_normal((m, kk)).astype(np.float16) for m, n, kk in shapes]
        b = [rng.standard_normal((kk, n)).astype(np.float16) for m, n, kk in shapes]
        c = [np.full((m, n), np.nan, np.float16) for m, n, kk in shapes]
        ta = np.array([tile.data_ptr(x, self.dev) for x in a], np.uint64)
        tb = np.array([self.dev.data_ptr(x) for x in b], np.int64)
        tc = np.array([tile.data_ptr(x, self.dev) for x in c], np.uint64)
        self.assertEqual(tile.data_ptr(a[0][1:], self.dev), int(ta[0]) + a[0].strides[0])
        sizes = np.array(shapes, np.int32).reshape(-1)
        lds = np.array([(kk, n, n) for m, n, kk in shapes], np.int32).reshape(-1)
        k[5,](ta, tb, tc, sizes, lds, len(shapes))
        for x, y, z in zip(a, b, c):
            close(self, z.astype(np.float64), x.astype(np.float64) @ y.astype(np.float64), 2e-3, 2e-3 * x.shape[1])
        with self.assertRaisesRegex(TypeError, r"argument 'a': kernel 'grouped_matmul' takes \*\*f16 \(an array of 8-byte"):
            k[5,](a[0], tb, tc, sizes, lds, len(shapes))
        with self.assertRaisesRegex(ValueError, "owned by no NumPy array"):
            tile.data_ptr(np.frombuffer(bytearray(64), np.float32), self.dev)


    def test_bool_pointers(self):
        """a *i1 parameter takes bool, uint8 and int8 arrays (one byte an element)"""
        mod = tile.compile("""
kernel k(x: *f32, m: *i1, c: *i32) {
    let r = arange(0, 64);
    let v = load(x + r, r < 50, 0.0);
    store(m + r, v > 0.0, r < 50);
    store(c, sum(load(m + r, r < 50, false), axis=0));
}
""", device=self.dev)
        self.assertEqual(mod.k.params[1], ("m", "*i1"))
        x = rng.standard_normal(50).astype(np.float32)
        for dt in (np.bool_, np.uint8, np.int8):
            m = np.full(50, 7, dt) if dt != np.bool_ else np.zeros(50, dt)
            c = np.full(1, -1, np.int32)
            mod.k[1,](x, m, c)
            np.testing.assert_array_equal(m.astype(bool), x > 0)
            self.assertEqual(int(c[0]), int((x > 0).sum()))
        with self.assertRaisesRegex(TypeError, r"takes \*i1 \(bool, uint8 or int8 elements\)"):
            mod.k[1,](x, np.zeros(50, np.int32), c)


SCALARS = """
// out[i] = x[i] * s + t (f32 scalars), for i < n (an i64)
@num_warps(1)
kernel axpb(x: *f32, out: *f32, s: f32, t: f32, n: i64, const BLOCK: i32 = 128) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    let m = offs < n;
    store(out + offs, load(x + offs, m, 0.0) * s + t, m);
}
"""


def to_bf16_bits(a):
    """float32 -> bf16 bits (uint16), rounded to nearest even."""
    u = np.ascontiguousarray(a, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def from_bf16_bits(b):
    return (b.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


class Scalars(unittest.TestCase):
    def test_numpy_scalars_and_strict_values(self):
        """NumPy scalars as constexprs (np.float64(0.25) made the define "np.float64(0.25)"), float('inf') as one,
        np.uint64 past 2**63 for a u64, an i1 from a bool only (the string "False" was true), untyped const
        defaults in meta, grids past 2**31 a ValueError (2**70 was an OverflowError), and the types only tile makes
        refusing to be called (tile.Kernel() then crashed the interpreter)."""
        src = ("kernel k(y: *f32, u: *u64, flag: i1, v: u64, const A: f32 = 1.0, const B = 4, const ACT = \"none\") {\n"
               "    store(y + arange(0, 4), zeros([4], f32) + A * B + where(flag, 1.0, 0.0));\n"
               "    store(u, v);\n}\n")
        for a, want in ((np.float64(0.25), 1.0), (np.float32(-2.5), -10.0), (float("inf"), np.inf), (float("-inf"), -np.inf)):
            k = tile.compile(src, A=a).k
            self.assertEqual(k.meta["B"], 4)
            self.assertEqual(k.meta["ACT"], "none")
            y, u = poisoned(4, np.float32), np.zeros(1, np.uint64)
            k[1](y, u, np.bool_(True), np.uint64(2**63 + 5))
            self.assertEqual(float(y[0]), want + 1.0)
            self.assertEqual(int(u[0]), 2**63 + 5)
        k = tile.compile(src, B=np.int64(2)).k
        y = poisoned(4, np.float32)
        k[1](y, u, False, 0)
        self.assertEqual(float(y[0]), 2.0)
        with self.assertRaisesRegex(TypeError, r"argument 'flag': kernel 'k' takes i1, got <class 'str'>, not a bool"):
            k[1](y, u, "False", 0)
        for g in (2**31, 2**70, (2**70,), (1, 2**64)):
            with self.assertRaisesRegex(ValueError, r"^grid of kernel 'k': a dimension is negative or too large"):
                k[g](y, u, True, 0)
        with self.assertRaisesRegex(TypeError, r"^grid of kernel 'k': dimensions must be integers"):
            k[(1, "2")](y, u, True, 0)
        # a bool constexpr is Triton's bool, an i1 (it was the define 1, an i32), so `not C` and `C and D` read as there
        k = tile.compile("kernel b(y: *f32, const C = 0) {\n    store(y, where(dtype_of(C) == i1, 1.0, 0.0) + "
                         "where(!C, 2.0, 0.0));\n}\n", C=False).b
        y = poisoned(1, np.float32)
        k[1](y)
        self.assertEqual(float(y[0]), 3.0)
        # '' is the empty string (gemlite's meta_evict_policy=''), the default hint (it was an empty define, an error)
        k = tile.compile("kernel e(y: *f32, const P = \"evict_last\") {\n    static_assert(len(P) == 0);\n"
                         "    store(y, load(y, eviction_policy=P) + 1.0);\n}\n", P="").e
        k[1](y)
        self.assertEqual(float(y[0]), 4.0)
        for t in (tile.Kernel, type(k[1])):
            with self.assertRaisesRegex(TypeError, r"objects are made by tile"):
                t()

    def test_float_and_i64_scalars(self):
        k = tile.compile(SCALARS).axpb
        self.assertEqual(k.params, [("x", "*f32"), ("out", "*f32"), ("s", "f32"), ("t", "f32"), ("n", "i64")])
        n = 301
        x = rng.standard_normal(n).astype(np.float32)
        out = poisoned(n, np.float32)
        k[lambda meta: (tile.cdiv(n, meta["BLOCK"]),)](x, out, 1.5, -2, n)  # an int for an f32 is fine
        close(self, out, x.astype(np.float64) * 1.5 - 2, 1e-6, 1e-6)
        with self.assertRaisesRegex(TypeError, r"argument 's'"):
            k[1](x, out, "1.5", 0.0, n)
        with self.assertRaisesRegex(ValueError, r"argument 'n'.*i64"):
            k[1](x, out, 1.0, 0.0, 2**63)
        with self.assertRaisesRegex(ValueError, r"argument 's': kernel 'axpb' takes f32, got an int too large for any float"):
            k[1](x, out, 10**400, 0.0, n)  # an int no float holds: its range, not "expected a number"

    def test_static_print_and_default_device(self):
        import contextlib
        import io
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            tile.compile("kernel k(o: *f32, const B: i32 = 64) { static_print(\"B is\", B); store(o, 1.0); }")
        self.assertIn("note: static_print: B is 64", err.getvalue())
        # the default device is the device of its name: one context, one address space; other names are
        # other devices, and each is named by the string that opened it (emu:sm_90a was named "emu", so
        # tile.device(d.name) was another device, an sm_80 one)
        self.assertIs(tile.device(), tile.device(os.environ.get("TILE_DEVICE") or tile.device().name))
        self.assertIs(tile.device(), tile.device(tile.device().name))
        if tile.device().is_emulator:
            self.assertEqual(tile.device("emu:sm_90a").arch, "sm_90a")
            self.assertEqual(tile.device("emu").arch, "sm_80")
            for name in ("emu:sm_90a", "emu:sm_86:racecheck"):
                d = tile.device(name)
                self.assertEqual(d.name, name)
                self.assertIs(tile.device(d.name), d)
                self.assertIn(repr(name), repr(d))
            self.assertEqual(tile.Device(None).name, "emu")  # no string: the library's name

    def test_numpy_scalars_for_float_parameters(self):
        k = tile.compile(SCALARS).axpb
        n = 37
        x = rng.standard_normal(n).astype(np.float32)
        out = poisoned(n, np.float32)
        k[1](x, out, np.float32(1.5), np.array(-2.0, np.float16), np.int32(n))
        close(self, out, x.astype(np.float64) * 1.5 - 2, 1e-6, 1e-6)
        with self.assertRaisesRegex(TypeError, r"argument 's'"):
            k[1](x, out, b"1.5", 0.0, n)

    def test_half_scalars_round_once(self):
        # 1 + 2^-11 + 2^-40 is just above an f16 tie (and a bf16 one at 1 + 2^-8): rounded once it goes up;
        # through f32 it became the tie and went to even (down)
        k = tile.compile("kernel k(o: *f16, p: *bf16, h: f16, b: bf16) { store(o, h); store(p, b); }").k
        o, p = np.full(1, np.nan, np.float16), np.zeros(1, np.uint16)
        for v, hw, bw in [(1 + 2**-11 + 2**-40, 0x3C01, None), (1 + 2**-8 + 2**-40, None, 0x3F81), (-65519.99, 0xFBFF, None),
                          (65520.0, 0x7C00, None), (2**-25 + 2**-40, 0x0001, None), (1.5, 0x3E00, 0x3FC0)]:
            k[1](o, p, v, v)
            if hw is not None:
                self.assertEqual(int(o.view(np.uint16)[0]), hw, f"f16 of {v!r}")
            if bw is not None:
                self.assertEqual(int(p[0]), bw, f"bf16 of {v!r}")
        # a structured 2-byte element is bytes too, whatever its fields' byte order (it was refused as '>V2')
        for fields in ([("b", "<u2")], [("b", ">u2")], [("lo", "u1"), ("hi", "u1")]):
            q = np.zeros(1, np.uint16).view(fields)
            k[1](o, q, 1.0, 1.5)
            self.assertEqual(int(q.view(np.uint16)[0]), 0x3FC0, f"bf16 through {fields}")


class Shipped(unittest.TestCase):
    def test_gemm_bf16_as_uint16(self):
        m, n, k = 37, 29, 51
        a = to_bf16_bits(rng.standard_normal((m, k)))
        b = to_bf16_bits(rng.standard_normal((k, n)))
        out = poisoned((m, n), np.float32)
        tile.gemm(a, b, out=out, dtype="bf16")
        close(self, out, from_bf16_bits(a) @ from_bf16_bits(b), 1e-5, 1e-4 * np.sqrt(k))
        c = tile.gemm(a, b, dtype="bf16")  # bf16 out, as uint16
        self.assertEqual(c.dtype, np.uint16)
        close(self, from_bf16_bits(c), from_bf16_bits(a) @ from_bf16_bits(b), 1e-2, 1e-2 * np.sqrt(k))
        c32 = tile.gemm(a, b, dtype="bf16", out_dtype="f32")  # a new f32 out
        self.assertEqual(c32.dtype, np.float32)
        close(self, c32, from_bf16_bits(a) @ from_bf16_bits(b), 1e-5, 1e-4 * np.sqrt(k))
        self.assertEqual(tile.gemm(a, b, dtype="bf16", out_dtype="bf16").dtype, np.uint16)
        with self.assertRaisesRegex(ValueError, "out_dtype"):
            tile.gemm(a, b, dtype="bf16", out_dtype="float32")

    def test_attention_bf16_as_uint16(self):
        q = to_bf16_bits(rng.standard_normal((1, 21, 2, 32)))
        k = to_bf16_bits(rng.standard_normal((1, 21, 2, 32)))
        v = to_bf16_bits(rng.standard_normal((1, 21, 2, 32)))
        out = tile.attention(q, k, v, causal=True, dtype="bf16")
        want = attention_ref(from_bf16_bits(q), from_bf16_bits(k), from_bf16_bits(v), True, 1 / np.sqrt(32))
        close(self, from_bf16_bits(out), want, 1.6e-2, 1.6e-2)

    def test_gemm_f16(self):
        for m, n, k in ((67, 45, 83), (1, 33, 17), (129, 7, 64)):
            a = rng.standard_normal((m, k)).astype(np.float16)
            b = rng.standard_normal((k, n)).astype(np.float16)
            want = a.astype(np.float64) @ b.astype(np.float64)
            out = tile.gemm(a, b)
            self.assertEqual((out.shape, out.dtype), ((m, n), np.float16))
            close(self, out, want, 2e-3, 2e-3 * np.sqrt(k))
            out32 = poisoned((m, n), np.float32)
            self.assertIs(tile.gemm(a, b, out=out32), out32)
            close(self, out32, want, 1e-5, 1e-4 * np.sqrt(k))
            # out_dtype without out: a new out of that type (it was a's type, which out_dtype then refused)
            new32 = tile.gemm(a, b, out_dtype="f32")
            self.assertEqual((new32.shape, new32.dtype), ((m, n), np.float32))
            close(self, new32, want, 1e-5, 1e-4 * np.sqrt(k))
        # an empty batch (M = 0) is an empty result, as NumPy's (it was a ValueError about out's strides)
        a = np.zeros((0, 16), np.float16)
        b = rng.standard_normal((16, 24)).astype(np.float16)
        out = tile.gemm(a, b)
        self.assertEqual((out.shape, out.dtype), ((0, 24), np.float16))

    def test_gemm_f8_scales(self):
        def e4m3(codes):  # the E4M3FN value of each byte (no NaN among the codes used)
            c = codes.astype(np.int64)
            s, e, m = np.where(c & 0x80, -1.0, 1.0), (c >> 3) & 15, c & 7
            return s * np.where(e > 0, (1 + m / 8.0) * 2.0 ** (e - 7), m / 8.0 * 2.0 ** -6)

        m, n, k = 45, 70, 96
        a = (rng.integers(0, 0x70, (m, k)) | (rng.integers(0, 2, (m, k)) << 7)).astype(np.uint8)
        b = (rng.integers(0, 0x70, (n, k)) | (rng.integers(0, 2, (n, k)) << 7)).astype(np.uint8).T  # [K, N], K contiguous
        prod, mag = e4m3(a) @ e4m3(b), np.abs(e4m3(a)) @ np.abs(e4m3(b))  # f32 sums: error ~ eps * sum of |terms|

        def check(got, scale):
            err, bound = np.abs(got - prod * scale), 1e-6 * mag * np.abs(scale) + 1e-6
            self.assertTrue((err <= bound).all(), "max error %g (bound %g)" % (err.max(), bound.flat[np.argmax(err - bound)]))

        sa, sb = rng.uniform(0.5, 2, m).astype(np.float32), rng.uniform(0.01, 0.1, n).astype(np.float32)
        out = tile.gemm(a, b, dtype="f8e4m3", a_scale=sa, b_scale=sb)
        self.assertEqual(out.dtype, np.float32)
        check(out, sa[:, None].astype(np.float64) * sb[None, :])
        one_a, one_b = np.array([0.25], np.float32), np.array([3.0], np.float32)
        out = poisoned((m, n), np.float32)
        tile.gemm(a, b, out=out, dtype="f8e4m3", a_scale=one_a, b_scale=one_b)
        check(out, 0.75)
        with self.assertRaisesRegex(ValueError, r"give both or neither"):
            tile.gemm(a, b, dtype="f8e4m3", a_scale=sa)
        with self.assertRaisesRegex(ValueError, r"1 value each, or 45 and 70"):
            tile.gemm(a, b, dtype="f8e4m3", a_scale=sa[:3], b_scale=sb)

    def test_gemm_f8_block_scales(self):
        def e4m3(codes):  # the E4M3FN value of each byte (no NaN among the codes used)
            c = codes.astype(np.int64)
            s, e, m = np.where(c & 0x80, -1.0, 1.0), (c >> 3) & 15, c & 7
            return s * np.where(e > 0, (1 + m / 8.0) * 2.0 ** (e - 7), m / 8.0 * 2.0 ** -6)

        def codes(shape):
            return (rng.integers(0, 0x70, shape) | (rng.integers(0, 2, shape) << 7)).astype(np.uint8)

        m, n, k = 45, 200, 300  # 3 K blocks (the last 44 wide), 2 column blocks
        kb, nb = 3, 2
        a, w, bk = codes((m, k)), codes((n, k)), codes((k, n))
        sa = rng.uniform(0.5, 2, (m, kb)).astype(np.float32)
        sw = rng.uniform(0.01, 0.1, (nb, kb)).astype(np.float32)  # a weight W [N, K]'s scales
        sbk = rng.uniform(0.01, 0.1, (kb, nb)).astype(np.float32)  # a [K, N] b's

        def want(b, sb):  # float64, block by block: sum_kb (A_kb B_kb) * sa[:, kb] * sb[kb, column block]
            va, vb = e4m3(a), e4m3(b)
            out, mag = np.zeros((m, n)), np.zeros((m, n))
            for q in range(kb):
                ks = slice(128 * q, min(128 * q + 128, k))
                s = sa[:, q, None].astype(np.float64) * np.repeat(sb[q].astype(np.float64), 128)[None, :n]
                out += (va[:, ks] @ vb[ks]) * s
                mag += (np.abs(va[:, ks]) @ np.abs(vb[ks])) * s
            return out, mag

        for b, sb in ((w.T, sw.T), (bk, sbk)):  # b a transposed view with its scales' transposed view; b row-major
            ref, mag = want(b, sb)
            out = poisoned((m, n), np.float32)
            tile.gemm(a, b, out=out, dtype="f8e4m3", a_scale=sa, b_scale=sb)
            err, bound = np.abs(out - ref), 1e-5 * mag + 1e-6
            self.assertTrue((err <= bound).all(), "max error %g (bound %g)" % (err.max(), bound.flat[np.argmax(err - bound)]))
            # a misplaced scale would show: b_scale of another K block
            bad, _ = want(b, np.roll(sb, 1, axis=0))
            self.assertTrue((np.abs(out - bad) > bound).any())
        with self.assertRaisesRegex(ValueError, r"a_scale \[45, 3\] .* b_scale \[3, 2\]"):
            tile.gemm(a, w.T, dtype="f8e4m3", a_scale=sa, b_scale=sw)
        with self.assertRaisesRegex(ValueError, r"transposed view"):
            tile.gemm(a, w.T, dtype="f8e4m3", a_scale=sa, b_scale=np.ascontiguousarray(sw.T))
        with self.assertRaisesRegex(ValueError, r"C-contiguous, as b is"):
            tile.gemm(a, bk, dtype="f8e4m3", a_scale=sa, b_scale=np.asfortranarray(sbk))

    def test_gemm_epilogue_and_transposes(self):
        m, n, k = 45, 71, 39
        a = rng.standard_normal((k, m)).astype(np.float16).T  # a transposed view
        b = rng.standard_normal((n, k)).astype(np.float16).T
        bias = rng.standard_normal(n).astype(np.float32)
        c = rng.standard_normal((m, n)).astype(np.float32)
        c0 = c.astype(np.float64)
        tile.gemm(a, b, out=c, bias=bias, activation="relu", alpha=0.5, beta=2.0)
        want = np.maximum(0.5 * (a.astype(np.float64) @ b.astype(np.float64)) + 2.0 * c0 + bias, 0)
        close(self, c, want, 1e-4, 1e-3)

    def test_attention_f16(self):
        for causal in (False, True):
            for (bsz, sq, sk, hq, hkv, d) in ((2, 37, 37, 2, 2, 64), (1, 19, 45, 4, 2, 32)):
                q = rng.standard_normal((bsz, sq, hq, d)).astype(np.float16)
                k = rng.standard_normal((bsz, sk, hkv, d)).astype(np.float16)
                v = rng.standard_normal((bsz, sk, hkv, d)).astype(np.float16)
                out = poisoned(q.shape, np.float16)
                self.assertIs(tile.attention(q, k, v, causal=causal, out=out), out)
                close(self, out, attention_ref(q, k, v, causal, 1 / np.sqrt(d)), 2e-3, 2e-3)
        q = rng.standard_normal((1, 9, 2, 16)).astype(np.float16)
        out = tile.attention(q, q, q, softmax_scale=0.3)
        close(self, out, attention_ref(q, q, q, False, 0.3), 2e-3, 2e-3)

    def test_attention_f8(self):
        # e4m3 codes (uint8, no NaN) with per-tensor scales against float64 on the dequantized values.  The
        # kernel rounds P to e4m3 (3 mantissa bits): |dO| <= 2^-4 (attention over |V|) + O's rounding
        def codes(shape):
            return (rng.integers(0, 0x7F, shape) | (rng.integers(0, 2, shape) << 7)).astype(np.uint8)

        for causal, (bsz, sq, sk, hq, hkv, d), out_dtype in ((False, (2, 19, 45, 4, 2, 64), "f16"),
                                                             (True, (1, 37, 37, 2, 1, 128), "bf16")):
            q, k, v = codes((bsz, sq, hq, d)), codes((bsz, sk, hkv, d)), codes((bsz, sk, hkv, d))
            qs, ks, vs = 0.004, 0.003, 0.01
            qd, kd, vd = f8e4m3_decode(q) * qs, f8e4m3_decode(k) * ks, f8e4m3_decode(v) * vs
            out = tile.attention(q, k, v, causal=causal, dtype="f8e4m3", q_scale=qs, k_scale=ks, v_scale=vs, out_dtype=out_dtype)
            got = out.astype(np.float64) if out_dtype == "f16" else from_bf16_bits(out)
            self.assertEqual(out.dtype, np.float16 if out_dtype == "f16" else np.uint16)
            want = attention_ref(qd, kd, vd, causal, 1 / np.sqrt(d))
            half_ulp = 2.0 ** -11 if out_dtype == "f16" else 2.0 ** -8
            bound = 2.0 ** -4 * attention_ref(qd, kd, np.abs(vd), causal, 1 / np.sqrt(d)) + half_ulp * np.abs(want) + 1e-6
            self.assertFalse(np.isnan(got).any())
            err = np.abs(got - want)
            self.assertTrue((err <= bound).all(), "max error %g, bound there %g" % (err.max(), bound.flat[np.argmax(err - bound)]))
            # a v_scale 25% off does not pass the same bound
            wrong = tile.attention(q, k, v, causal=causal, dtype="f8e4m3", q_scale=qs, k_scale=ks, v_scale=vs * 1.25,
                                   out_dtype=out_dtype)
            wrong = wrong.astype(np.float64) if out_dtype == "f16" else from_bf16_bits(wrong)
            self.assertFalse((np.abs(wrong - want) <= bound).all())
        # into a given f16 array, scales None (1)
        q = codes((1, 5, 1, 32))
        out = np.full((1, 5, 1, 32), np.nan, np.float16)
        self.assertIs(tile.attention(q, q, q, dtype="f8e4m3", out=out, v_scale=1 / 256), out)
        qd = f8e4m3_decode(q)
        want = attention_ref(qd, qd, qd / 256, False, 1 / np.sqrt(32))
        bound = 2.0 ** -4 * attention_ref(qd, qd, np.abs(qd) / 256, False, 1 / np.sqrt(32)) + 2.0 ** -11 * np.abs(want) + 1e-6
        self.assertTrue((np.abs(out.astype(np.float64) - want) <= bound).all())


def decode_ref(q, kc, vc, tables, lens, scale):
    q, kc, vc = (t.astype(np.float64) for t in (q, kc, vc))
    seqs, ntok, hq, d = q.shape
    bs, hkv = kc.shape[1], kc.shape[2]
    out = np.zeros(q.shape)
    for s in range(seqs):
        n = lens[s]
        pos = np.arange(n)
        blk = tables[s][pos // bs]
        keys, vals = kc[blk, pos % bs], vc[blk, pos % bs]  # [n, hkv, d]
        for t in range(ntok):
            visible = pos <= n - ntok + t
            for h in range(hq):
                kh = h // (hq // hkv)
                sc = keys[:, kh, :] @ q[s, t, h] * scale
                sc = np.where(visible, sc, -np.inf)
                p = np.exp(sc - sc.max())
                out[s, t, h] = (p / p.sum()) @ vals[:, kh, :]
    return out


def f8e4m3_decode(codes):
    """float64 values of f8e4m3 (e4m3fn) codes: bias 7, subnormals, no infinities."""
    c = codes.astype(np.int64)
    sign = np.where(c & 0x80, -1.0, 1.0)
    e, m = (c >> 3) & 0xF, c & 7
    return sign * np.where(e == 0, m / 8.0 * 2.0 ** -6, (1 + m / 8.0) * 2.0 ** (e - 7))


def moe_ref(x, w1, w2, ids, weights):
    x, w1, w2 = (t.astype(np.float64) for t in (x, w1, w2))
    inter = w2.shape[2]
    out = np.zeros((x.shape[0], w2.shape[1]))
    mag = np.zeros_like(out)
    for t in range(x.shape[0]):
        for e, w in zip(ids[t], weights[t]):
            g = w1[e, :inter] @ x[t]
            u = w1[e, inter:] @ x[t]
            h = g / (1 + np.exp(-g)) * u
            out[t] += w * (w2[e] @ h)
            mag[t] += abs(w) * (np.abs(w2[e]) @ np.abs(h))
    return out, mag


def attention_ref(q, k, v, causal, scale):
    q, k, v = (t.astype(np.float64) for t in (q, k, v))
    bsz, sq, hq, d = q.shape
    sk, hkv = k.shape[1], k.shape[2]
    out = np.zeros(q.shape)
    for b in range(bsz):
        for h in range(hq):
            kh = h // (hq // hkv)
            s = q[b, :, h, :] @ k[b, :, kh, :].T * scale
            if causal:
                i = np.arange(sq)[:, None]
                j = np.arange(sk)[None, :]
                s = np.where(j <= i + sk - sq, s, -np.inf)
            p = np.exp(s - s.max(axis=1, keepdims=True))
            out[b, :, h, :] = (p / p.sum(axis=1, keepdims=True)) @ v[b, :, kh, :]
    return out


class ShippedMore(unittest.TestCase):
    def test_empty_batches(self):
        """No tokens, no sequences, no rows: an empty result, no error (NumPy gives empty arrays zero strides,
        which read as "not contiguous"; moe's empty router_logits passed NULL and read as "no router")."""
        z = lambda *s: np.zeros(s, np.float16)
        self.assertEqual(tile.moe(z(0, 32), z(4, 32, 32), z(4, 32, 16), 2, router_logits=np.zeros((0, 4), np.float32)).shape, (0, 32))
        self.assertEqual(tile.decode_paged(z(0, 1, 2, 32), z(4, 16, 2, 32), z(4, 16, 2, 32), np.zeros((0, 2), np.int32),
                                           np.zeros(0, np.int32)).shape, (0, 1, 2, 32))
        self.assertEqual(tile.gemm(z(0, 4), z(4, 4)).shape, (0, 4))
        self.assertEqual(tile.attention(z(0, 8, 2, 32), z(0, 8, 2, 32), z(0, 8, 2, 32)).shape, (0, 8, 2, 32))

    def test_decode_paged_f16(self):
        seqs, ntok, hq, hkv, d, bs = 3, 2, 4, 2, 64, 16
        lens = np.array([37, 2, 70], np.int32)
        nblk_seq = [int(-(-n // bs)) for n in lens]
        width = max(nblk_seq) + 1
        num_blocks = sum(nblk_seq) + 3
        perm = rng.permutation(num_blocks).astype(np.int32)  # physical blocks in random order
        tables = np.full((seqs, width), -1, np.int32)
        at = 0
        for s, nb in enumerate(nblk_seq):
            tables[s, :nb] = perm[at:at + nb]
            at += nb
        kc = rng.standard_normal((num_blocks, bs, hkv, d)).astype(np.float16)
        vc = rng.standard_normal((num_blocks, bs, hkv, d)).astype(np.float16)
        q = rng.standard_normal((seqs, ntok, hq, d)).astype(np.float16)
        for splits in (1, 0):
            out = poisoned(q.shape, np.float16)
            tile.decode_paged(q, kc, vc, tables, lens, out=out, num_splits=splits)
            close(self, out, decode_ref(q, kc, vc, tables, lens, 1 / np.sqrt(d)), 2e-3, 2e-3)
        # k_scale/v_scale dequantize f8 codes: with this f16 cache 1.0 is no scale, anything else refused (it was ignored)
        out = poisoned(q.shape, np.float16)
        tile.decode_paged(q, kc, vc, tables, lens, out=out, k_scale=1.0, v_scale=1.0)
        close(self, out, decode_ref(q, kc, vc, tables, lens, 1 / np.sqrt(d)), 2e-3, 2e-3)
        for kw in ({"k_scale": 0.5}, {"v_scale": 2.0}):
            with self.assertRaisesRegex(tile.Error, "apply to an f8e4m3 cache only"):
                tile.decode_paged(q, kc, vc, tables, lens, out=out, **kw)
        # NumPy tables are checked on the host (the library reads them on the device unchecked): a length past
        # max_context_len or under the query's tokens computed wrong rows silently, a bad block read other keys
        with self.assertRaisesRegex(ValueError, r"context_lens\[0\] = 37: .* at most max_context_len = 20"):
            tile.decode_paged(q, kc, vc, tables, lens, out=out, max_context_len=20)
        with self.assertRaisesRegex(ValueError, r"context_lens\[1\] = 1: each must be at least the query's 2 tokens"):
            tile.decode_paged(q, kc, vc, tables, np.array([37, 1, 70], np.int32), out=out)
        bad = tables.copy()
        bad[2, nblk_seq[2] - 1] = num_blocks
        with self.assertRaisesRegex(ValueError, r"block_tables\[2\]\[4\] = %d: .* outside the cache's %d blocks" % (num_blocks, num_blocks)):
            tile.decode_paged(q, kc, vc, bad, lens, out=out)
        bad[2, nblk_seq[2] - 1] = 0
        bad[0, nblk_seq[0]] = 10**6  # past a sequence's blocks: not read, so not checked
        out = poisoned(q.shape, np.float16)
        tile.decode_paged(q, kc, vc, bad, lens, out=out, num_splits=1)
        want = decode_ref(q, kc, vc, bad, lens, 1 / np.sqrt(d))
        close(self, out, want, 2e-3, 2e-3)

    def test_decode_paged_f8_cache(self):
        # an f8e4m3 KV cache as uint8 codes with per-tensor scales
        seqs, ntok, hq, hkv, d, bs = 2, 1, 2, 1, 32, 16
        lens = np.array([29, 40], np.int32)
        tables = np.array([[0, 1, -1], [2, 3, 4]], np.int32)
        codes_k = rng.integers(0, 256, (5, bs, hkv, d), dtype=np.uint8)
        codes_v = rng.integers(0, 256, (5, bs, hkv, d), dtype=np.uint8)
        for c in (codes_k, codes_v):
            c[(c & 0x7F) == 0x7F] = 0x38  # no NaN codes: 1.0 instead
        q = rng.standard_normal((seqs, ntok, hq, d)).astype(np.float16)
        out = poisoned(q.shape, np.float16)
        tile.decode_paged(q, codes_k, codes_v, tables, lens, out=out, kv_dtype="f8e4m3", k_scale=0.05, v_scale=0.5)
        want = decode_ref(q, f8e4m3_decode(codes_k) * 0.05, f8e4m3_decode(codes_v) * 0.5, tables, lens, 1 / np.sqrt(d))
        close(self, out, want, 4e-3, 4e-3 * np.abs(want).max())

    def test_moe_f16(self):
        tokens, hidden, inter, experts, topk = 13, 64, 48, 5, 2
        x = (rng.standard_normal((tokens, hidden)) * 0.5).astype(np.float16)
        w1 = (rng.standard_normal((experts, 2 * inter, hidden)) * 0.2).astype(np.float16)
        w2 = (rng.standard_normal((experts, hidden, inter)) * 0.2).astype(np.float16)
        # precomputed routing
        ids = np.array([rng.choice(experts, topk, replace=False) for _ in range(tokens)], np.int32)
        weights = rng.random((tokens, topk)).astype(np.float32)
        out = poisoned((tokens, hidden), np.float32)
        self.assertIs(tile.moe(x, w1, w2, topk, topk_ids=ids, topk_weights=weights, out=out), out)
        want, mag = moe_ref(x, w1, w2, ids, weights)
        self.assertTrue((np.abs(out - want) <= (2.0 ** -10 + 3e-5) * mag + 1e-5).all())
        # the router: softmax, top-k, renormalized; the chosen ids and weights are written back
        logits = rng.standard_normal((tokens, experts)).astype(np.float32)
        ids2 = np.full((tokens, topk), -1, np.int32)
        w2t = poisoned((tokens, topk), np.float32)
        out = tile.moe(x, w1, w2, topk, router_logits=logits, topk_ids=ids2, topk_weights=w2t, renormalize=True)
        p = np.exp(logits.astype(np.float64) - logits.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        want_ids = np.argsort(-p, axis=1)[:, :topk]
        self.assertTrue(np.array_equal(np.sort(ids2, axis=1), np.sort(want_ids, axis=1)), (ids2, want_ids))
        want_w = np.take_along_axis(p, ids2.astype(np.int64), axis=1)
        want_w /= want_w.sum(axis=1, keepdims=True)
        close(self, w2t, want_w, 1e-5, 1e-6)
        want, mag = moe_ref(x, w1, w2, ids2, want_w)
        self.assertTrue((np.abs(out - want) <= (2.0 ** -10 + 3e-5) * mag + 1e-5).all())


class Errors(unittest.TestCase):
    def test_parameter_named_stream(self):
        """A kernel parameter named stream: stream= is the launch's, so naming it says so (it was "takes 2
        arguments, got 1" or "unknown keyword argument"); by position it works."""
        k = tile.compile("kernel b(x: *f32, stream: i32) { store(x, stream as f32); }\n").b
        x = poisoned(1, np.float32)
        for args, kw in (((x,), {"stream": 6}), ((), {"x": x, "stream": 7})):
            with self.assertRaisesRegex(TypeError, r"its parameter 'stream' shares its name with the launch's stream= option"):
                k[1](*args, **kw)
        k[1](x, 5, stream=None)
        self.assertEqual(float(x[0]), 5.0)

    @classmethod
    def setUpClass(cls):
        cls.add = tile.compile(os.path.join(KERNELS, "add.tile"), BLOCK=256).add

    def setUp(self):
        self.x = rng.random(100, dtype=np.float32)

    def test_bad_device_string_from_the_environment(self):
        old = os.environ.get("TILE_DEVICE")
        os.environ["TILE_DEVICE"] = "bogus"
        try:
            # the call and the string are each named once (the message was "device 'bogus': tile_context_create_ex:
            # bad device string 'bogus': ...", and from the variable "TILE_DEVICE='bogus': device 'bogus': ...")
            with self.assertRaises(tile.Error) as cm:
                tile.device()
            self.assertRegex(str(cm.exception), r"^device: bad TILE_DEVICE 'bogus': expected \"emu\"")
            self.assertEqual(str(cm.exception).count("bogus"), 1, str(cm.exception))
            for call in (tile.device, tile.Device):  # given by name: no mention of the variable
                with self.assertRaises(tile.Error) as cm:
                    call("bogus")
                self.assertRegex(str(cm.exception), r"^device: bad device string 'bogus': expected \"emu\"")
                self.assertEqual(str(cm.exception).count("bogus"), 1, str(cm.exception))
                self.assertNotIn("tile_context_create", str(cm.exception))
        finally:
            if old is None:
                del os.environ["TILE_DEVICE"]
            else:
                os.environ["TILE_DEVICE"] = old

    def test_bad_dtype(self):
        with self.assertRaisesRegex(TypeError, r"argument 'y'.*\*f32.*f8"):
            self.add[1](self.x, self.x.astype(np.float64), self.x, 100)

    def test_misaligned(self):
        raw = np.zeros(101 * 4, np.uint8)
        view = raw[2:2 + 400].view(np.float32)  # 2 bytes off: not even element-aligned
        with self.assertRaisesRegex(ValueError, r"argument 'out'.*aligned"):
            self.add[1](self.x, self.x, view, 100)

    def test_argument_count(self):
        with self.assertRaisesRegex(TypeError, r"'add' takes 4 arguments"):
            self.add[1](self.x, self.x, self.x)
        with self.assertRaisesRegex(TypeError, r"unknown keyword.*stream="):
            self.add[1](self.x, self.x, self.x, 100, strem=0)
        with self.assertRaisesRegex(TypeError, r"missing argument 'n'"):
            self.add[1](self.x, self.x, out=self.x)
        with self.assertRaisesRegex(TypeError, r"'x' given by position and by name"):
            self.add[1](self.x, self.x, self.x, x=self.x, n=100)
        # a typo of a name is named, with the names (it read as "missing argument 'n'")
        with self.assertRaisesRegex(TypeError, r"unknown keyword argument 'nn' \(parameters: x, y, out, n; and stream=\)"):
            self.add[1](self.x, self.x, self.x, nn=100)

    def test_numpy_integers_in_grids(self):
        out = poisoned(100, np.float32)
        self.add[np.int64(1)](self.x, self.x, out, np.int32(100))
        close(self, out, 2 * self.x.astype(np.float64), 1e-6, 1e-6)
        out = poisoned(100, np.float32)
        self.add[lambda meta: (np.int32(tile.cdiv(100, meta["BLOCK"])),)](self.x, self.x, out, 100)
        close(self, out, 2 * self.x.astype(np.float64), 1e-6, 1e-6)

    def test_compile_option_types(self):
        with self.assertRaisesRegex(TypeError, r"num_warps must be an int"):
            tile.compile(os.path.join(KERNELS, "add.tile"), num_warps="8")
        with self.assertRaisesRegex(TypeError, r"kernel must be a kernel's name"):
            tile.compile(os.path.join(KERNELS, "add.tile"), kernel=5)
        self.assertEqual(tile.compile(os.path.join(KERNELS, "add.tile"), num_warps=np.int64(2), BLOCK=256).add.num_warps, 2)

    def test_arguments_by_name(self):
        out = poisoned(100, np.float32)
        self.add[1](self.x, n=100, out=out, y=self.x, stream=None)
        close(self, out, 2 * self.x.astype(np.float64), 1e-6, 1e-6)

    def test_scalars(self):
        with self.assertRaisesRegex(ValueError, r"argument 'n'.*i32"):
            self.add[1](self.x, self.x, self.x, 2**31)
        with self.assertRaisesRegex(TypeError, r"argument 'n'.*float"):
            self.add[1](self.x, self.x, self.x, 100.0)
        with self.assertRaisesRegex(TypeError, r"argument 'x'.*expected an array"):
            self.add[1]([1.0] * 100, self.x, self.x, 100)

    def test_device_memory_on_emu(self):
        class FakeCuda:
            __cuda_array_interface__ = {"data": (1 << 40, False), "typestr": "<f4", "shape": (100,), "strides": None,
                                        "version": 3}
        with self.assertRaisesRegex(TypeError, r"argument 'x'.*emulator"):
            self.add[1](FakeCuda(), self.x, self.x, 100)

    def test_grid(self):
        with self.assertRaisesRegex(TypeError, "grid"):
            self.add["x"]
        with self.assertRaisesRegex(ValueError, "grid"):
            self.add[(1, 2, 3, 4)]

    def test_launch_errors_name_the_kernel(self):
        """Every refused launch argument names the kernel as a refused array does ("argument 'x': kernel 'add' takes
        *f32, ..."): scalars (a float, text, None, a value out of range), what is no array or a misaligned one, the
        grid (given, or returned by a grid function) and stream=; a raw PTX kernel's grid, block, stream and
        arguments too.  Nothing is launched: the poisoned output stays NaN."""
        x, out = self.x, poisoned(100, np.float32)
        for args, exc, msg in (((x, x, out, 1.5), TypeError, r"argument 'n': kernel 'add' takes i32, got a float, not an integer"),
                               ((x, x, out, "7"), TypeError, r"argument 'n': kernel 'add' takes i32, got <class 'str'>, not an integer"),
                               ((x, x, out, None), TypeError, r"argument 'n': kernel 'add' takes i32, got None: only pointer"),
                               ((x, x, out, -2**31 - 1), ValueError, r"argument 'n': kernel 'add' takes i32, got -2147483649, "
                                                                     r"which does not fit"),
                               (([1.0] * 100, x, out, 100), TypeError, r"argument 'x': kernel 'add' takes \*f32: expected an array "
                                                                       r"\(NumPy, DLPack or __cuda_array_interface__\), got <class 'list'>"),
                               ((x, np.zeros(101, np.float32).view(np.uint8)[2:402].view(np.float32), out, 99), ValueError,
                                r"argument 'y': kernel 'add' takes \*f32, got an array whose address is not aligned to its 4-byte")):
            with self.assertRaisesRegex(exc, "^" + msg):
                self.add[1](*args)
        f = tile.compile("kernel scale(x: *f32, s: f32, on: i1) { store(x, where(on, s, 0.0)); }\n").scale
        with self.assertRaisesRegex(TypeError, r"^argument 's': kernel 'scale' takes f32, got <class 'str'>, not a number"):
            f[1](out, "2", True)
        with self.assertRaisesRegex(TypeError, r"^argument 'on': kernel 'scale' takes i1, got <class 'str'>, not a bool"):
            f[1](out, 2.0, "True")
        with self.assertRaisesRegex(ValueError, r"^argument 's': kernel 'scale' takes f32, got an int too large for any float"):
            f[1](out, 10**400, True)
        for grid, exc, msg in ((-3, ValueError, "a dimension is negative or too large"),
                               ((1, "2"), TypeError, "dimensions must be integers"),
                               ((1, 2, 3, 4), ValueError, "expected 1 to 3 dimensions, got 4"),
                               ("x", TypeError, "expected an int or a tuple of 1 to 3 ints, got <class 'str'>")):
            with self.assertRaisesRegex(exc, "^grid of kernel 'add': " + re.escape(msg)):
                self.add[grid]
            with self.assertRaisesRegex(exc, "^grid of kernel 'add': " + re.escape(msg)):
                self.add[lambda meta, g=grid: g](x, x, out, 100)
        with self.assertRaisesRegex(TypeError, r"^stream of kernel 'add': expected None or an int \(a CUstream handle\), "
                                               r"got <class 'str'>"):
            self.add[1](x, x, out, 100, stream="s")
        with self.assertRaisesRegex(tile.Error, r"^stream of kernel 'add': "):
            self.add[1](x, x, out, 100, stream=12345)  # no such stream on the emulator
        self.assertTrue(np.isnan(out).all())
        ptx = tile.load_ptx(".version 8.0\n.target sm_80\n.address_size 64\n"
                            ".visible .entry fill(.param .u64 p, .param .u32 n)\n.maxntid 32, 1, 1\n{\n\tret;\n}\n").fill
        with self.assertRaisesRegex(TypeError, r"^kernel 'fill': grid: dimensions must be integers"):
            ptx[(1, "2")]
        with self.assertRaisesRegex(ValueError, r"^kernel 'fill': block: a dimension is not positive or too large"):
            ptx[1](out, 3, block=(0,))
        with self.assertRaisesRegex(TypeError, r"^kernel 'fill': cluster: expected an int or a tuple"):
            ptx[1](out, 3, cluster="c")
        with self.assertRaisesRegex(TypeError, r"^kernel 'fill': stream: expected None or an int"):
            ptx[1](out, 3, stream="s")
        with self.assertRaisesRegex(TypeError, r"^kernel 'fill': argument 0 \(u64\): expected an array"):
            ptx[1]("x", 3)
        ptx[1](out, 3)  # and it launches

    def test_out_of_bounds_reported(self):
        # n larger than the arrays: the runtime's checks or the emulator's memcheck refuse it
        with self.assertRaises(tile.Error):
            self.add[1](self.x, self.x, self.x[:10].copy(), 100)

    def test_compile_error_located(self):
        src = "kernel broken(x: *f32) {\n    let a = 1;\n    store(x, undefined_name);\n}\n"
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "broken.tile")
            with open(path, "w") as f:
                f.write(src)
            with self.assertRaises(tile.CompileError) as cm:
                tile.compile(path)
            self.assertRegex(str(cm.exception), r"broken\.tile:3:\d+: error")
            self.assertRegex(cm.exception.diagnostics, r"broken\.tile:3:\d+: error")
            self.assertIsInstance(cm.exception, tile.Error)
        with self.assertRaisesRegex(tile.CompileError, r":3:\d+: error"):
            tile.compile(src)

    def test_bad_define(self):
        with self.assertRaisesRegex(tile.Error, "NOPE"):
            tile.compile(os.path.join(KERNELS, "add.tile"), NOPE=3)

    def test_missing_file(self):
        with self.assertRaises(FileNotFoundError):
            tile.compile(os.path.join(KERNELS, "nope.tile"))  # names a .tile file that does not exist
        with self.assertRaises(KeyError):
            tile.compile(os.path.join(KERNELS, "add.tile"))["nope"]

    def test_stream_on_emu(self):
        with self.assertRaisesRegex(tile.Error, "stream"):
            self.add[1](self.x, self.x, self.x, 100, stream=12345)
        out = poisoned(100, np.float32)
        self.add[1](self.x, self.x, out, 100, stream=None)
        self.add[1](self.x, self.x, out, 100, stream=0)
        close(self, out, 2 * self.x.astype(np.float64), 1e-6, 1e-6)

    def test_gemm_errors(self):
        a = np.zeros((4, 5), np.float16)
        with self.assertRaisesRegex(ValueError, r"argument 'b'"):
            tile.gemm(a, np.zeros((4, 5), np.float16))
        with self.assertRaisesRegex(TypeError, r"argument 'b'"):
            tile.gemm(a, np.zeros((5, 3), np.float32))
        with self.assertRaisesRegex(ValueError, "activation"):
            tile.gemm(a, np.zeros((5, 3), np.float16), activation="tanh")
        # reversed and broadcast rows: a ValueError naming the argument (they reached tile_gemm as ldA = -5,
        # "ldA = -5 is less than the 5 columns of A")
        b = np.zeros((5, 3), np.float16)
        with self.assertRaisesRegex(ValueError, r"argument 'a': its rows are -5 elements apart"):
            tile.gemm(a[::-1], b)
        with self.assertRaisesRegex(ValueError, r"argument 'b': its rows are 0 elements apart"):
            tile.gemm(a, np.broadcast_to(np.zeros(3, np.float16), (5, 3)))
        with self.assertRaisesRegex(ValueError, r"argument 'a': its rows are -4 elements apart"):
            tile.gemm(np.zeros((5, 4), np.float16).T[:, ::-1], b)  # transposed, its columns reversed
        # a reversed view copied is fine, and gives the right numbers
        rng = np.random.default_rng(7)
        x, y = rng.standard_normal((7, 5)).astype(np.float16), rng.standard_normal((5, 3)).astype(np.float16)
        np.testing.assert_allclose(tile.gemm(np.ascontiguousarray(x[::-1]), y, out_dtype="f32"),
                                   x[::-1].astype(np.float64) @ y.astype(np.float64), rtol=1e-5, atol=1e-5)

    def test_attention_hopper_k_and_v_strided_differently(self):
        """On sm_90a a K that cannot go through a tensor map (broadcast, or sliced to odd strides) beside a
        contiguous V deadlocked the warp-specialized kernel ("emu: deadlock ... bar.sync 1, 256"); checked on
        emu:sm_90a whatever TILE_DEVICE says, against float64."""
        if not tile.device().is_emulator:
            self.skipTest("emu:sm_90a needs the emulator")
        q = rng.standard_normal((1, 5, 3, 16)).astype(np.float16)
        big = rng.standard_normal((1, 5, 3, 17)).astype(np.float16)
        for k, v in ((big[..., :16], q), (np.broadcast_to(q[:, :1], q.shape), q), (q, big[..., 1:])):
            out = poisoned(q.shape, np.float16)
            got = tile.attention(q, k, v, out=out, device="emu:sm_90a")
            s = np.einsum("bqhd,bkhd->bhqk", q.astype(np.float64), k.astype(np.float64)) / 4.0
            p = np.exp(s - s.max(-1, keepdims=True))
            want = np.einsum("bhqk,bkhd->bqhd", p / p.sum(-1, keepdims=True), v.astype(np.float64))
            close(self, got, want, 2e-3, 2e-3)

    def test_broadcast_views(self):
        """Broadcast views (stride 0) reached the C API's "0: contiguous" and read other rows of the owning array
        without an error: moe's x, decode_paged's block_tables, attention's tensors broadcast over batch, seq and heads."""
        r = np.random.default_rng(11)
        big = r.standard_normal((3, 16)).astype(np.float16)
        w1, w2 = np.zeros((2, 32, 16), np.float16), np.zeros((2, 16, 16), np.float16)
        with self.assertRaisesRegex(ValueError, r"argument 'x': its rows are 0 elements apart"):
            tile.moe(np.broadcast_to(big[0], (3, 16)), w1, w2, 1, router_logits=np.zeros((3, 2), np.float32))
        kc = r.standard_normal((4, 16, 1, 16)).astype(np.float16)
        tables = np.array([[0, 1], [2, 3]], np.int32)
        q = r.standard_normal((2, 1, 1, 16)).astype(np.float16)
        with self.assertRaisesRegex(ValueError, r"argument 'block_tables': its rows are 0 elements apart"):
            tile.decode_paged(q, kc, kc, np.broadcast_to(tables[1], (2, 2)), np.array([20, 20], np.int32))
        kv = r.standard_normal((2, 5, 3, 16)).astype(np.float16)  # k: one key everywhere, from a bigger array
        with self.assertRaisesRegex(ValueError, r"argument 'k': broadcast over its first three dimensions"):
            tile.attention(kv, np.broadcast_to(kv[1, 2, 0], (2, 5, 3, 16)), kv)
        # with a dimension of size 1 the view is still described: every key equal, so O is the mean of V
        k1 = np.broadcast_to(kv[1, 2, 0], (1, 5, 3, 16))
        got = tile.attention(kv[:1], k1, kv[:1])
        close(self, got, np.broadcast_to(kv[:1].astype(np.float64).mean(axis=1, keepdims=True), got.shape), 2e-3, 2e-3)

    def test_reversed_views(self):
        """A reversed attention or decode_paged tensor failed in the C API ("strides must be non-negative") without
        naming the argument; now a ValueError names it.  A reversed dimension of size 1 is no reversal."""
        r = np.random.default_rng(12)
        kv = r.standard_normal((2, 5, 3, 16)).astype(np.float16)
        with self.assertRaisesRegex(ValueError, r"argument 'v': dimension 1 has a negative stride"):
            tile.attention(kv, kv, kv[:, ::-1])
        with self.assertRaisesRegex(ValueError, r"argument 'q': dimension 2 has a negative stride"):
            tile.attention(kv[:, :, ::-1], kv, kv)
        q = r.standard_normal((1, 4, 1, 16)).astype(np.float16)
        np.testing.assert_array_equal(tile.attention(q[:, :, ::-1], q, q), tile.attention(q, q, q))
        kc = r.standard_normal((4, 16, 1, 16)).astype(np.float16)
        q2 = r.standard_normal((2, 1, 1, 16)).astype(np.float16)
        tables = np.array([[0, 1], [2, 3]], np.int32)
        with self.assertRaisesRegex(ValueError, r"argument 'k_cache': dimension 0 has a negative stride"):
            tile.decode_paged(q2, kc[::-1], kc, tables, np.array([20, 20], np.int32))

    def test_attention_errors(self):
        q = np.zeros((1, 4, 2, 16), np.float32)
        with self.assertRaisesRegex(TypeError, r"argument 'q'.*f16, bf16 or f8e4m3"):
            tile.attention(q, q, q)
        q = np.zeros((1, 4, 2, 24), np.float16)
        with self.assertRaisesRegex(tile.Error, "head_dim"):
            tile.attention(q, q, q)
        with self.assertRaisesRegex(ValueError, "q_scale.*f8e4m3"):
            tile.attention(q, q, q, q_scale=0.5)
        # 1.0 is no scale with f16 (as decode_paged's k_scale/v_scale): it runs, and gives what None gives
        q16 = np.random.default_rng(3).standard_normal((1, 5, 2, 16)).astype(np.float16)
        np.testing.assert_array_equal(tile.attention(q16, q16, q16, q_scale=1.0, k_scale=1.0, v_scale=1.0),
                                      tile.attention(q16, q16, q16))
        c = np.zeros((1, 4, 2, 16), np.uint8)
        with self.assertRaisesRegex(ValueError, "out_dtype"):
            tile.attention(c, c, c, dtype="f8e4m3", out_dtype="f32")
        with self.assertRaisesRegex(TypeError, r"argument 'out'.*f16 or bf16"):
            tile.attention(c, c, c, dtype="f8e4m3", out=np.zeros((1, 4, 2, 16), np.float32))
        # 0 is the C API's "default": refused rather than silently replaced by 1/sqrt(head_dim)
        h = np.zeros((1, 4, 2, 16), np.float16)
        with self.assertRaisesRegex(ValueError, "softmax_scale: 0 is not a scale"):
            tile.attention(h, h, h, softmax_scale=0.0)
        with self.assertRaisesRegex(ValueError, "routed_scale: 0 is not a scale"):
            tile.moe(np.zeros((2, 16), np.float16), np.zeros((2, 32, 16), np.float16), np.zeros((2, 16, 16), np.float16), 1,
                     router_logits=np.zeros((2, 2), np.float32), routed_scale=0)


if __name__ == "__main__":
    unittest.main()


class CompileOptions(unittest.TestCase):
    SRC = ("kernel k(x: *f32, n: i32) {\n"
           "    let o = arange(0, 16);\n"
           "    device_assert(o < n, \"o must be below n\");\n"
           "    store(x + o, o as f32, o < n);\n"
           "}\n")

    def test_debug_compiles_device_assert(self):
        x = poisoned(16, np.float32)
        tile.compile(self.SRC).k[1,](x, 4)  # no checks without debug: runs
        self.assertEqual(list(x[:4]), [0.0, 1.0, 2.0, 3.0])
        with self.assertRaises(tile.Error) as cm:
            tile.compile(self.SRC, debug=True).k[1,](x, 4)
        self.assertIn("o must be below n", str(cm.exception))
        with self.assertRaises(TypeError):
            tile.compile(self.SRC, debug=1)
        with self.assertRaises(TypeError):
            tile.compile(self.SRC, no_tma="yes")
