"""The package's cuda paths, run without a GPU over tests/fake_cuda_emu.c.

The C test suite builds that stand-in CUDA driver as build/tests/fake_cuda_emu/libcuda.so.1: a libcuda.so.1 whose
kernels run on the PTX emulator, whose device memory is the emulator's bounds-checked allocations, and which
refuses what the CUDA Driver API documents it refuses.  test_cuda_paths_over_the_stand_in runs this file again in
a subprocess with the stand-in in LD_PRELOAD, so the runtime's dlopen("libcuda.so.1") finds it there (a library
already loaded answers to its soname) and tile.device("cuda") is a real "cuda" device on it, while the rest of
the suite keeps this process's own path.  In that subprocess the cases below run:
  - a user kernel on cuda with __cuda_array_interface__ arrays and stream= (a CU_STREAM_NON_BLOCKING stream
    made with cuStreamCreate, passed as an int): its results appear only once that stream is synchronized;
    an array whose interface names another stream is waited for there (the protocol's "stream");
  - host (NumPy) arrays on cuda: registered, read in place, the call synchronizes before it returns, and the
    registration ends when the array dies;
  - tile.gemm on cuda, f16 at sizes that are not multiples of its tiles, and tile.attention (causal, grouped
    heads, on a non-blocking stream), against float64;
  - DLPack kDLCUDA tensors (their deleters called once, their producers given the call's stream);
  - errors: host memory posing as device memory, device memory on the emulator, a DLPack tensor of another
    device, a DLPack device type that is neither CPU nor CUDA.
Every output is poisoned first; at the end the stand-in must have refused nothing.  This proves the package's
pointers, streams and device types reach the driver as the CUDA Driver API wants them; nothing about a GPU's
timing or hardware (docs/testing.md)."""
import ctypes
import gc
import os
import subprocess
import sys

import numpy as np
import pytest

import tile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
STAND_IN = os.path.join(ROOT, "build", "tests", "fake_cuda_emu", "libcuda.so.1")


def _stand_in_loaded():
    """The stand-in when this process runs over it (LD_PRELOAD), else None."""
    try:
        lib = ctypes.CDLL("libcuda.so.1", mode=os.RTLD_NOLOAD)
    except OSError:
        return None
    return lib if hasattr(lib, "fake_cuda_emu_set_cc") else None


DRV = _stand_in_loaded()

if DRV is None:
    def test_cuda_paths_over_the_stand_in():
        if not os.path.exists(STAND_IN):
            pytest.skip("the stand-in CUDA driver was not built (%s: the C tests' fake_cuda_emu target)" % STAND_IN)
        # after what is preloaded already (scripts/sanitize_python.sh preloads libasan, which must come first)
        env = dict(os.environ, LD_PRELOAD=":".join(filter(None, (os.environ.get("LD_PRELOAD"), STAND_IN))))
        env.pop("TILE_DEVICE", None)
        r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", os.path.abspath(__file__)],
                           env=env, capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, "the cuda cases over the stand-in failed:\n" + r.stdout + r.stderr
        assert " passed" in r.stdout and "skipped" not in r.stdout, r.stdout
