"""tile: compile and launch .tile kernels from Python, Triton-style.

    import numpy as np, tile
    mod = tile.compile("kernels/add.tile", BLOCK=256)
    x = np.random.rand(1000).astype(np.float32); y = np.ones_like(x); out = np.empty_like(x)
    mod.add[lambda meta: (tile.cdiv(x.size, meta["BLOCK"]),)](x, y, out, x.size)

The work is done by the C extension tile._tile (stable ABI) over libtile,
which ships inside this package (tile/lib, with its data in tile/share/tile).
Arrays: NumPy (host memory, used in place on the emulator), anything with
__cuda_array_interface__ or DLPack (torch, cupy).  See docs/python.md.
"""
import operator as _operator
import os as _os
import re as _re
import sys as _sys
import time as _time
import warnings as _warnings

from . import _tile
from ._tile import CompileError, Device, Error, Kernel

__all__ = ["device", "compile", "Module", "Kernel", "Autotuned", "Device", "Error", "CompileError", "cdiv", "next_power_of_2", "gemm", "attention",
           "decode_paged", "moe", "data_dir", "load_ptx", "PtxModule",
           "data_ptr", "tensor_map", "tensor_map_im2col", "TensorMap", "TensorDescriptor", "version"]
__version__ = _tile.version()

_devices = {}
_ACTIVATIONS = {None: 0, "none": 0, "relu": 1, "gelu": 2, "silu": 3}


def version():
    """The library's version, e.g. '0.2.0'."""
    return _tile.version()


def data_dir():
    """The data folder the library reads stdlib/ and kernels/ from: the
    package's own share/tile when installed from a wheel (TILE_DATA_DIR
    overrides)."""
    return _os.path.dirname(_os.path.dirname(_os.path.dirname(_tile.gemm_source_path())))


