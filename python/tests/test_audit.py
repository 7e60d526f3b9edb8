"""docs/python.md's promises, checked as a Triton user reads them: NumPy arrays of every element type the
kernels take, scalars of every parameter type at their range's ends, strided, reversed and 0-d arrays,
tuple arguments (flattened as Triton passes them), read-only arrays where a kernel stores, kernel.asm(),
and the misuse that must be a Python exception.  Kernel results are checked against NumPy references
(float64 or exact integers) on fresh random inputs, outputs poisoned first, sizes no multiple of the block."""
import collections
import os
import pathlib
import tempfile
import unittest

import numpy as np

import tile

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = os.path.join(os.path.dirname(os.path.dirname(HERE)), "kernels")

rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))

# every element type a pointer takes, as NumPy holds it (bf16 and f8 have no NumPy type: test_tile.py, below)
TYPES = [("i8", np.int8), ("u8", np.uint8), ("i16", np.int16), ("u16", np.uint16), ("i32", np.int32), ("u32", np.uint32),
         ("i64", np.int64), ("u64", np.uint64), ("f16", np.float16), ("f32", np.float32), ("f64", np.float64)]


def every_type_source():
    """out_T[i] = x_T[i] * 2 + 1 for every type T, one kernel (one compile)."""
    params = ", ".join("x_%s: *%s, o_%s: *%s" % (t, t, t, t) for t, _ in TYPES)
    body = "\n".join("    store(o_%s + r, load(x_%s + r, m, 0) * 2 + 1, m);" % (t, t) for t, _ in TYPES)
    return ("kernel every(%s, n: i32) {\n    let r = program_id(0) * 64 + arange(0, 64);\n    let m = r < n;\n%s\n}\n"
            % (params, body))


SCALAR_TYPES = [t for t, _ in TYPES] + ["bf16", "i1"]


def scalars_source():
    """o_T[0] = v_T for every scalar type T."""
    params = ", ".join("o_%s: *%s" % (t, t) for t in SCALAR_TYPES) + ", " + ", ".join("v_%s: %s" % (t, t) for t in SCALAR_TYPES)
    body = "\n".join("    store(o_%s, v_%s);" % (t, t) for t in SCALAR_TYPES)
    return "kernel sc(%s) {\n%s\n}\n" % (params, body)


COPY = """
// out[i * so] = x[i * sx] * s for i < n: strides in elements, as a Triton kernel takes x.stride(0)
kernel copy(x: *f32, out: *f32, n: i32, sx: i32, so: i32, s: f32) {
    let r = program_id(0) * 64 + arange(0, 64);
    let m = r < n;
    store(out + r * so, load(x + r * sx, m, 0.0) * s, m);
}
"""

CONTROL_FLOW = """
// out[pos[i]] = x[i], pos[i] = steps[0] + .. + steps[i-1]: the pointer carried through a for (walk), a while (spin)
kernel walk(x: *f32, out: *f32, steps: *i32, n: i32) {
    let p = out;
    for i in range(0, n) {
        store(p, load(x + i));
        p = p + load(steps + i);
    }
}
kernel spin(x: *f32, out: *f32, steps: *i32, n: i32) {
    let p = out;
    let i = 0;
    while i < n {
        store(p, load(x + i));
        p = p + load(steps + i);
        i = i + 1;
    }
}
// c[2 + steps[0]] += 1 when n > 3, else c[n] += 1: the pointer an if's result
kernel pick(steps: *i32, c: *f32, n: i32) {
    let q = c;
    if n > 3 { q = c + 2 + load(steps); } else { q = c + n; }
    atomic_add(q, 1.0);
}
// a[0] or b[0] = 7: the pointer is one of two parameters
kernel either(a: *f32, b: *f32, n: i32) {
    let q = a;
    if n > 3 { q = b; }
    store(q, 7.0);
}
"""

MAY_STORE = r"""
// the pointer a select of two parameters
kernel sel(a: *f32, b: *f32, n: i32) { store(where(n > 3, b, a), 7.0); }
// a pointer loaded from a table of pointers
kernel tab(t: **f32, x: *f32) { store(load(t), load(x) + 1.0); }
// a pointer returned by inline assembly
kernel asmp(a: *f32, b: *f32) { store(inline_asm_elementwise("mov.b64 $0, $1;", "=l,l", [a], u64) as *f32, load(b) + 2.0); }
// an address through a reduce's fn, and an address computed as an integer
fn first(x, y) { return x; }
kernel red(a: *f32, b: *f32) { store(reduce(a as i64 + arange(0, 4) as i64 * 4, 0, first) as *f32, load(b) + 3.0); }
kernel arith(a: *f32, b: *f32) { store((a as i64 + 4) as *f32, load(b) + 4.0); }
"""

TMA_STORE = """
// c = a @ b in 64x64 tiles, each program a loop over tiles; c's tiles stored through a tensor map on sm_90a
@num_stages(3)
kernel epid(a: *f16, b: *f16, c: *f32) {
    let da = make_tensor_descriptor(a, [128, 64], [64, 1], [64, 32]);
    let db = make_tensor_descriptor(b, [64, 128], [128, 1], [32, 64]);
    for t in range(program_id(0), 4, num_programs(0)) {
        let pm = t / 2 * 64;
        let pn = t % 2 * 64;
        let acc = zeros([64, 64], f32);
        for k0 in range(0, 64, 32) {
            acc = dot(load_tensor_descriptor(da, [pm, k0]), load_tensor_descriptor(db, [k0, pn]), acc);
        }
        store_tensor_descriptor(make_tensor_descriptor(c, [128, 128], [128, 1], [64, 64]), [pm, pn], acc);
    }
}
"""