else:
    CU_STREAM_NON_BLOCKING = 1
    u64 = ctypes.c_ulonglong

    def _ck(r, what):
        if r != 0:
            raise RuntimeError("%s: CUresult %d" % (what, r))

    DRV.fake_cuda_emu_last_refusal.restype = ctypes.c_char_p
    DRV.cuMemcpyHtoD_v2.argtypes = [u64, ctypes.c_void_p, ctypes.c_size_t]
    DRV.cuMemcpyDtoH_v2.argtypes = [ctypes.c_void_p, u64, ctypes.c_size_t]
    DRV.cuMemAlloc_v2.argtypes = [ctypes.POINTER(u64), ctypes.c_size_t]
    DRV.cuMemFree_v2.argtypes = [u64]
    DRV.cuStreamSynchronize.argtypes = [ctypes.c_void_p]
    DRV.cuStreamDestroy_v2.argtypes = [ctypes.c_void_p]
    DRV.cuCtxSetCurrent.argtypes = [ctypes.c_void_p]

    def live():
        out = (ctypes.c_int * 6)()
        DRV.fake_cuda_emu_live(out)
        return dict(zip(("allocations", "modules", "streams", "events", "registrations", "contexts"), out))

    @pytest.fixture(scope="module")
    def dev():
        DRV.fake_cuda_emu_set_cc(80)
        d = tile.device("cuda")
        assert not d.is_emulator and d.name.startswith("cuda")
        # this thread's current context, for the test's own cuMemAlloc and copies: the primary one, the one
        # tile.device("cuda") retained (docs/runtime.md)
        _ck(DRV.cuInit(0), "cuInit")
        ctx = ctypes.c_void_p()
        _ck(DRV.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0), "cuDevicePrimaryCtxRetain")
        _ck(DRV.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
        yield d
        gc.collect()
        # nothing the cases made is left in the driver: the device keeps its loaded modules, and the one event its
        # waits for __cuda_array_interface__ streams used (a destroyed tile_event's device event is kept for the
        # next tile_event_create until the context goes, runtime/streams.c: two waits, one event)
        left = live()
        assert (left["allocations"], left["streams"], left["registrations"]) == (0, 0, 0), left
        assert left["events"] <= 1, left
        DRV.cuDevicePrimaryCtxRelease_v2(0)

    @pytest.fixture(autouse=True)
    def no_refusal():
        before = DRV.fake_cuda_emu_refusals()
        yield
        assert DRV.fake_cuda_emu_refusals() == before, "the driver refused: %s" % DRV.fake_cuda_emu_last_refusal()

    class DeviceArray:
        """A NumPy array's copy in the stand-in's device memory (cuMemAlloc), shown by __cuda_array_interface__
        (version 3) and by DLPack as kDLCUDA (device_id: what __dlpack_device__ says)."""

        def __init__(self, host, device_id=0, stream=None):
            self.host = np.ascontiguousarray(host)
            self.shape, self.dtype, self.device_id, self.stream = self.host.shape, self.host.dtype, device_id, stream
            p = u64()
            _ck(DRV.cuMemAlloc_v2(ctypes.byref(p), max(self.host.nbytes, 1)), "cuMemAlloc")
            self.ptr = p.value
            _ck(DRV.cuMemcpyHtoD_v2(self.ptr, self.host.ctypes.data, self.host.nbytes), "cuMemcpyHtoD")
            self.deleted = 0

        @property
        def __cuda_array_interface__(self):
            return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False), "version": 3,
                    "strides": None, "stream": self.stream}

        def get(self):
            """The device bytes now (a synchronous copy: it waits for the default and blocking streams only)."""
            out = np.empty(self.shape, self.dtype)
            _ck(DRV.cuMemcpyDtoH_v2(out.ctypes.data, self.ptr, out.nbytes), "cuMemcpyDtoH")
            return out

        def free(self):
            _ck(DRV.cuMemFree_v2(self.ptr), "cuMemFree")

    class DLDevice(ctypes.Structure):
        _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]

    class DLDataType(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]

    class DLTensor(ctypes.Structure):
        _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                    ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                    ("byte_offset", ctypes.c_uint64)]

    class DLManagedTensor(ctypes.Structure):
        pass

    DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
    DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", DELETER)]
    _capsule_new = ctypes.pythonapi.PyCapsule_New
    _capsule_new.restype = ctypes.py_object
    _capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    kDLCUDA, kDLOpenCL = 2, 4

    class DLPackArray:
        """DLPack's producer side over a DeviceArray: a fresh 'dltensor' capsule per __dlpack__ call, whose
        deleter counts its calls; .streams: the stream= each call was given (DLPack's stream protocol)."""

        def __init__(self, arr, device_type=kDLCUDA):
            self.arr, self.device_type, self.deleted, self.streams = arr, device_type, 0, []
            self._keep = []

        def __dlpack_device__(self):
            return (self.device_type, self.arr.device_id)

        def __dlpack__(self, stream=None):
            self.streams.append(stream)
            a = self.arr
            shape = (ctypes.c_int64 * len(a.shape))(*a.shape)
            m = DLManagedTensor()
            m.dl_tensor.data = a.ptr
            m.dl_tensor.device = DLDevice(self.device_type, a.device_id)
            m.dl_tensor.ndim = len(a.shape)
            m.dl_tensor.dtype = DLDataType({"f": 2, "i": 0, "u": 1}[a.dtype.kind], a.dtype.itemsize * 8, 1)
            m.dl_tensor.shape = shape

            def deleter(p):
                self.deleted += 1

            d = DELETER(deleter)
            m.deleter = d
            self._keep.append((m, shape, d))
            return _capsule_new(ctypes.addressof(m), b"dltensor", None)

    rng = np.random.default_rng(int.from_bytes(os.urandom(4), "little"))

    ADD = """
kernel add(x: *f32, y: *f32, out: *f32, n: i32, const BLOCK: i32) {
    let offs = program_id(0) * BLOCK + arange(0, BLOCK);
    store(out + offs, load(x + offs, offs < n, 0.0) + 2.0 * load(y + offs, offs < n, 0.0), offs < n);
}
"""

    def test_kernel_with_cuda_array_interface_on_a_stream(dev):
        n = 1001
        x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
        dx, dy, dout = DeviceArray(x), DeviceArray(y), DeviceArray(np.full(n, np.nan, np.float32))
        k = tile.compile(ADD, BLOCK=128, device=dev).add
        s = ctypes.c_void_p()
        _ck(DRV.cuStreamCreate(ctypes.byref(s), CU_STREAM_NON_BLOCKING), "cuStreamCreate")
        launches = DRV.fake_cuda_emu_launches()
        k[(tile.cdiv(n, 128),)](dx, dy, dout, n, stream=s.value)
        # queued on that stream, which a synchronous copy does not wait for: not run, not written yet
        assert np.isnan(dout.get()).all()
        assert DRV.fake_cuda_emu_launches() == launches
        _ck(DRV.cuStreamSynchronize(s), "cuStreamSynchronize")
        assert DRV.fake_cuda_emu_launches() == launches + 1
        np.testing.assert_allclose(dout.get(), x.astype(np.float64) + 2.0 * y, rtol=1e-6, atol=1e-6)
        # the default stream (stream=None and stream=0): done when the synchronous copy returns
        for stream in (None, 0):
            dout2 = DeviceArray(np.full(n, np.nan, np.float32))
            k[(tile.cdiv(n, 128),)](dy, dx, dout2, n, stream=stream)
            np.testing.assert_allclose(dout2.get(), y.astype(np.float64) + 2.0 * x, rtol=1e-6, atol=1e-6)
            dout2.free()
        # a host array for out on the same stream: registered, written in place, done when the call returns
        regs = live()["registrations"]
        out = np.full(n, np.nan, np.float32)
        k[(tile.cdiv(n, 128),)](dx, dy, out, n, stream=s.value)
        np.testing.assert_allclose(out, x.astype(np.float64) + 2.0 * y, rtol=1e-6, atol=1e-6)
        assert live()["registrations"] == regs + 1
        del out
        gc.collect()
        assert live()["registrations"] == regs, "the host array's registration outlived it"
        _ck(DRV.cuStreamDestroy_v2(s), "cuStreamDestroy")
        for a in (dx, dy, dout):
            a.free()

    def test_cuda_array_interface_stream_is_waited_for(dev):
        n = 300
        x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
        dx, dy = DeviceArray(x), DeviceArray(y)
        k = tile.compile(ADD, BLOCK=128, device=dev).add
        s1, s2 = ctypes.c_void_p(), ctypes.c_void_p()
        for s in (s1, s2):
            _ck(DRV.cuStreamCreate(ctypes.byref(s), CU_STREAM_NON_BLOCKING), "cuStreamCreate")
        want = x.astype(np.float64) + 4.0 * y
        # mid is written on s1 and shown with stream=s1: a launch on s2, then on the default stream, must come after
        for consumer in (s2.value, None):
            mid = DeviceArray(np.full(n, np.nan, np.float32), stream=s1.value)
            out = DeviceArray(np.full(n, np.nan, np.float32))
            k[(tile.cdiv(n, 128),)](dx, dy, mid, n, stream=s1.value)
            k[(tile.cdiv(n, 128),)](mid, dy, out, n, stream=consumer)
            if consumer:
                _ck(DRV.cuStreamSynchronize(s2), "cuStreamSynchronize")
            # (on the default stream the synchronous copy waits for it, not for s1)
            np.testing.assert_allclose(out.get(), want, rtol=1e-5, atol=1e-5)
            mid.free()
            out.free()
        # the producer's stream being the call's own: nothing to wait for
        mid = DeviceArray(np.full(n, np.nan, np.float32), stream=1)
        out = DeviceArray(np.full(n, np.nan, np.float32))
        k[(tile.cdiv(n, 128),)](dx, dy, mid, n)
        k[(tile.cdiv(n, 128),)](mid, dy, out, n, stream=0)
        np.testing.assert_allclose(out.get(), want, rtol=1e-5, atol=1e-5)
        for s in (s1, s2):
            _ck(DRV.cuStreamSynchronize(s), "cuStreamSynchronize")
            _ck(DRV.cuStreamDestroy_v2(s), "cuStreamDestroy")
        for a in (dx, dy, mid, out):
            a.free()

    def test_gemm_f16_on_cuda(dev):
        for m, n, k_ in ((67, 53, 45), (130, 29, 70)):
            a = rng.standard_normal((m, k_)).astype(np.float16)
            b = rng.standard_normal((k_, n)).astype(np.float16)
            ref = a.astype(np.float64) @ b.astype(np.float64)
            da, db = DeviceArray(a), DeviceArray(b)
            dc = DeviceArray(np.full((m, n), np.nan, np.float32))
            res = tile.gemm(da, db, out=dc, device=dev)
            assert res is dc
            np.testing.assert_allclose(dc.get(), ref, rtol=1e-3, atol=1e-3)
            # f16 out, on a stream, with the host arrays' own path for a and b
            s = ctypes.c_void_p()
            _ck(DRV.cuStreamCreate(ctypes.byref(s), 0), "cuStreamCreate")
            c16 = np.full((m, n), np.nan, np.float16)
            tile.gemm(a, b, out=c16, stream=s.value, device=dev)
            np.testing.assert_allclose(c16.astype(np.float64), ref, rtol=2e-3, atol=2e-2)
            _ck(DRV.cuStreamDestroy_v2(s), "cuStreamDestroy")
            for d in (da, db, dc):
                d.free()

    def test_attention_on_cuda_on_a_stream(dev):
        b, sq, sk, hq, hkv, d = 1, 37, 45, 2, 1, 64
        q = rng.standard_normal((b, sq, hq, d)).astype(np.float16)
        k = rng.standard_normal((b, sk, hkv, d)).astype(np.float16)
        v = rng.standard_normal((b, sk, hkv, d)).astype(np.float16)
        qf, kf, vf = (t.astype(np.float64) for t in (q, k, v))
        kf, vf = np.repeat(kf, hq // hkv, axis=2), np.repeat(vf, hq // hkv, axis=2)
        sc = np.einsum("bqhd,bkhd->bhqk", qf, kf) / np.sqrt(d)
        visible = np.arange(sk)[None, :] <= np.arange(sq)[:, None] + sk - sq
        sc = np.where(visible, sc, -np.inf)
        p = np.exp(sc - sc.max(-1, keepdims=True))
        ref = np.einsum("bhqk,bkhd->bqhd", p / p.sum(-1, keepdims=True), vf)
        dq, dk, dv = DeviceArray(q), DeviceArray(k), DeviceArray(v)
        do = DeviceArray(np.full(q.shape, np.nan, np.float16))
        s = ctypes.c_void_p()
        _ck(DRV.cuStreamCreate(ctypes.byref(s), CU_STREAM_NON_BLOCKING), "cuStreamCreate")
        assert tile.attention(dq, dk, dv, causal=True, out=do, stream=s.value, device=dev) is do
        assert np.isnan(do.get()).all(), "ran on the default stream, not the one given"
        _ck(DRV.cuStreamSynchronize(s), "cuStreamSynchronize")
        np.testing.assert_allclose(do.get().astype(np.float64), ref, rtol=1e-2, atol=1e-2)
        _ck(DRV.cuStreamDestroy_v2(s), "cuStreamDestroy")
        for t in (dq, dk, dv, do):
            t.free()

    def test_dlpack_cuda_tensors(dev):
        n = 777
        x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
        dx, dy, dout = DeviceArray(x), DeviceArray(y), DeviceArray(np.full(n, np.nan, np.float32))
        tx, ty, tout = DLPackArray(dx), DLPackArray(dy), DLPackArray(dout)
        k = tile.compile(ADD, BLOCK=256, device=dev).add
        k[(tile.cdiv(n, 256),)](tx, ty, tout, n)
        np.testing.assert_allclose(dout.get(), x.astype(np.float64) + 2.0 * y, rtol=1e-6, atol=1e-6)
        assert (tx.deleted, ty.deleted, tout.deleted) == (1, 1, 1)
        # each producer was given the consumer's stream: 1, DLPack's legacy default stream, for the default
        assert tx.streams == ty.streams == tout.streams == [1]
        # on a stream: that stream's handle, and the result there once it is synchronized
        s = ctypes.c_void_p()
        _ck(DRV.cuStreamCreate(ctypes.byref(s), CU_STREAM_NON_BLOCKING), "cuStreamCreate")
        out2 = DeviceArray(np.full(n, np.nan, np.float32))
        t2 = DLPackArray(out2)
        k[(tile.cdiv(n, 256),)](ty, tx, t2, n, stream=s.value)
        assert np.isnan(out2.get()).all()
        _ck(DRV.cuStreamSynchronize(s), "cuStreamSynchronize")
        np.testing.assert_allclose(out2.get(), y.astype(np.float64) + 2.0 * x, rtol=1e-6, atol=1e-6)
        assert tx.streams == [1, s.value] and t2.streams == [s.value] and t2.deleted == 1
        # tile.gemm takes them too, with its stream=
        a = rng.standard_normal((19, 33)).astype(np.float16)
        b = rng.standard_normal((33, 21)).astype(np.float16)
        da, db, dc = DeviceArray(a), DeviceArray(b), DeviceArray(np.full((19, 21), np.nan, np.float32))
        ta, tb, tc = DLPackArray(da), DLPackArray(db), DLPackArray(dc)
        assert tile.gemm(ta, tb, out=tc, stream=s.value, device=dev) is tc
        _ck(DRV.cuStreamSynchronize(s), "cuStreamSynchronize")
        np.testing.assert_allclose(dc.get(), a.astype(np.float64) @ b.astype(np.float64), rtol=1e-3, atol=1e-3)
        assert ta.streams == tb.streams == tc.streams == [s.value]
        _ck(DRV.cuStreamDestroy_v2(s), "cuStreamDestroy")
        for t in (out2, da, db, dc):
            t.free()
        for a in (dx, dy, dout):
            a.free()

    def test_errors(dev):
        n = 100
        k = tile.compile(ADD, BLOCK=128, device=dev).add
        x = DeviceArray(np.zeros(n, np.float32))
        out = DeviceArray(np.full(n, np.nan, np.float32))
        # host memory posing as device memory: the runtime asks the driver and refuses it before the device sees it
        host = np.zeros(n, np.float32)

        class HostAsDevice:
            __cuda_array_interface__ = {"shape": (n,), "typestr": "<f4", "data": (host.ctypes.data, False),
                                        "version": 3, "strides": None}

        launches = DRV.fake_cuda_emu_launches()
        with pytest.raises(tile.Error, match=r"launch of 'add': argument 2 'y' \(0x[0-9a-f]+\) is a pointer into no allocation "
                                             r"of this context \(invalid value\)"):
            k[(1,)](x, HostAsDevice(), out, n)
        # device memory on the emulator
        with pytest.raises(TypeError, match=r"argument 'y': kernel 'add' takes \*f32: CUDA device memory cannot be used on the emulator"):
            tile.compile(ADD, BLOCK=128, device="emu").add[(1,)](host, x, host, n)
        # a DLPack tensor of another CUDA device than the launch's
        with pytest.raises(ValueError, match=r"argument 'x': kernel 'add' takes \*f32: a DLPack tensor on cuda:1, the launch is on cuda:0"):
            k[(1,)](DLPackArray(_other(x)), x, out, n)
        # a device type that is neither CPU nor CUDA
        with pytest.raises(TypeError, match=r"argument 'x': kernel 'add' takes \*f32: DLPack device type 4 is neither CPU nor CUDA"):
            k[(1,)](DLPackArray(x, kDLOpenCL), x, out, n)
        # a __cuda_array_interface__ stream the protocol disallows
        x.stream = 0
        with pytest.raises(ValueError, match=r"argument 'x': kernel 'add' takes \*f32: its __cuda_array_interface__ 'stream' is 0, "
                                             r"not a stream"):
            k[(1,)](x, x, out, n)
        x.stream = None
        # a CUDA tensor of the wrong element type: refused, and its capsule's deleter still called
        x64 = DeviceArray(np.zeros(n, np.float64))
        t64 = DLPackArray(x64)
        with pytest.raises(TypeError, match=r"argument 'y': kernel 'add' takes \*f32, got an array of 'float64'"):
            k[(1,)](x, t64, out, n)
        assert t64.deleted == 1
        assert DRV.fake_cuda_emu_launches() == launches
        assert np.isnan(out.get()).all()
        for a in (x, out, x64):
            a.free()

    def _other(arr):
        """arr's memory, claimed by DLPack to be on device 1."""
        o = DeviceArray.__new__(DeviceArray)
        o.__dict__.update(arr.__dict__)
        o.device_id = 1
        return o