def cdiv(a, b):
    """Ceiling division, for grids: cdiv(n, BLOCK)."""
    return -(-a // b)


def next_power_of_2(n):
    """The least power of 2 >= n, 0 for n <= 0 (triton.next_power_of_2, and next_power_of_2 in kernels):
    a block that holds a row of n, BLOCK=tile.next_power_of_2(n)."""
    n = _operator.index(n)
    return 1 << (n - 1).bit_length() if n > 0 else 0


def device(name=None):
    """The Device for "emu", "cuda", "cuda:N" (or any name the library takes).

    None: TILE_DEVICE, else cuda when present, else the emulator.  Devices are
    cached: the same name gives the same Device (one tile context)."""
    if isinstance(name, Device):
        return name
    if name is not None and not isinstance(name, str):
        raise TypeError("device: expected a name such as 'emu' or 'cuda:0', got %r" % (name,))
    key = name or _os.environ.get("TILE_DEVICE") or None
    d = _devices.get(key)
    if d is None:
        try:
            d = Device(key)
        except Error:
            if name is None and key is not None:  # from TILE_DEVICE: the library reads it, and its message names it
                try:
                    Device(None)
                except Error as e:
                    raise e from None
            raise
        if key is None:  # the plain default ("cuda" or "emu") is the device of that name: one context
            d = _devices.setdefault(d.name, d)
        _devices[key] = d
    return d


def data_ptr(array, device=None):
    """The device address a launch passes for `array` on the device (default:
    as tile.device(None)): what a table of pointers for a `**T` parameter
    holds, as Triton users build one from `t.data_ptr()`.  A NumPy host array
    stays mapped as long as it lives (docs/python.md, "Tables of pointers")."""
    return _device(device).data_ptr(array)


def tensor_map(array, box, swizzle=None, elem_strides=None, dtype=None, device=None):
    """The 128-byte tiled tensor map (TMA) of the whole of `array` on the device,
    as bytes for a PTX kernel's `.param .align 64 .b8 tmap[128]` argument (the
    host-encoded map CUTLASS-style and Triton host-descriptor kernels take).
    `box` (elements one copy moves per dimension, 1..256) and `elem_strides`
    are in the array's order, outermost first; `swizzle` None, 'none', '32B',
    '64B' or '128B'; `dtype` reads the array's storage as another type of its
    width ('bf16' for uint16 arrays).  The array stays mapped as long as it
    lives, as for data_ptr (docs/python.md, "PTX from other compilers").  The
    bytes are a TensorMap: launched on another device than the one it was made
    for (device=None: the default), it is encoded again for that device."""
    dev = _device(device)
    args = (array, box, swizzle, elem_strides, dtype)
    return TensorMap(dev.tensor_map(*args), dev, args)


def tensor_map_im2col(array, lower, upper, channels_per_pixel, pixels_per_column, swizzle=None, elem_strides=None,
                      dtype=None, nan_fill=False, device=None):
    """The 128-byte im2col tensor map of an N[D][H]WC `array` (rank 3 to 5) for
    cp.async.bulk.tensor's .im2col loads (tile_tensor_map_encode_im2col,
    docs/runtime.md): `lower` and `upper`, the bounding box's corners, one per
    spatial dimension in the array's order ([D,] [H,] W); `elem_strides` in the
    array's order (those of W, H, D: the convolution's stride); one copy moves
    `pixels_per_column` pixels of `channels_per_pixel` elements.  Out-of-bounds
    elements read as zero, or NaN with nan_fill.  A TensorMap, as tensor_map's."""
    dev = _device(device)
    args = (array, lower, upper, channels_per_pixel, pixels_per_column, swizzle, elem_strides, dtype, nan_fill)
    return TensorMap(dev.tensor_map_im2col(*args), dev, args, "tensor_map_im2col")


class TensorMap(bytes):
    """The 128 bytes of tile.tensor_map for `device`, which remember how they
    were made: a PTX kernel launched on another device encodes the map again
    there (a map holds a device address of its own device's memory, which
    another device, an emulated one too, cannot read).  The array stays alive
    as long as the map."""

    def __new__(cls, data, device, args, encode="tensor_map"):
        self = super().__new__(cls, data)
        self.device = device
        self._args = args
        self._encode = encode
        self._other = {}
        return self

    def _tile_for_device(self, dev):
        """The map's bytes for a launch on dev (called by PTX kernel launches)."""
        if dev is self.device:
            return self
        key = id(dev)
        got = self._other.get(key)
        if got is None or got[0] is not dev:
            got = self._other[key] = (dev, getattr(dev, self._encode)(*self._args))
        return got[1]

    def __reduce__(self):  # pickled or copied: the plain bytes
        return (bytes, (bytes(self),))

    def __repr__(self):
        return "<tile tensor map on %s>" % self.device.name


_device = device


class TensorDescriptor:
    """A tensor in memory for a kernel's `d: tensor_desc(T, [B0, B1])` parameter, as Triton's
    triton.tools.tensor_descriptor.TensorDescriptor: `base` the array, `shape` and `strides` (in
    elements) one integer per dim, `block_shape` the block a load reads (the kernel's own, which
    fixes it at compile time; it is kept here for Triton's code, which reads it).  Passed by
    position, it is its base, shape and strides, the parameters the kernel's descriptor is made of
    (docs/language.md, "Tensor descriptor parameters"); Triton's own class is taken the same way."""

    __slots__ = ("base", "shape", "strides", "block_shape", "padding")

    def __init__(self, base, shape, strides, block_shape, padding="zero"):
        shape, strides, block_shape = (tuple(_operator.index(v) for v in x) for x in (shape, strides, block_shape))
        if not 1 <= len(shape) <= 5 or len(strides) != len(shape) or len(block_shape) != len(shape):
            raise ValueError("TensorDescriptor: shape, strides and block_shape need one entry per dim, 1 to 5 dims; got %d, %d, %d"
                             % (len(shape), len(strides), len(block_shape)))
        if padding != "zero":
            raise ValueError("TensorDescriptor: padding %r: a kernel parameter's descriptor reads zeros outside the tensor" % (padding,))
        self.base, self.shape, self.strides, self.block_shape, self.padding = base, shape, strides, block_shape, padding

    @staticmethod
    def from_tensor(tensor, block_shape):
        """The descriptor of a whole array (anything with NumPy's shape, strides in bytes and itemsize): its
        shape, and its strides in elements."""
        item = tensor.itemsize
        if any(s % item for s in tensor.strides):
            raise ValueError("TensorDescriptor.from_tensor: strides %r are not whole elements of %d bytes" % (tensor.strides, item))
        return TensorDescriptor(tensor, tensor.shape, [s // item for s in tensor.strides], block_shape)

    def __repr__(self):
        return "TensorDescriptor(shape=%r, strides=%r, block_shape=%r)" % (self.shape, self.strides, self.block_shape)


class Module:
    """The kernels of one compiled source: mod.NAME or mod["NAME"] is a Kernel,
    launched with kernel[grid](*args, stream=None)."""

    def __init__(self, kernels, source):
        self._kernels = {k.name: k for k in kernels}
        self._source = source
        for k in kernels:
            if not hasattr(Module, k.name) and not k.name.startswith("_"):
                self.__dict__[k.name] = k

    @property
    def source(self):
        """The path compiled, or "<source>" for source text."""
        return self._source

    @property
    def kernels(self):
        """The kernels by name."""
        return dict(self._kernels)

    def __getitem__(self, name):
        try:
            return self._kernels[name]
        except KeyError:
            raise KeyError("no kernel named %r (kernels: %s)" % (name, ", ".join(self._kernels))) from None

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            return self.__dict__["_kernels"][name]
        except KeyError:
            raise AttributeError("no kernel named %r (kernels: %s)" % (name, ", ".join(self._kernels))) from None

    def __iter__(self):
        return iter(self._kernels.values())

    def __len__(self):
        return len(self._kernels)

    def __repr__(self):
        return "<tile module %s: %s>" % (self.source, ", ".join(self._kernels))


def _unquoted(v):
    """A string constexpr given quoted ('"leaky relu"') as the kernel sees it; anything else as it is."""
    return v[1:-1] if isinstance(v, str) and len(v) >= 2 and v[0] == v[-1] == '"' else v


def _define_value(name, v):
    if v is None:  # Triton's constexpr None: `NAME is None` in the kernel
        return "None"
    np = _sys.modules.get("numpy")
    if np is not None and isinstance(v, np.generic) and not isinstance(v, (np.str_, np.bytes_, np.void)):
        v = v.item()  # a NumPy scalar: its Python value (np.float64(0.25) gave the define "np.float64(0.25)")
    if isinstance(v, bool):
        return "true" if v else "false"  # Triton's bool constexpr: an i1, so `not FLAG` and `A and B` read as there
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        if not v:
            return '""'  # '' (gemlite's meta_evict_policy='') is the empty string, not an empty define
        # what a define reads bare (a name, a type, *T, a number, or a string already quoted) goes as it is; any other
        # string is quoted for it, as Triton passes W_CACHE_MODIFIER=".cg" or ACT="leaky relu" (a bare .cg was an error)
        if _re.fullmatch(r'(-|\*+)?[A-Za-z0-9_][A-Za-z0-9_.+-]*|"(?:[^"\\]|\\.)*"', v):
            return v
        return '"%s"' % v.replace("\\", "\\\\").replace('"', '\\"')
    # a NumPy dtype (np.float16, np.dtype("int8")) names the language's type: a kernel generic over dtype
    if np is not None and (isinstance(v, np.dtype) or (isinstance(v, type) and issubclass(v, np.generic))):
        kinds = {"f": "f", "i": "i", "u": "u"}
        dt = np.dtype(v)
        if dt == np.bool_:
            return "i1"
        if dt.kind in kinds:
            return "%s%d" % (kinds[dt.kind], 8 * dt.itemsize)
    if isinstance(v, (tuple, list)):  # Triton's tuple constexprs: a define holds one value (docs/language.md)
        raise TypeError("constexpr %s: a define cannot be a %s: a tuple of compile-time values is the kernel's own default, "
                        "`const %s = (64, 32)`, or pass its elements as constexprs of their own" % (name, type(v).__name__, name))
    raise TypeError("constexpr %s: expected an int, float, bool, str, None or NumPy dtype, got %r" % (name, type(v).__name__))


def compile(path_or_source, kernel=None, arch=None, num_warps=None, num_stages=None, device=None, specialize=True,
            debug=False, no_tma=False, autotune=False, restore_value=(), reset_to_zero=(), **constexprs):
    """Compile a .tile file (a path that names an existing file) or source text.

    kernel: one kernel (None: all); arch: a target such as "sm_90a" (None: the
    device's); num_warps, num_stages and the constexprs (const parameters and
    file-level consts, e.g. BLOCK=256) become defines.  Source errors raise
    CompileError with .diagnostics ("file:line:col: error: ...").  Variants
    specialized on the launch's values (integers equal to 1 or divisible by 16,
    16-byte aligned pointers) compile on first use (specialize=False: integers
    never are).  debug=True compiles device_assert checks (Triton's debug=True);
    no_tma=True keeps sm_90a's pipelined tiles on per-thread copies (tensor maps
    need positive strides that are multiples of 16 bytes).

    autotune=True: each kernel that declares @config is an Autotuned kernel,
    which picks its configuration at launch, per power-of-two bucket of its
    @tune_key arguments, as Triton's @autotune does (docs/python.md,
    "Autotuning at launch"); restore_value and reset_to_zero name arguments
    the tuning runs must not disturb (Triton's)."""
    dev = globals()["device"](device)
    if arch == "":  # the default, as the C API and `tile compile --arch ''` read it: here the device's
        arch = None
    if not isinstance(path_or_source, (str, _os.PathLike)):
        raise TypeError("compile: expected a path or source text, got %r" % (type(path_or_source).__name__,))
    src = _os.fspath(path_or_source)
    is_file = isinstance(path_or_source, _os.PathLike) or ("\n" not in src and _os.path.isfile(src))
    if (is_file or ("\n" not in src and src.rstrip().endswith(".tile"))) and not _os.path.isfile(src):
        raise FileNotFoundError("compile: no such file: %r" % src)
    defines = ["%s=%s" % (k, _define_value(k, v)) for k, v in constexprs.items()]
    for name, value in (("num_warps", num_warps), ("num_stages", num_stages)):
        if value is None:
            continue
        if isinstance(value, bool) or not hasattr(value, "__index__"):
            raise TypeError("compile: %s must be an int, got %r" % (name, type(value).__name__))
        defines.append("%s=%d" % (name, value.__index__()))
    if arch is not None and not isinstance(arch, str):
        raise TypeError("compile: arch must be a target's name such as 'sm_90a', or None, got %r" % (type(arch).__name__,))
    if kernel is not None and not isinstance(kernel, str):
        raise TypeError("compile: kernel must be a kernel's name (str) or None, got %r" % (type(kernel).__name__,))
    for name, value in (("debug", debug), ("no_tma", no_tma), ("autotune", autotune)):
        if not isinstance(value, bool):
            raise TypeError("compile: %s must be a bool, got %r" % (name, type(value).__name__))
    restore_value, reset_to_zero = _names("restore_value", restore_value), _names("reset_to_zero", reset_to_zero)
    if (restore_value or reset_to_zero) and not autotune:
        raise TypeError("compile: restore_value and reset_to_zero are for autotune=True")
    path = _os.path.abspath(src) if is_file else src
    text = None
    if is_file:
        with open(src, encoding="utf-8", errors="replace") as f:
            text = f.read()
    else:
        text = src
        if "\0" in text:  # the library reads C strings: what follows would be dropped unseen
            raise ValueError("compile: the source text has a NUL character at offset %d" % text.index("\0"))

    def build(name, extra=(), config=None):
        # meta: compile()'s constexprs (a quoted string as the string the kernel sees), under an autotuned
        # configuration's own values (they never overlap)
        meta = dict({k: _unquoted(v) for k, v in constexprs.items()}, **(config or {}))
        ks = _tile.compile(dev, path, is_file, tuple(defines) + tuple(extra), kernel=name, arch=arch, meta=meta,
                           specialize=specialize, debug=debug, no_tma=no_tma)
        for k in ks:
            defaults = _const_defaults(text, k.name)
            if any(n not in meta for n in defaults):
                k._set_meta(dict(defaults, **k.meta))
        return ks

    if not autotune:
        return Module(build(kernel), src if is_file else "<source>")
    given = set(constexprs) | {n for n, v in (("num_warps", num_warps), ("num_stages", num_stages)) if v is not None}
    kernels = []
    names = [kernel] if kernel is not None else _kernel_names(text)
    for name in names:
        configs, keys = _tile.tune_space(path, is_file, name)
        if not configs:
            kernels.extend(build(name))
            continue
        kernels.append(Autotuned(name, dev, build, configs, keys, path if is_file else None, given, restore_value,
                                 reset_to_zero))
    if kernel is None and not names:
        kernels = build(None)  # no kernel the header scan found: the compiler says what is wrong
    tuned = [k for k in kernels if isinstance(k, Autotuned)]
    for n in restore_value + reset_to_zero:
        if not any(n in k._params for k in tuned):
            raise TypeError("compile: no autotuned kernel has an argument '%s' (restore_value / reset_to_zero; kernels: %s)"
                            % (n, ", ".join(k.name for k in tuned) or "none"))
    return Module(kernels, src if is_file else "<source>")


def _names(what, v):
    if isinstance(v, str):
        v = (v,)
    try:
        v = tuple(v)
    except TypeError:
        raise TypeError("compile: %s must be argument names, got %r" % (what, type(v).__name__)) from None
    for n in v:
        if not isinstance(n, str):
            raise TypeError("compile: %s must be argument names, got %r" % (what, n))
    return v


# what is not code in a source: triple-quoted and plain strings, line and block comments (docs/language.md,
# "Lexical structure"), matched from the left, so a `//` inside a string is the string's and a quote inside a
# comment the comment's
_NOT_CODE = _re.compile(r'"""[\s\S]*?"""|"(?:\\.|[^"\\\n])*"|//[^\n]*|/\*[\s\S]*?\*/')


def _blank(text, keep_strings=False):
    """text with its comments (and strings, unless keep_strings) replaced by as many spaces, line ends kept,
    so offsets into it are offsets into text."""
    def space(m):
        t = m.group(0)
        return t if keep_strings and t.startswith('"') else _re.sub(r"[^\n]", " ", t)
    return _NOT_CODE.sub(space, text)


def _kernel_names(text):
    """The kernels a source declares, in order (not those in comments or strings)."""
    return _re.findall(r"\bkernel\s+([A-Za-z_]\w*)\s*\(", _blank(text))


def _literal(v):
    """A @config value as Python reads it: 128, 0.5, True, "relu" (a string constant, without its quotes)."""
    if v in ("true", "false"):
        return v == "true"
    if len(v) >= 2 and v[0] == v[-1] == '"':
        return v[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    for conv in (lambda t: int(t, 0), float):
        try:
            return conv(v)
        except ValueError:
            pass
    return v


def _flatten(args):
    for a in args:
        if isinstance(a, tuple):
            yield from _flatten(a)
        else:
            yield a


def _bucket(v):
    """The power-of-two bucket of a key value (tile_tune_bucket: 1, 2, 4, ...; values <= 1 give 1)."""
    return 1 if v <= 1 else 1 << (v - 1).bit_length()


def _copy(a):
    return a.clone() if hasattr(a, "clone") else a.copy()


class Autotuned:
    """A kernel that declares @config, compiled with autotune=True: kernel[grid](*args, stream=None) picks
    the fastest configuration for the power-of-two bucket of its @tune_key arguments on first use (the
    tuning database's record for this device when the source is a file, else by timing every
    configuration on the call's own arguments), then launches it.  .cache maps each bucket to the
    chosen configuration, .best_config is the last one launched."""

    def __init__(self, name, dev, build, configs, keys, path, given, restore_value, reset_to_zero):
        self.name = name
        self._dev, self._build, self._path = dev, build, path
        self._defines = [list(c) for c in configs]  # each NAME=VALUE whole: a string value may hold a space
        self._strings = [" ".join(c) for c in configs]
        self.configs = [{kv.split("=", 1)[0]: _literal(kv.split("=", 1)[1]) for kv in c} for c in configs]
        self.keys = list(keys)
        for c in self.configs:
            both = sorted(given & set(c))
            if both:
                raise Error("autotune: kernel '%s': @config sets %s, which compile() also gives (drop one)"
                            % (name, ", ".join(both)))
        self._kernels = {}
        self.cache = {}
        self.best_config = None
        first, error, refused = None, None, None
        for i in range(len(self.configs)):  # source errors raise here, as for compile()
            try:
                first = self._kernel(i)
                break
            except CompileError as e:
                error = error or e
            except Error as e:
                # its values, given as defines, were refused (a name the kernel does not declare, a value of
                # the wrong kind): the source's @config is wrong, which compiling reports where it is
                # written (every compile checks every @config: another configuration's error says it)
                refused = refused or e
        if first is None:
            if error is None:
                try:
                    self._build(self.name)  # the source alone, for the located error
                except CompileError as e:
                    error = e
            raise (error or refused) from None
        self._first = first
        self._params = [p[0] for p in first.params]
        # the names a module's tuned kernels share: each applies those among its arguments
        self._restore = tuple(n for n in restore_value if n in self._params)
        self._zero = tuple(n for n in reset_to_zero if n in self._params)

    def _kernel(self, i):
        k = self._kernels.get(i)
        if k is None:
            cfg = self.configs[i]
            k = self._kernels[i] = self._build(self.name, self._defines[i], dict(cfg))[0]
        return k

    @property
    def signature(self):
        return self._first.signature

    @property
    def params(self):
        return self._first.params

    def asm(self, variant="", config=None):
        """Kernel.asm of a configuration: `config` an index into .configs, None the last one launched
        (best_config; before any launch the first that compiles)."""
        if config is None:
            i = self.configs.index(self.best_config) if self.best_config is not None else None
            return (self._first if i is None else self._kernel(i)).asm(variant)
        if isinstance(config, bool) or not isinstance(config, int) or not -len(self.configs) <= config < len(self.configs):
            raise ValueError("asm: config must be an index into .configs (%d of them), got %r" % (len(self.configs), config))
        return self._kernel(config % len(self.configs)).asm(variant)

    def __getitem__(self, grid):
        return lambda *args, stream=None, **kwargs: self._launch(grid, args, kwargs, stream)

    def _bucket_of(self, args, kwargs):
        vals = dict(zip(self._params, args))
        vals.update(kwargs)
        parts = []
        for k in self.keys:
            v = vals.get(k, 0)
            parts.append("%s=%d" % (k, _bucket(v.__index__() if hasattr(v, "__index__") and not isinstance(v, bool) else 0)))
        return ",".join(parts) or "any", vals

    def _launch(self, grid, args, kwargs, stream):
        if any(isinstance(a, tuple) for a in args):  # as a Kernel does (Triton's tuple arguments): their elements
            args = tuple(_flatten(args))
        bucket, vals = self._bucket_of(args, kwargs)
        i = self.cache.get(bucket)
        if i is None:
            for n in self._restore + self._zero:  # saved, zeroed and restored in place: arrays only (a list's
                v = vals.get(n)                   # failed restore hid the launch's own error)
                if v is not None and not (hasattr(v, "shape") and hasattr(v, "__setitem__")):
                    raise TypeError("kernel '%s': argument '%s' (restore_value / reset_to_zero): expected an array, got %s"
                                    % (self.name, n, type(v).__name__))
            i, timed = self._tune(bucket, grid, args, kwargs, stream, vals)
            self.cache[bucket] = i
            for n in self._zero if timed else ():  # the tuning runs added to them: the call starts from zero again
                vals[n][...] = 0
        self.best_config = dict(self.configs[i])
        return self._kernel(i)[grid](*args, stream=stream, **kwargs)

    def _tune(self, bucket, grid, args, kwargs, stream, vals):
        if len(self.configs) == 1:  # nothing to choose: no tuning run writes the outputs (as Triton's autotuner skips it)
            self._report(bucket, 0, "the only configuration")
            return 0, False
        if self._path is not None:
            rec = self._dev._tune_lookup(self._path, self.name, bucket)
            if rec is not None:
                for i, s in enumerate(self._strings):
                    if set(s.split()) == set(rec.split()):
                        self._report(bucket, i, "from the tuning database")
                        return i, False
        saved = {n: _copy(vals[n]) for n in self._restore if n in vals}
        times, first_error = {}, None
        for i in range(len(self.configs)):
            def run(k):
                for n in self._zero:
                    vals[n][...] = 0
                k[grid](*args, stream=stream, **kwargs)

            try:
                k = self._kernel(i)
                times[i] = self._bench(lambda: run(k))
            except Error as e:
                first_error = first_error or e
                _warnings.warn("autotune %s: %s: skipped: %s" % (self.name, self._strings[i], str(e).splitlines()[0]),
                               stacklevel=4)
            finally:
                for n, v in saved.items():
                    vals[n][...] = v
        if not times:
            raise first_error
        best = min(times, key=times.get)
        if self._path is not None:
            try:  # a cache folder that cannot be written costs the record, not the call (as for compiled kernels)
                self._dev._tune_record(self._path, self.name, bucket, self._strings[best], times[best])
            except Error as e:
                _warnings.warn("autotune %s: %s not recorded in the tuning database: %s"
                               % (self.name, self._strings[best], str(e).splitlines()[0]), stacklevel=4)
        self._report(bucket, best, "%.4f ms" % (times[best] * 1e3))
        return best, True

    def _bench(self, run):
        """Seconds per launch: the first launch compiles the variant; on a GPU the mean of a batch of
        launches lasting about 25 ms (at most 100) follows.  The emulator's one launch is timed as it runs:
        its times say nothing about a GPU."""
        dev = self._dev
        t0 = _time.perf_counter()
        run()
        dev.synchronize()
        t = _time.perf_counter() - t0
        if dev.is_emulator:
            return t
        run()
        dev.synchronize()
        t0 = _time.perf_counter()
        run()
        dev.synchronize()
        one = max(_time.perf_counter() - t0, 1e-7)
        n = max(1, min(100, int(0.025 / one)))
        t0 = _time.perf_counter()
        for _ in range(n):
            run()
        dev.synchronize()
        return (_time.perf_counter() - t0) / n

    def _report(self, bucket, i, how):
        if _os.environ.get("TILE_PRINT_AUTOTUNING", "") not in ("", "0"):
            print("tile autotune: %s %s -> %s (%s)" % (self.name, bucket, self._strings[i], how), file=_sys.stderr)

    def __repr__(self):
        return "<tile autotuned kernel %s: %d configurations, key (%s)>" % (self.name, len(self.configs),
                                                                         ", ".join(self.keys))


class PtxModule:
    """PTX another compiler wrote (Triton, nvcc), loaded as it is: mod.NAME or mod["NAME"] is an
    entry, launched with kernel[grid](*args, block=None, shared=0, cluster=None, cooperative=False,
    stream=None).  Arguments follow the entry's PTX parameter types (kernel.signature): arrays or None
    for pointers and 64-bit integers, ints, floats, and bytes-like objects of a by-value struct's size."""

    def __init__(self, native):
        self._native = native
        self._names = native.kernel_names()  # the runtime reads the .entry headers (not those in comments)
        self._cache = {}

    @property
    def kernels(self):
        """The entries' names, in the order of the PTX."""
        return list(self._names)

    def __getitem__(self, name):
        k = self._cache.get(name)
        if k is None:
            if name not in self._names:
                raise KeyError("no entry named %r (entries: %s)" % (name, ", ".join(self._names)))
            k = self._cache[name] = self._native.kernel(name)
        return k

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError as e:
            raise AttributeError(e.args[0]) from None

    def __iter__(self):
        return (self[n] for n in self._names)

    def __len__(self):
        return len(self._names)

    def __repr__(self):
        return "<tile PTX module: %s>" % ", ".join(self._names)


def load_ptx(path_or_text, device=None):
    """Load PTX (a path to a .ptx file, or its text) on a device and return a PtxModule.  The
    emulator runs it as a GPU would, so another compiler's kernel can be tested with NumPy arrays."""
    dev = globals()["device"](device)
    if isinstance(path_or_text, bytes):
        path_or_text = path_or_text.decode("utf-8")
    if not isinstance(path_or_text, (str, _os.PathLike)):
        raise TypeError("load_ptx: expected a path or PTX text, got %r" % (type(path_or_text).__name__,))
    text = _os.fspath(path_or_text)
    if isinstance(path_or_text, _os.PathLike) or (".entry" not in text and "\n" not in text):
        with open(text, encoding="utf-8") as f:
            text = f.read()
    return PtxModule(_tile.load_ptx(dev, text))


def _const_defaults(text, kernel):
    """Literal defaults of a kernel's const parameters (`const BLOCK: i32 = 1024`),
    read from its header so a callable grid's meta has them as Triton's has;
    a default that is no literal is left out."""
    code, text = _blank(text), _blank(text, keep_strings=True)  # the header found in code, read with its strings
    m = _re.search(r"\bkernel\s+%s\s*\(" % _re.escape(kernel), code)
    if not m:
        return {}
    depth, i, params, start = 1, m.end(), [], m.end()
    while i < len(code) and depth:
        c = code[i]
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        if (c == "," and depth == 1) or depth == 0:
            params.append(text[start:i])
            start = i + 1
        i += 1
    out = {}
    for p in params:
        # `const NAME: T = v`, or untyped `const NAME = v`; v a number, true/false or a "string"
        pm = _re.match(r"\s*const\s+(\w+)\s*(?::\s*\w+\s*)?=\s*(\S+|\"[^\"]*\")\s*$", p)
        if not pm:
            continue
        v = pm.group(2)
        if v in ("true", "false"):
            out[pm.group(1)] = v == "true"
            continue
        if len(v) >= 2 and v[0] == v[-1] == '"':
            out[pm.group(1)] = v[1:-1]
            continue
        for conv in (lambda t: int(t, 0), float):
            try:
                out[pm.group(1)] = conv(v)
                break
            except ValueError:
                pass
    return out


def _empty(like, shape, dtype=None):
    """An uninitialized array of like's kind (NumPy or torch) and device."""
    mod = type(like).__module__.split(".")[0]
    if mod == "numpy":
        import numpy as np
        return np.empty(shape, dtype=like.dtype if dtype is None else dtype)
    if mod == "torch":
        import torch
        if isinstance(dtype, str):
            dtype = getattr(torch, dtype)
        return like.new_empty(shape, dtype=like.dtype if dtype is None else dtype)
    raise TypeError("out=: pass an output array (cannot allocate one like %s)" % type(like).__name__)


def _dtype_name(x):
    return str(getattr(x, "dtype", "")).replace("torch.", "")


def _out_dtype_array(like, out_dtype):
    """The array dtype (a NumPy or torch name) a new out of the library's type out_dtype ("f32", "bf16", ...) has:
    NumPy holds bf16 as uint16 bits."""
    names = {"f32": "float32", "f16": "float16", "f64": "float64", "i32": "int32", "i8": "int8",
             "bf16": "uint16" if type(like).__module__.split(".")[0] == "numpy" else "bfloat16"}
    if out_dtype not in names:
        raise ValueError("out_dtype: expected one of %s, got %r" % (", ".join(repr(n) for n in names), out_dtype))
    return names[out_dtype]


def gemm(a, b, out=None, bias=None, activation=None, alpha=1.0, beta=0.0, dtype=None, out_dtype=None, stream=None,
         device=None, a_scale=None, b_scale=None):
    """out = activation(alpha * a @ b + beta * out + bias) with tile_gemm.

    a [M, K], b [K, N] (row-major or transposed views), f16, bf16, f32 (tf32),
    i8, or f8 (uint8 arrays with dtype="f8e4m3" / "f8e5m2"); out [M, N]
    (default: a new array of a's type, i32 for i8 inputs, f32 for f8, or of
    out_dtype when given: "f32", "bf16" as uint16 in NumPy; f32 out with
    f16/bf16 inputs is allowed).  NumPy has no bf16: pass uint16 arrays
    with dtype="bf16".  f8: a_scale and b_scale (float32, one value each or
    M and N values) multiply the product; 2-D ones are 128 x 128 block scales
    (DeepSeek-V3), applied per 128-wide K block: a_scale [M, cdiv(K, 128)]
    C-contiguous, b_scale [cdiv(K, 128), cdiv(N, 128)] laid out as b is
    (for b = w.T, a weight w [N, K], pass w_scale.T).  activation: None,
    "relu", "gelu", "silu".  Returns out."""
    if activation not in _ACTIVATIONS:
        raise ValueError("activation: expected one of None, 'relu', 'gelu', 'silu', got %r" % (activation,))
    dev = globals()["device"](device)
    if out is None:
        shape_a, shape_b = getattr(a, "shape", None), getattr(b, "shape", None)
        if shape_a is None or shape_b is None or len(shape_a) != 2 or len(shape_b) != 2:
            raise ValueError("gemm: a and b must be 2-D arrays")
        odt = None
        if _dtype_name(a) == "int8":
            odt = "int32"
        if dtype in ("f8e4m3", "f8e5m2"):
            odt = "float32"
        if out_dtype is not None:  # a new out of that type (it was a's, which out_dtype="f32" then refused)
            odt = _out_dtype_array(a, out_dtype)
        out = _empty(a, (shape_a[0], shape_b[1]), odt)
        if beta != 0.0:
            raise ValueError("beta: needs out= (it scales out's values)")
    _tile.gemm(dev, a, b, out, bias=bias, activation=_ACTIVATIONS[activation], alpha=alpha, beta=beta, stream=stream,
               dtype=dtype, out_dtype=out_dtype, a_scale=a_scale, b_scale=b_scale)
    return out


def attention(q, k, v, causal=False, softmax_scale=None, out=None, dtype=None, stream=None, device=None, q_scale=None,
              k_scale=None, v_scale=None, out_dtype=None):
    """out = softmax(softmax_scale * q k^T (+ causal mask)) v with tile_attention_fwd.

    q [batch, seq_q, heads_q, head_dim], k and v [batch, seq_k, heads_kv,
    head_dim] (heads_q a multiple of heads_kv), f16 or bf16 (NumPy: uint16
    with dtype="bf16"); head_dim a multiple of 16, at most 256, contiguous.
    causal masks bottom-right aligned (key j visible to query i when
    j <= i + seq_k - seq_q).  softmax_scale None: 1/sqrt(head_dim).
    f8: uint8 arrays of e4m3 codes with dtype="f8e4m3" and per-tensor
    dequantization scales q_scale, k_scale, v_scale (None: 1); out is f16 or
    bf16 (out_dtype "f16" or "bf16"; None: out's type, or f16 for a new one).
    Returns out (default: a new array like q)."""
    dev = globals()["device"](device)
    f8 = dtype == "f8e4m3"
    if out is None:
        if f8:
            out_dtype = out_dtype or "f16"
            numpy = type(q).__module__.split(".")[0] == "numpy"
            names = {"f16": "float16", "bf16": "uint16" if numpy else "bfloat16"}
            if out_dtype not in names:
                raise ValueError("out_dtype: 'f16' or 'bf16' with f8e4m3 inputs, got %r" % (out_dtype,))
            out = _empty(q, tuple(q.shape), names[out_dtype])
        else:
            out = _empty(q, tuple(q.shape), None if out_dtype is None else _out_dtype_array(q, out_dtype))
    scales = {"q_scale": q_scale, "k_scale": k_scale, "v_scale": v_scale}
    _tile.attention(dev, q, k, v, out, causal=bool(causal), softmax_scale=_scale("softmax_scale", softmax_scale),
                    stream=stream, dtype=dtype, out_dtype=out_dtype,
                    **{name: _scale(name, value) for name, value in scales.items()})
    return out


def decode_paged(q, k_cache, v_cache, block_tables, context_lens, max_context_len=None, softmax_scale=None, out=None,
                 kv_dtype=None, k_scale=None, v_scale=None, num_splits=0, dtype=None, stream=None, device=None):
    """Decode attention over a vLLM-style paged KV cache (tile_attention_decode_paged).

    q [num_seqs, num_tokens, heads_q, head_dim] f16/bf16 (the newest num_tokens
    of each sequence, 1..8, causal among themselves); k_cache, v_cache
    [num_blocks, block_size, heads_kv, head_dim] (block_size 16, 32 or 64) in
    q's type, or f8e4m3 codes as uint8 with kv_dtype="f8e4m3" and k_scale,
    v_scale; block_tables i32 [num_seqs, n]; context_lens i32 [num_seqs].
    max_context_len None: read from context_lens (host arrays only).
    num_splits 0: chosen by the library.  Returns out (default: like q)."""
    dev = globals()["device"](device)
    if max_context_len is None:
        if type(context_lens).__module__.split(".")[0] != "numpy":
            raise ValueError("max_context_len: required unless context_lens is a NumPy array")
        # no sequences: the smallest length the library takes (the query's tokens); nothing runs
        max_context_len = int(context_lens.max()) if context_lens.size else max(1, q.shape[1] if len(q.shape) == 4 else 1)
    _check_paged_tables(q, k_cache, block_tables, context_lens, int(max_context_len))
    if out is None:
        out = _empty(q, tuple(q.shape))
    _tile.decode_paged(dev, q, k_cache, v_cache, block_tables, context_lens, out, int(max_context_len),
                       softmax_scale=_scale("softmax_scale", softmax_scale), kv_dtype=kv_dtype,
                       k_scale=_scale("k_scale", k_scale), v_scale=_scale("v_scale", v_scale),
                       num_splits=num_splits, stream=stream, dtype=dtype)
    return out


def _check_paged_tables(q, k_cache, block_tables, context_lens, max_context_len):
    """What tile_attention_decode_paged reads on the device without checking (its check_tables), checked
    here when the tables are NumPy arrays, at no cost: every length in [num_tokens, max_context_len] and
    every block a sequence uses in [0, num_blocks).  A length past max_context_len, or one shorter than
    the query's tokens, computed wrong rows without an error; a bad block read another sequence's keys."""
    if type(context_lens).__module__.split(".")[0] != "numpy" or len(q.shape) != 4 or len(context_lens.shape) != 1:
        return
    lens = context_lens.astype("int64")
    if lens.size == 0:
        return
    tokens = int(q.shape[1])
    bad = ((lens < tokens) | (lens > max_context_len)).nonzero()[0]
    if bad.size:
        s = int(bad[0])
        raise ValueError("context_lens[%d] = %d: each must be at least the query's %d tokens and at most max_context_len "
                         "= %d" % (s, int(lens[s]), tokens, max_context_len))
    if type(block_tables).__module__.split(".")[0] != "numpy" or len(block_tables.shape) != 2 or len(k_cache.shape) != 4:
        return
    bs, nb = int(k_cache.shape[1]), int(k_cache.shape[0])
    used = -(-lens // bs) if bs > 0 else lens
    if block_tables.shape[0] < lens.size or int(used.max()) > block_tables.shape[1]:
        return  # the library's own checks say what is wrong with the shapes
    cols = _sys.modules["numpy"].arange(block_tables.shape[1])
    sel = cols[None, :] < used[:, None]
    bt = block_tables[: lens.size].astype("int64")
    bad = (sel & ((bt < 0) | (bt >= nb))).nonzero()
    if bad[0].size:
        s, j = int(bad[0][0]), int(bad[1][0])
        raise ValueError("block_tables[%d][%d] = %d: a block of sequence %d's %d tokens, outside the cache's %d blocks"
                         % (s, j, int(bt[s, j]), s, int(lens[s]), nb))


_SCORING = {"softmax": 0, "sigmoid": 1}


def _scale(name, value):
    """A scale for the C API, where 0 means the default: None is the default; 0 itself is refused rather
    than read as the default."""
    if value is None:
        return 0.0
    if value == 0:
        raise ValueError("%s: 0 is not a scale (None gives the default)" % name)
    return value


def moe(x, w1, w2, topk, router_logits=None, topk_ids=None, topk_weights=None, out=None, scoring="softmax",
        renormalize=False, n_group=0, topk_group=0, group_top2=False, score_bias=None, routed_scale=None,
        accumulate=False, dtype=None, stream=None, device=None):
    """One mixture-of-experts layer (tile_moe_forward):
    out[t] (+)= sum_j w[t,j] * w2[e_j] (silu(w1_gate[e_j] x[t]) * w1_up[e_j] x[t]).

    x [tokens, hidden] f16/bf16; w1 [experts, 2 * inter, hidden] (gate rows,
    then up rows) and w2 [experts, hidden, inter] in x's type; out f32
    [tokens, hidden] (default: a new NumPy/torch array; zeroed first unless
    accumulate).  Routing: router_logits [tokens, experts] (f32, f16, bf16)
    with scoring "softmax" or "sigmoid", renormalize, grouped top-k
    (n_group, topk_group, group_top2), score_bias f32 [experts],
    routed_scale; or precomputed topk_ids i32 and topk_weights f32
    [tokens, topk] (with a router they are written when given).
    Returns out."""
    if scoring not in _SCORING:
        raise ValueError("scoring: expected 'softmax' or 'sigmoid', got %r" % (scoring,))
    if router_logits is None and (topk_ids is None or topk_weights is None):
        raise ValueError("moe: pass router_logits, or topk_ids and topk_weights")
    dev = globals()["device"](device)
    if out is None:
        if accumulate:
            raise ValueError("accumulate: needs out= (it adds to out's values)")
        out = _empty(x, tuple(x.shape), "float32")
    _tile.moe(dev, x, w1, w2, out, int(topk), router_logits=router_logits, topk_ids=topk_ids, topk_weights=topk_weights,
              scoring=_SCORING[scoring], renormalize=bool(renormalize), n_group=n_group, topk_group=topk_group,
              group_top2=bool(group_top2), score_bias=score_bias,
              routed_scale=_scale("routed_scale", routed_scale), accumulate=bool(accumulate),
              stream=stream, dtype=dtype)
    return out