PAIR = """
// out[i] = p0[i] * s0 + p1[i] * s1: the ported form of a Triton kernel taking (p0, p1) and (s0, s1) as tuples
kernel pair(p0: *f32, p1: *f32, out: *f32, s0: f32, s1: f32, n: i32) {
    let r = program_id(0) * 64 + arange(0, 64);
    let m = r < n;
    store(out + r, load(p0 + r, m, 0.0) * s0 + load(p1 + r, m, 0.0) * s1, m);
}
"""


def poisoned(shape, dtype):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return np.full(shape, np.nan, dt)
    return np.full(shape, 0x5A, dt)  # no value the kernels below write


def close(test, got, want, rtol, atol):
    got = np.asarray(got, dtype=np.float64)
    test.assertFalse(np.isnan(got).any(), "NaN left in the output (some element was never written)")
    err = np.abs(got - want)
    test.assertTrue((err <= atol + rtol * np.abs(want)).all(), "max error %g" % err.max())


class Audit(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.copy = tile.compile(COPY).copy
        cls.pair = tile.compile(PAIR).pair

    def test_every_element_type(self):
        """A pointer takes an array of its element type, for every type NumPy has; out = x * 2 + 1 exactly."""
        k = tile.compile(every_type_source()).every
        self.assertEqual([t for _, t in k.params][:4], ["*i8", "*i8", "*u8", "*u8"])
        n = 301
        args, outs = [], []
        for t, dt in TYPES:
            lo, hi = (-50, 50) if t[0] in "if" else (0, 100)
            x = rng.integers(lo, hi, n).astype(dt)
            if t[0] == "f":
                x = (rng.standard_normal(n) * 10).astype(dt)
            o = poisoned(n, dt)
            args += [x, o]
            outs.append((t, dt, x, o))
        k[tile.cdiv(n, 64)](*args, n)
        for t, dt, x, o in outs:
            if t[0] == "f":
                want = (x.astype(np.float64) * 2 + 1).astype(dt)  # x * 2 is exact: one rounding, NumPy's
                np.testing.assert_array_equal(o, want, err_msg=t)
            else:
                np.testing.assert_array_equal(o.astype(np.int64), x.astype(np.int64) * 2 + 1, err_msg=t)
        # each pointer refuses the other types: the message names the argument, its type and the array's
        for i, (t, dt) in enumerate(TYPES):
            other = np.float32 if dt != np.float32 else np.int32
            bad = list(args)
            bad[2 * i + 1] = np.zeros(n, other)
            with self.assertRaisesRegex(TypeError, r"argument 'o_%s': kernel 'every' takes \*%s, got an array of '<%s%d'"
                                        % (t, t, np.dtype(other).kind, np.dtype(other).itemsize)):
                k[1](*bad, n)

    def test_generic_kernel_bf16_define(self):
        """T="bf16" (a type named by a string) for a kernel generic over dtype, on uint16 arrays; T=np.float16 too."""
        src = """
        kernel axpy(x: *T, y: *T, out: *T, a: f32, n: i32, const T = f32) {
            let r = program_id(0) * 128 + arange(0, 128);
            let m = r < n;
            let v = cast(load(x + r, m, 0), f32) * a + cast(load(y + r, m, 0), f32);
            store(out + r, cast(v, T), m);
        }
        """
        n = 333
        x32, y32 = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
        bits = lambda a: (np.ascontiguousarray(a, np.float32).view(np.uint32) >> 16).astype(np.uint16)  # exact bf16 values
        value = lambda b: (b.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
        xb, yb = bits(x32), bits(y32)
        out = np.full(n, 0x7FC1, np.uint16)  # a NaN
        k = tile.compile(src, T="bf16").axpy
        self.assertEqual(k.params[0], ("x", "*bf16"))
        k[tile.cdiv(n, 128)](xb, yb, out, 1.5, n)
        close(self, value(out), value(xb) * 1.5 + value(yb), 2 ** -7, 1e-6)
        with self.assertRaisesRegex(TypeError, r"argument 'x': kernel 'axpy' takes \*bf16, got an array of '<f4'"):
            k[1](x32, yb, out, 1.5, n)
        k = tile.compile(src, T=np.float16).axpy
        xh, yh = x32.astype(np.float16), y32.astype(np.float16)
        oh = poisoned(n, np.float16)
        k[tile.cdiv(n, 128)](xh, yh, oh, -0.5, n)
        close(self, oh, xh.astype(np.float64) * -0.5 + yh, 2 ** -10, 1e-3)

    def test_f8_pointers_take_bytes(self):
        """*f8e4m3 and *f8e5m2 take 1-byte arrays of codes (uint8, int8, void): decoded to f32 against NumPy."""
        src = """
        kernel dec(x: *T, out: *f32, n: i32, const T = f8e4m3) {
            let r = program_id(0) * 64 + arange(0, 64);
            store(out + r, cast(load(x + r, r < n, 0), f32), r < n);
        }
        """

        def decode(codes, ebits, mbits, bias):
            c = codes.astype(np.int64)
            sign = np.where(c >> 7, -1.0, 1.0)
            e, m = (c >> mbits) & ((1 << ebits) - 1), c & ((1 << mbits) - 1)
            return sign * np.where(e == 0, m / 2.0 ** mbits * 2.0 ** (1 - bias), (1 + m / 2.0 ** mbits) * 2.0 ** (e - bias))

        n = 130
        for t, ebits, mbits, bias, special in (("f8e4m3", 4, 3, 7, lambda c: (c & 0x7F) == 0x7F),
                                               ("f8e5m2", 5, 2, 15, lambda c: (c & 0x7C) == 0x7C)):
            k = tile.compile(src, T=t).dec
            self.assertEqual(k.params[0], ("x", "*" + t))
            codes = rng.integers(0, 256, n).astype(np.uint8)
            codes[special(codes)] = 0x11  # NaN and infinity codes left out
            want = decode(codes, ebits, mbits, bias)
            for view in (codes, codes.view(np.int8), codes.view("V1")):
                out = poisoned(n, np.float32)
                k[tile.cdiv(n, 64)](view, out, n)
                np.testing.assert_array_equal(out.astype(np.float64), want, err_msg="%s through %s" % (t, view.dtype))
            with self.assertRaisesRegex(TypeError, r"argument 'x': kernel 'dec' takes \*%s, got an array of '<f2'" % t):
                k[1](codes.view(np.float16), out, n // 2)

    def test_every_scalar_type(self):
        """Scalars of every type at the ends of their ranges arrive exactly; one past them is ValueError naming
        the argument; a float for an integer and text for a number are TypeError."""
        k = tile.compile(scalars_source()).sc
        outs = {t: (np.zeros(1, np.uint16) if t == "bf16" else np.zeros(1, np.bool_) if t == "i1"
                    else poisoned(1, dict(TYPES)[t])) for t in SCALAR_TYPES}
        ends = {"i8": (-128, 127), "u8": (0, 255), "i16": (-2**15, 2**15 - 1), "u16": (0, 2**16 - 1),
                "i32": (-2**31, 2**31 - 1), "u32": (0, 2**32 - 1), "i64": (-2**63, 2**63 - 1), "u64": (0, 2**64 - 1)}
        for end in (0, 1):
            vals = {t: e[end] for t, e in ends.items()}
            f = rng.standard_normal()
            vals.update(f16=np.float16(f), f32=np.float32(f), f64=f, bf16=-2.5, i1=bool(end))
            k[1](*[outs[t] for t in SCALAR_TYPES], *[vals[t] for t in SCALAR_TYPES])
            for t, (lo, hi) in ends.items():
                self.assertEqual(int(outs[t][0]), vals[t], t)
            self.assertEqual(float(outs["f16"][0]), float(np.float16(f)))
            self.assertEqual(float(outs["f32"][0]), float(np.float32(f)))
            self.assertEqual(float(outs["f64"][0]), f)
            self.assertEqual(int(outs["bf16"][0]), 0xC020)  # -2.5 in bf16
            self.assertEqual(bool(outs["i1"][0]), bool(end))
        base = {t: 0 for t in SCALAR_TYPES}
        base["i1"] = False
        for t, (lo, hi) in ends.items():
            for bad in (lo - 1, hi + 1):
                vals = dict(base, **{t: bad})
                with self.assertRaisesRegex(ValueError,
                                            r"argument 'v_%s': kernel 'sc' takes %s, got %d, which does not fit" % (t, t, bad)):
                    k[1](*[outs[u] for u in SCALAR_TYPES], *[vals[u] for u in SCALAR_TYPES])
        for t, bad, msg in (("i32", 1.0, "takes i32, got a float, not an integer"),
                            ("u8", np.float32(1), "takes u8, got <class 'numpy.float32'>, not an integer"),
                            ("f32", "1.0", "takes f32, got <class 'str'>, not a number"),
                            ("i1", "True", "takes i1, got <class 'str'>, not a bool"),
                            ("i64", [1], "takes i64, got <class 'list'>, not an integer")):
            vals = dict(base, **{t: bad})
            with self.assertRaisesRegex(TypeError, r"argument 'v_%s': kernel 'sc' %s" % (t, msg)):
                k[1](*[outs[u] for u in SCALAR_TYPES], *[vals[u] for u in SCALAR_TYPES])

    def test_strided_reversed_and_transposed_views(self):
        """The kernel gets a view's first element and indexes with the strides it is given (in elements)."""
        n = 97
        s = float(rng.standard_normal())
        big = rng.standard_normal(4 * n).astype(np.float32)
        for view, stride in ((big[::3], 3), (big[::-2], -2), (big[5:], 1)):
            m = min(n, view.shape[0])
            out = poisoned(m, np.float32)
            self.copy[tile.cdiv(m, 64)](view, out, m, stride, 1, s)
            close(self, out, view[:m].astype(np.float64) * s, 1e-6, 1e-6)
        # a column of a C-contiguous matrix, written into a column of another through its transposed view
        a = rng.standard_normal((45, 7)).astype(np.float32)
        o = poisoned((7, 45), np.float32)
        col = a[:, 3]
        self.copy[1](col, o.T[:, 2], 45, col.strides[0] // 4, o.T.strides[0] // 4, s)
        close(self, o[2], a[:, 3].astype(np.float64) * s, 1e-6, 1e-6)
        self.assertTrue(np.isnan(np.delete(o, 2, axis=0)).all())  # nothing else written

    def test_zero_d_and_empty_arrays(self):
        """A 0-d array is an array of one element for a pointer and a value for a scalar; an array of no elements
        passes a null pointer; a grid with a zero dimension launches nothing."""
        x = np.array(rng.standard_normal(), np.float32)
        out = poisoned((), np.float32)
        self.copy[1](x, out, np.array(1, np.int32), np.array(0), np.int64(0), np.array(2.0))
        self.assertEqual(float(out), float(x) * 2)
        empty = np.zeros(0, np.float32)
        self.copy[1](empty, empty, 0, 1, 1, 1.0)  # n = 0: nothing read or written
        y = rng.standard_normal(10).astype(np.float32)
        for grid in ((0,), (2, 0), (1, 1, 0), 0):
            out = poisoned(10, np.float32)
            self.copy[grid](y, out, 10, 1, 1, 1.0)
            self.assertTrue(np.isnan(out).all(), grid)
        with self.assertRaisesRegex(TypeError, r"argument 'n': kernel 'copy' takes i32, got <class 'numpy.ndarray'>, not an integer"):
            self.copy[1](x, out, np.array(1.5), 1, 1, 1.0)

    def test_numpy_scalar_is_no_array(self):
        """A NumPy scalar is a value, never an array: for a pointer it is a TypeError (its memory was passed, and a
        kernel wrote into the immutable scalar)."""
        out = poisoned(4, np.float32)
        with self.assertRaisesRegex(TypeError, r"argument 'x': kernel 'copy' takes \*f32, got the NumPy scalar "
                                               r"np.float32\(1.0\): a scalar is a value, not an array"):
            self.copy[1](np.float32(1.0), out, 1, 1, 1, 1.0)
        with self.assertRaisesRegex(TypeError, r"argument 'out': .*NumPy scalar"):
            self.copy[1](out, np.float32(0.0), 1, 1, 1, 1.0)
        with self.assertRaisesRegex(TypeError, r"data_ptr: np.float32\(2.0\) is a NumPy scalar, a value, not an array"):
            tile.data_ptr(np.float32(2.0))
        zd = np.array(2.0, np.float32)
        self.assertEqual(tile.data_ptr(zd), tile.data_ptr(zd.reshape(1)))  # a 0-d array is an array

    def test_malformed_array_interfaces(self):
        """An __array_interface__ that describes no array is an exception naming the argument (a negative dimension
        read as "no element" and passed a null pointer the kernel wrote through)."""
        x = np.zeros(10, np.float32)

        class Iface:
            def __init__(self, **kw):
                self.__array_interface__ = dict({"data": (x.ctypes.data, False), "typestr": "<f4", "shape": (10,), "version": 3}, **kw)

        for kw, exc, msg in (({"shape": (-5,)}, ValueError, r"dimension 0 of its shape is negative \(-5\)"),
                             ({"shape": ("a",)}, TypeError, r"shape holds something other than integers"),
                             ({"typestr": "<f"}, TypeError, r"unsupported element type '<f'"),
                             ({"data": (x.ctypes.data, True)}, ValueError, r"the array is read-only, and kernel 'copy' stores"),
                             ({"data": (8, False)}, ValueError, r"cannot use this host memory")):
            with self.assertRaisesRegex(exc, r"argument 'out': .*" + msg):
                self.copy[1](x, Iface(**kw), 10, 1, 1, 1.0)
        out = poisoned(10, np.float32)
        y = rng.standard_normal(10).astype(np.float32)
        self.copy[1](Iface(data=(y.ctypes.data, True)), Iface(data=(out.ctypes.data, False)), 10, 1, 1, 2.0)
        close(self, out, y.astype(np.float64) * 2, 1e-6, 1e-6)

    def test_tuple_arguments_are_flattened(self):
        """A tuple given by position is its elements, in order, as Triton passes a tuple argument: (p0, p1) and
        (s0, s1) fill two parameters each; nested tuples and namedtuples too."""
        n = 203
        a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
        s0, s1 = float(rng.standard_normal()), float(rng.standard_normal())
        want = a.astype(np.float64) * np.float32(s0) + b.astype(np.float64) * np.float32(s1)
        Pair = collections.namedtuple("Pair", "first second")
        forms = [lambda o: (((a, b), o, (s0, s1), n), {}),             # Triton's k[grid](ptrs, out, scales, n)
                 lambda o: ((((a, b), o), ((s0,), s1), n), {}),        # nested
                 lambda o: ((Pair(a, b), o, Pair(s0, s1)), {"n": n}),  # namedtuples, and a name after them
                 lambda o: ((a, (b, o, s0), s1, n), {})]               # across parameters of several kinds
        for form in forms:
            out = poisoned(n, np.float32)
            args, kw = form(out)
            self.pair[tile.cdiv(n, 64)](*args, **kw)
            close(self, out, want, 1e-6, 1e-6)
        out = poisoned(n, np.float32)
        with self.assertRaisesRegex(TypeError, r"kernel 'pair' takes 6 arguments \(.*\), got 7 after its tuple arguments were "
                                               r"flattened into their elements"):
            self.pair[1]((a, b, b), out, (s0, s1), n)
        with self.assertRaisesRegex(TypeError, r"kernel 'pair': argument 's1' is a tuple: a parameter takes one array or scalar"):
            self.pair[1](a, b, out, s0, s1=(s1,), n=n)
        with self.assertRaisesRegex(TypeError, r"kernel 'pair' takes 6 arguments .*, got 4$"):  # a list is no tuple
            self.pair[1]([a, b], out, [s0, s1], n)

    def test_tuple_parameters(self):
        """A kernel's tuple parameter, `ptrs: (*f32, *f32)`, takes Triton's tuple argument as written: the tuple is
        flattened into its elements' parameters (ptrs_0, ptrs_1, a nested one's sc_1_0...)."""
        src = """
kernel k(ptrs: (*f32, *f32), sc: (f32, (f32,)), out: *f32, n: i32) {
    let i = program_id(0) * 64 + arange(0, 64);
    let acc = zeros([64], f32);
    for p in ptrs {
        acc = acc + load(p + i, i < n, 0.0);
    }
    store(out + i, acc * sc[0] + sc[1][0], i < n);
}
"""
        mod = tile.compile(src, device=tile.device("emu"))
        self.assertEqual([p[0] for p in mod.k.params], ["ptrs_0", "ptrs_1", "sc_0", "sc_1_0", "out", "n"])
        n = 150
        a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
        out = poisoned(n, np.float32)
        mod.k[tile.cdiv(n, 64)]((a, b), (2.0, (0.5,)), out, n)
        close(self, out, (a.astype(np.float64) + b) * 2.0 + 0.5, 1e-6, 1e-6)

    def test_tensor_descriptor_argument(self):
        """tile.TensorDescriptor (and any object shaped as Triton's TensorDescriptor) given by position fills a
        `tensor_desc(...)` parameter's base, shape and strides: blocks straddling the edges of an odd-sized matrix and
        a transposed view load zeros outside and store nothing there, on sm_80 and sm_90a."""
        src = """
kernel scale(x: tensor_desc(T, [16, 32]), y: tensor_desc(f32, [16, 32]), s: f32, const T = f32) {
    let r = program_id(0) * 16 - 3;
    let c = program_id(1) * 32 - 5;
    store_tensor_descriptor(y, [r, c], load_tensor_descriptor(x, [r, c]) * s);
}
"""
        class Foreign:  # Triton's TensorDescriptor as an object of another class
            def __init__(self, base, shape, strides, block_shape):
                self.base, self.shape, self.strides, self.block_shape = base, shape, strides, block_shape

        for devname in ("emu", "emu:sm_90a"):
            for dt in (np.float32, np.float16):
                mod = tile.compile(src, device=tile.device(devname), T=dt)
                m, n = 37, 45
                xt = rng.standard_normal((n, m)).astype(dt)  # x is its transpose: strides (1, m)
                y = poisoned((m, n + 3), np.float32)          # a row stride of n + 3: the padding is never written
                xd = tile.TensorDescriptor(xt, (m, n), (1, m), (16, 32))
                yd = Foreign(y, [m, n], [n + 3, 1], [16, 32]) if dt == np.float16 else tile.TensorDescriptor.from_tensor(y[:, :n], [16, 32])
                grid = (tile.cdiv(m + 3, 16), tile.cdiv(n + 5, 32))
                mod.scale[grid](xd, yd, 1.5)
                # every in-bounds element is covered by exactly one block (the blocks start at -3, -5)
                close(self, y[:, :n], xt.T.astype(np.float64) * 1.5, 1e-6, 1e-6)
                self.assertTrue(np.isnan(y[:, n:]).all(), "a store past the descriptor's shape")
        self.assertEqual(mod.scale.params[:6], [("x", "*f16"), ("x_shape0", "i32"), ("x_shape1", "i32"), ("x_stride0", "i32"),
                                                ("x_stride1", "i32"), ("y", "*f32")])
        with self.assertRaisesRegex(ValueError, r"one entry per dim"):
            tile.TensorDescriptor(y, (m, n), (n,), (16, 32))
        with self.assertRaisesRegex(ValueError, r"shape sizes but 1 strides"):
            mod.scale[1](Foreign(xt, [m, n], [1], [16, 32]), yd, 1.0)

    def test_tuple_arguments_of_an_autotuned_kernel(self):
        src = """
        @config(B=32)
        @config(B=64)
        @tune_key(n)
        kernel pair(p0: *f32, p1: *f32, out: *f32, n: i32, const B: i32) {
            let r = program_id(0) * B + arange(0, B);
            store(out + r, load(p0 + r, r < n, 0.0) - load(p1 + r, r < n, 0.0), r < n);
        }
        """
        k = tile.compile(src, autotune=True).pair
        n = 100
        a, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
        out = poisoned(n, np.float32)
        k[lambda meta: (tile.cdiv(n, meta["B"]),)]((a, b), out, n)
        close(self, out, a.astype(np.float64) - b, 1e-6, 1e-6)
        self.assertEqual(list(k.cache), ["n=128"])  # the key read from the flattened arguments
        # asm of the configuration launched, or of one by index
        block = {32: "arange {start=0, end=32}", 64: "arange {start=0, end=64}"}
        self.assertIn(block[k.best_config["B"]], k.asm()["tir"])
        self.assertIn(block[64], k.asm(config=1)["tir"])
        self.assertIn(block[32], k.asm("n=16", config=0)["tir"])
        with self.assertRaisesRegex(ValueError, r"asm: config must be an index into .configs \(2 of them\), got 2"):
            k.asm(config=2)

    def test_read_only_array_where_the_kernel_stores(self):
        """A read-only array is fine where the kernel only reads; where it stores (a store or an atomic through that
        parameter) it is a ValueError naming the argument, and the memory is untouched (np.frombuffer over bytes
        was written, changing an immutable bytes object)."""
        n = 50
        x = rng.standard_normal(n).astype(np.float32)
        ro = x.copy()
        ro.flags.writeable = False
        out = poisoned(n, np.float32)
        self.copy[1](ro, out, n, 1, 1, 3.0)
        close(self, out, ro.astype(np.float64) * 3, 1e-6, 1e-6)
        raw = bytes(4 * n)
        for target in (ro, np.frombuffer(raw, np.float32), np.broadcast_to(np.zeros(1, np.float32), (n,))):
            with self.assertRaisesRegex(ValueError, r"argument 'out': the array is read-only, and kernel 'copy' stores through 'out'"):
                self.copy[1](x, target, n, 1, 1, 3.0)
        np.testing.assert_array_equal(ro, x)
        self.assertEqual(raw, bytes(4 * n))
        k = tile.compile("kernel count(c: *i32, x: *f32) { atomic_add(c, 1); store(x, 1.0); }\n").count
        c = np.zeros(1, np.int32)
        c.flags.writeable = False
        with self.assertRaisesRegex(ValueError, r"argument 'c': the array is read-only, and kernel 'count' stores through 'c'"):
            k[1](c, np.zeros(1, np.float32))
        c.flags.writeable = True
        k[3](c, np.zeros(1, np.float32))
        self.assertEqual(int(c[0]), 3)
        # NumPy gives a structured array's flags as 0 through __array_struct__: its writeable flag is still read
        h = tile.compile("kernel h(p: *bf16, v: bf16) { store(p, v); }\n").h
        q = np.zeros(1, np.uint16).view([("lo", "u1"), ("hi", "u1")])
        h[1](q, 1.5)
        self.assertEqual(int(q.view(np.uint16)[0]), 0x3FC0)
        q.flags.writeable = False
        with self.assertRaisesRegex(ValueError, r"argument 'p': the array is read-only"):
            h[1](q, 2.0)

    def test_read_only_array_stored_through_loops_and_ifs(self):
        """A pointer carried through a for or while loop, or chosen by an if, is followed back to its parameter: a
        store through it refuses a read-only array there (before: only straight-line pointers were followed, so these
        kernels wrote into a read-only array).  Pointers advance by loaded steps, which the compiler cannot turn into
        offsets from the parameter, so the loop really carries them.  A pointer that is one parameter or another is
        not refused, and the other parameter's read-only array is untouched."""
        m = tile.compile(CONTROL_FLOW)
        n = 37
        x = rng.standard_normal(n).astype(np.float32)
        steps = rng.integers(1, 4, n).astype(np.int32)
        pos = np.concatenate(([0], np.cumsum(steps)[:-1]))
        size = int(pos[-1]) + 5
        for name, extra in (("walk", ()), ("spin", ())):
            out = poisoned(size, np.float32)
            ro = out.copy()
            ro.flags.writeable = False
            with self.assertRaisesRegex(ValueError, r"argument 'out': the array is read-only, and kernel '%s' stores through 'out'" % name):
                getattr(m, name)[1](x, ro, steps, n)
            self.assertTrue(np.isnan(ro).all())
            xr, sr = x.copy(), steps.copy()
            xr.flags.writeable = sr.flags.writeable = False  # only read: fine
            getattr(m, name)[1](xr, out, sr, n)
            want = np.full(size, np.nan)
            want[pos] = x
            np.testing.assert_array_equal(out, want.astype(np.float32), err_msg=name)
        for n_, at in ((5, 2 + int(steps[0])), (2, 2)):
            c = np.zeros(8, np.float32)
            c.flags.writeable = False
            with self.assertRaisesRegex(ValueError, r"argument 'c': the array is read-only, and kernel 'pick' stores through 'c'"):
                m.pick[1](steps, c, n_)
            c.flags.writeable = True
            m.pick[1](steps, c, n_)
            want = np.zeros(8, np.float32)
            want[at] = 1
            np.testing.assert_array_equal(c, want)
        # a or b: either may be written, so a read-only array at either is refused (it was passed, and with n <= 3
        # written); writable, n > 3 writes b and n <= 3 writes a
        for n_, ro_name in ((5, "a"), (2, "a"), (5, "b")):
            a, b = np.zeros(4, np.float32), np.zeros(4, np.float32)
            (a if ro_name == "a" else b).flags.writeable = False
            with self.assertRaisesRegex(ValueError, r"argument '%s': the array is read-only, and kernel 'either' may store through '%s'"
                                        % (ro_name, ro_name)):
                m.either[1](a, b, n_)
            np.testing.assert_array_equal(a, [0, 0, 0, 0])
            np.testing.assert_array_equal(b, [0, 0, 0, 0])
        a, b = np.zeros(4, np.float32), np.zeros(4, np.float32)
        m.either[1](a, b, 5)
        np.testing.assert_array_equal(b, [7, 0, 0, 0])
        np.testing.assert_array_equal(a, [0, 0, 0, 0])
        m.either[1](a, b, 2)
        np.testing.assert_array_equal(a, [7, 0, 0, 0])

    def test_read_only_array_where_the_kernel_may_store(self):
        """Where the launcher cannot tell which parameter a store goes through, it takes each one it may be as
        written (docs/python.md): a select of two parameters, a pointer loaded from a table, returned by inline
        assembly, an address that went through a reduce's fn or integer arithmetic (any parameter then).  A
        read-only array there is refused and left alone (these kernels wrote into it: the store was not traced
        to any parameter, so nothing was refused); writable arrays run and give the right values."""
        m = tile.compile(MAY_STORE)
        x = rng.standard_normal(4).astype(np.float32)
        for name, params in (("sel", ("a", "b")), ("tab", ("t", "x")), ("asmp", ("a", "b")), ("red", ("a", "b")),
                             ("arith", ("a", "b"))):
            for ro_name in params:
                out = poisoned(4, np.float32)
                table = np.array([tile.data_ptr(out)], np.uint64)
                src = x.copy()
                args = {"sel": (out, src, 2), "tab": (table, src)}.get(name, (out, src))
                ro = args[params.index(ro_name)]
                ro.flags.writeable = False
                before = ro.copy()
                with self.assertRaisesRegex(ValueError, r"argument '%s': the array is read-only, and kernel '%s' may store through '%s'"
                                            % (ro_name, name, ro_name)):
                    getattr(m, name)[1](*args)
                np.testing.assert_array_equal(ro.view(np.uint8), before.view(np.uint8), err_msg=name)
                self.assertTrue(np.isnan(out).all(), name)
            out = poisoned(4, np.float32)
            table = np.array([tile.data_ptr(out)], np.uint64)
            getattr(m, name)[1](*{"sel": (out, x, 2), "tab": (table, x)}.get(name, (out, x)))
            at, add = {"sel": (0, None), "tab": (0, 1.0), "asmp": (0, 2.0), "red": (0, 3.0), "arith": (1, 4.0)}[name]
            want = 7.0 if add is None else float(x[0]) + add
            self.assertEqual(float(out[at]), np.float32(want), name)
            self.assertTrue(np.isnan(np.delete(out, at)).all(), name)

    def test_read_only_array_stored_through_a_tensor_map(self):
        """On sm_90a a tile stored by store_tensor_descriptor after a pipelined dot goes through a tensor map (a
        tma_store, no pointer store in the Tile IR): the map's base parameter is written, so a read-only array there
        is refused; the inputs may be read-only."""
        k = tile.compile(TMA_STORE, device=tile.device("emu:sm_90a")).epid
        self.assertIn("tma_store", k.asm()["tir"])
        a = rng.integers(-3, 4, (128, 64)).astype(np.float16)
        b = rng.integers(-3, 4, (64, 128)).astype(np.float16)
        a.flags.writeable = b.flags.writeable = False
        c = poisoned((128, 128), np.float32)
        c.flags.writeable = False
        with self.assertRaisesRegex(ValueError, r"argument 'c': the array is read-only, and kernel 'epid' stores through 'c'"):
            k[2](a, b, c)
        self.assertTrue(np.isnan(c).all())
        c.flags.writeable = True
        k[2](a, b, c)
        np.testing.assert_array_equal(c, a.astype(np.float64) @ b.astype(np.float64))

    def test_read_only_outputs_of_the_shipped_kernels(self):
        """gemm, attention, decode_paged and moe refuse a read-only out (they wrote into it)."""
        a, b = np.zeros((4, 16), np.float16), np.zeros((16, 8), np.float16)
        out = np.zeros((4, 8), np.float16)
        out.flags.writeable = False
        with self.assertRaisesRegex(ValueError, r"argument 'out': the array is read-only, and gemm writes it"):
            tile.gemm(a, b, out=out)
        q = np.zeros((1, 4, 2, 16), np.float16)
        o = np.zeros_like(q)
        o.flags.writeable = False
        with self.assertRaisesRegex(ValueError, r"argument 'out': the array is read-only, and attention writes it"):
            tile.attention(q, q, q, out=o)
        kc = np.zeros((2, 16, 2, 16), np.float16)
        with self.assertRaisesRegex(ValueError, r"argument 'out': the array is read-only, and decode_paged writes it"):
            tile.decode_paged(q[:, :1], kc, kc, np.zeros((1, 1), np.int32), np.array([3], np.int32), out=o[:, :1])
        x, w1, w2 = np.zeros((3, 16), np.float16), np.zeros((2, 32, 16), np.float16), np.zeros((2, 16, 16), np.float16)
        mo = np.zeros((3, 16), np.float32)
        mo.flags.writeable = False
        with self.assertRaisesRegex(ValueError, r"argument 'out': the array is read-only, and moe writes it"):
            tile.moe(x, w1, w2, 1, router_logits=np.zeros((3, 2), np.float32), out=mo)
        ids = np.zeros((3, 1), np.int32)
        ids.flags.writeable = False
        with self.assertRaisesRegex(ValueError, r"argument 'topk_ids': the array is read-only, and moe \(with router_logits\)"):
            tile.moe(x, w1, w2, 1, router_logits=np.zeros((3, 2), np.float32), topk_ids=ids, topk_weights=np.zeros((3, 1), np.float32))

    def test_asm(self):
        """kernel.asm(variant) is Triton's compiled.asm: the Tile IR, LLVM IR and PTX a launch of that variant runs.
        The PTX, loaded with load_ptx, computes what the kernel does."""
        k = tile.compile(pathlib.Path(KERNELS) / "add.tile", BLOCK=64, num_warps=2).add  # an os.PathLike path
        self.assertEqual(k.num_warps, 2)
        generic, n16 = k.asm(), k.asm("n=16")
        self.assertEqual(sorted(generic), ["llir", "ptx", "tir"])
        self.assertIn("kernel @add(", generic["tir"])
        self.assertNotIn("%n: i32 #div16", generic["tir"])
        self.assertIn("%n: i32 #div16", n16["tir"])
        self.assertIn("define", generic["llir"])
        ptx = generic["ptx"]
        self.assertIn(".entry add(", ptx)
        self.assertIn(".target %s" % tile.device().arch, ptx)
        self.assertIn(".reqntid 64", ptx)
        n = 150
        x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
        out = poisoned(n, np.float32)
        tile.load_ptx(ptx).add[tile.cdiv(n, 64)](x, y, out, n)
        close(self, out, x.astype(np.float64) + y, 1e-6, 1e-6)
        self.assertIn(".global .align 16 add_param_0", ptx)
        self.assertIn(".global .align 1 add_param_0", k.asm("no_align_ptrs")["ptx"])  # a pointer of any alignment
        for bad in ("n=2", "x=16", "nope=1", "n"):
            with self.assertRaisesRegex(ValueError, r"asm: variant '%s'" % bad):
                k.asm(bad)
        with self.assertRaisesRegex(tile.CompileError, r"'x' is None in this compile"):
            k.asm("x=None")

    def test_compile_cache(self):
        """A variant compiles on first use through the context's memory and disk caches and is kept in the Kernel:
        the same source compiled again on the device is a memory hit, on a new device over the same cache folder a
        disk hit; another specialization is another compile."""
        with tempfile.TemporaryDirectory() as d:
            dev = tile.Device("emu", cache_dir=d)
            x = rng.standard_normal(40).astype(np.float32)
            out = poisoned(40, np.float32)
            k = tile.compile(COPY, device=dev).copy
            k[1](x, out, 40, 1, 1, 1.0)
            k[1](x, out, 40, 1, 1, 1.0)  # kept in the Kernel: the cache is not asked again
            s = dev.stats()
            self.assertEqual((s["compiles"], s["memory_hits"], s["disk_hits"], s["launches"]), (1, 0, 0, 2))
            tile.compile(COPY, device=dev).copy[1](x, out, 40, 1, 1, 1.0)
            self.assertEqual(dev.stats()["memory_hits"], 1)
            k[1](x, out, 32, 1, 1, 1.0)  # n=32: the n=16 variant, compiled
            self.assertEqual(dev.stats()["compiles"], 2)
            self.assertEqual(sorted(k.variants), ["n=16 sx=1 so=1", "sx=1 so=1"])  # strides of 1 specialize too
            dev2 = tile.Device("emu", cache_dir=d)
            out = poisoned(40, np.float32)
            tile.compile(COPY, device=dev2).copy[1](x, out, 40, 1, 1, -1.0)
            s = dev2.stats()
            self.assertEqual((s["compiles"], s["disk_hits"]), (0, 1))
            close(self, out, -x.astype(np.float64), 0, 0)

    def test_compile_error_text(self):
        """docs/python.md's example, exactly: file, line and column, the line and a caret under the column."""
        src = "kernel broken(x: *f32) {\n    let a = 1;\n    store(x, undefined_name);\n}\n"
        want = ":3:14: error: unknown name 'undefined_name'\n      store(x, undefined_name);\n               ^\n"
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "broken.tile")
            with open(path, "w") as f:
                f.write(src)
            with self.assertRaises(tile.CompileError) as cm:
                tile.compile(path)
        self.assertTrue(str(cm.exception).endswith("broken.tile" + want), str(cm.exception))
        self.assertEqual(cm.exception.diagnostics, str(cm.exception))
        with self.assertRaises(tile.CompileError) as cm:
            tile.compile(src)
        self.assertEqual(str(cm.exception), "<source>" + want)

    def test_compile_error_in_source_order(self):
        """CompileError lists the errors in source order, each with its notes after it: the lexer's error at line 5
        after the parser's at lines 2 and 4 (it was listed first: the lexer reads the whole file before the parser);
        an error found while inlining f (line 2, its note at the call) before the unknown name at line 6."""
        src = "kernel k(x: *f32) {\n    let a = ;\n    store(x, 1.0);\n    let b = 3 @ 4;\n    let c = \"abc;\n}\n"
        with self.assertRaises(tile.CompileError) as cm:
            tile.compile(src)
        lines = [l.split(": ")[0] for l in str(cm.exception).splitlines() if l.startswith("<source>:")]
        self.assertEqual(lines, ["<source>:2:13", "<source>:4:15", "<source>:5:13"], str(cm.exception))
        src = ("fn f(x) {\n    continue;\n    return x;\n}\nkernel k(p: *f32) {\n    store(p, undefined_name);\n"
               "    for i in range(3) { let y = f(i); }\n}\n")
        with self.assertRaises(tile.CompileError) as cm:
            tile.compile(src)
        heads = [l.split(": ")[0] + " " + l.split(": ")[1] for l in str(cm.exception).splitlines() if l.startswith("<source>:")]
        self.assertEqual(heads, ["<source>:2:5 error", "<source>:7:33 note", "<source>:3:5 warning", "<source>:6:14 error"],
                         str(cm.exception))

    def test_module_and_kernel_attributes(self):
        mod = tile.compile(PAIR + COPY, num_stages=2)
        self.assertEqual(len(mod), 2)
        self.assertEqual([k.name for k in mod], ["pair", "copy"])
        self.assertIs(mod["copy"], mod.copy)
        with self.assertRaisesRegex(KeyError, r"no kernel named 'nope' \(kernels: pair, copy\)"):
            mod["nope"]
        self.assertEqual(mod.copy.num_stages, 2)
        self.assertEqual(mod.copy.meta["num_stages"], 2)
        self.assertEqual(mod.copy.signature, "*f32:16, *f32:16, i32, i32, i32, f32")
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "k.tile")
            with open(path, "w") as f:
                f.write(COPY)
            self.assertEqual(tile.compile(pathlib.Path(path)).source, path)
        with self.assertRaisesRegex(TypeError, r"compile: arch must be a target's name such as 'sm_90a', or None, got 'int'"):
            tile.compile(COPY, arch=90)
        with self.assertRaisesRegex(tile.Error, r"unknown arch 'sm_1'"):
            tile.compile(COPY, arch="sm_1")
        # an arch the device cannot load: tile.Error at the first launch, which loads the code (asm() still works)
        newer = tile.compile(COPY, arch="sm_90a", device="emu:sm_80").copy
        self.assertIn(".target sm_90a", newer.asm()["ptx"])
        with self.assertRaisesRegex(tile.Error, r"kernel 'copy' \(sx=1 so=1\): .*emu:sm_80 cannot load code for sm_90a"):
            newer[1](np.zeros(4, np.float32), np.zeros(4, np.float32), 4, 1, 1, 1.0)
        with self.assertRaisesRegex(TypeError, r"constexpr S: a define cannot be a tuple: .*`const S = \(64, 32\)`"):
            tile.compile(COPY, S=(64, 32))
        # specialize=False: integers equal to 1 or multiples of 16 compile no variant of their own
        k = tile.compile(COPY, specialize=False).copy
        x = rng.standard_normal(32).astype(np.float32)
        out = poisoned(32, np.float32)
        self.assertIsNone(k[1](x, out, 32, 1, 1, 1.0))  # a launch returns None: the arrays hold the results
        np.testing.assert_array_equal(out, x)
        self.assertEqual(k.variants, [""])

    def test_parameter_limit(self):
        """docs/python.md: a compiled kernel takes at most 64 run-time parameters (a None pointer is one bit of a
        64-bit mask per variant); 64 run, 65 are refused when compiled, naming the kernel and the limit."""
        def source(n):  # o[0] = a0 + 2 * a1 + ... + (n - 1) * a(n-2), n parameters in all
            params = ", ".join("a%d: f32" % i for i in range(n - 1))
            return "kernel many(o: *f32, %s) {\n    store(o, %s);\n}\n" % (
                params, " + ".join("a%d * %d.0" % (i, i + 1) for i in range(n - 1)))
        k = tile.compile(source(64)).many
        self.assertEqual(len(k.params), 64)
        vals = rng.integers(-8, 8, 63).astype(np.float64)
        out = poisoned(1, np.float32)
        k[1](out, *[float(v) for v in vals])
        self.assertEqual(float(out[0]), float(sum(v * (i + 1) for i, v in enumerate(vals))))  # small integers: exact
        with self.assertRaisesRegex(ValueError, r"^kernel 'many': more than 64 parameters$"):
            tile.compile(source(65))


if __name__ == "__main__":
    unittest.main()
