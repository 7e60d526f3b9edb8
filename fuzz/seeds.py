#!/usr/bin/env python3
"""seeds.py - more seeds for the libFuzzer targets (run by scripts/fuzz.sh).

    fuzz/seeds.py TILE_CORPUS PTX_CORPUS

The test programs hold most of the PTX the emulator is tested on (wgmma, TMA,
mbarriers, clusters, ...) and most .tile constructs as C string literals; the
docs hold kernels in fenced blocks.  Each run of adjacent string literals in
tests/*.c is joined and unescaped, its printf conversions filled in (%d: 4,
%s: f32), and written as a seed when it looks like PTX (.entry/.func; a
.version/.target sm_90a/.address_size header is added when it has none) or
like a .tile file (a `kernel` or `fn` declaration).  Fenced blocks of
docs/*.md and README.md that declare a kernel are .tile seeds.  fuzz_ptx's
tensor-copy inputs (first byte 0x02) get seeds of valid maps of every rank,
valid im2col maps of rank 3, 4 and 5 (flag 0x10) and a few raw ones.  .tile literals that unroll a static_range of 1000 or
more copies are left out (the unroll-limit tests: seconds each under ASan,
their mutations end runs at the timeout).  Seeds whose
first byte is the variant byte of fuzz_tile (0x06: sm_90a and run) and
fuzz_ptx (0x01: launch) are written too."""
import glob, hashlib, os, re, struct, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIT = re.compile(r'"((?:\\.|[^"\\\n])*)"')
ESC = {'n': '\n', 't': '\t', 'r': '\r', '\\': '\\', '"': '"', "'": "'", '0': '\0', '?': '?'}
TILE_DECL = re.compile(r'\b(?:kernel|fn)\s+\w+\s*[(<]')


def unescape(s):
    return re.sub(r'\\(x[0-9a-fA-F]{1,2}|[0-7]{1,3}|.)',
                  lambda m: chr(int(m.group(1)[1:], 16)) if m.group(1)[0] == 'x' else
                  chr(int(m.group(1), 8)) if m.group(1)[0] in '01234567' else ESC.get(m.group(1), m.group(1)), s)


def fill(s):
    s = re.sub(r'%[-0-9.]*(?:zu|llu|lld|llx|lu|ld|d|u|x|i)', '4', s)
    return re.sub(r'%(?:\.\*)?s', 'f32', s).replace('%%', '%')


def literals(src):
    """Runs of adjacent string literals, comments dropped."""
    src = re.sub(r'/\*.*?\*/', ' ', re.sub(r'(?m)^\s*//[^\n]*', '', src), flags=re.S)
    runs, cur, end = [], [], -1
    for m in LIT.finditer(src):
        if cur and src[end:m.start()].strip() == '':
            cur.append(m.group(1))
        else:
            if cur: runs.append(''.join(cur))
            cur = [m.group(1)]
        end = m.end()
    if cur: runs.append(''.join(cur))
    return runs


def tma_seeds(ptx_dir):
    """fuzz_ptx's 0x02 inputs, in the order tensor_copy takes their bytes."""
    n = 0
    for flags in (0, 1, 4, 5):
        for dt, rank, box0, sw in ((1, 2, 32, 0), (0, 1, 16, 0), (9, 3, 64, 3), (1, 2, 64, 3), (0, 2, 8, 1), (8, 4, 2, 0),
                                   (1, 5, 8, 2)):
            b = bytes([2, flags, dt, rank])
            for d, (dim, stride, box) in enumerate(zip((40, 20, 3, 2, 2), (8, 8, 64, 128, 0), (box0, 8, 2, 2, 2))):
                b += bytes([0, dim, 0, stride]) + struct.pack('<H', box) + bytes([1 + (d == 2)])
            b += bytes([sw]) + struct.pack('<H', 0) + bytes([n & 1]) + bytes(4)
            for x in (-3, 5, 0, 1, 0): b += bytes([0, x + 64])
            with open(os.path.join(ptx_dir, 'seedtma_%d' % n), 'wb') as f: f.write(b)
            n += 1
    for flags in (16, 17, 20):  # im2col maps of rank 3, 4, 5 (f32 NWC, NHWC, NDHWC), padding 1, a 3-tap filter
        for rank, dims, strides in ((3, (4, 20, 3, 0, 0), (1, 20, 0, 0, 0)), (4, (8, 10, 6, 2, 0), (2, 20, 120, 0, 0)),
                                    (5, (4, 5, 4, 3, 2), (1, 5, 20, 60, 0))):  # strides of dims 1.., in 16 bytes
            b = bytes([2, flags, 0, rank])
            for d in range(5): b += bytes([0, dims[d], 0, strides[d]]) + struct.pack('<H', 0) + bytes([1 + (d == 1 and n & 1)])
            b += bytes([0]) + struct.pack('<H', 0)
            for d in range(3): b += bytes([0, 0xfc, 0, 0xfc])  # lower -1, upper -1 (each byte / 4)
            b += struct.pack('<HH', 8 if rank == 4 else 4, 16 + 8 * (n & 1)) + bytes([(n // 2) & 1, n & 1]) + bytes(4)
            for x in (0, -1, -1 if rank > 3 else 0, 0, 0): b += bytes([0, x + 64])  # {c, w = -1, [h = -1,] .., n = 0}
            b += bytes([0, 0, 0, 2, 0, 1])  # offsets w 0, h 2, d 1
            with open(os.path.join(ptx_dir, 'seedtma_%d' % n), 'wb') as f: f.write(b)
            n += 1
    for k in range(6):
        m = bytearray(128)
        m[0:4], m[4], m[5], m[7], m[8] = b'TMAP', 1, k % 3, 2, 1
        for d in range(3):
            struct.pack_into('<Q', m, 16 + 8 * d, 16)
            if d: struct.pack_into('<Q', m, 56 + 8 * (d - 1), 64 * d)
            struct.pack_into('<H', m, 88 + 2 * d, 8)
            m[98 + d] = 1
        with open(os.path.join(ptx_dir, 'seedtma_raw%d' % k), 'wb') as f:
            f.write(bytes([2, 2 | (k & 5)]) + bytes(m) + bytes(6) + bytes([0, 65] * 5))
    return n + 6


BIG_UNROLL = re.compile(r'static_range\(\s*(?:\d+\s*,\s*)?(\d+)')


def too_slow(t):
    """A static_range of a thousand or more copies (the tests of the unrolled-statement limit): it compiles in
    over a second, over 10 s under the fuzzers' ASan, so its mutations end runs at the -timeout."""
    return any(int(m.group(1)) >= 1000 for m in BIG_UNROLL.finditer(t))


def main():
    tile_dir, ptx_dir = sys.argv[1], sys.argv[2]
    n = {'tile': 0, 'ptx': 0}

    def save(kind, text, prefix):
        d = tile_dir if kind == 'tile' else ptx_dir
        h = hashlib.sha1(text.encode('utf-8', 'replace')).hexdigest()[:12]
        with open(os.path.join(d, 'seedx_' + h), 'wb') as f: f.write(text.encode('utf-8', 'replace'))
        with open(os.path.join(d, 'seedx%d_%s' % (prefix, h)), 'wb') as f:
            f.write(bytes([prefix]) + text.encode('utf-8', 'replace'))
        n[kind] += 1

    for path in sorted(glob.glob(ROOT + '/tests/*.c') + glob.glob(ROOT + '/tests/*.h')):
        for run in literals(open(path, errors='replace').read()):
            t = fill(unescape(run))
            if len(t) < 30: continue
            if '.entry' in t or '.func' in t:
                if '.version' not in t: t = '.version 8.0\n.target sm_90a\n.address_size 64\n' + t
                save('ptx', t, 1)
            elif TILE_DECL.search(t) and not too_slow(t):
                save('tile', t, 6)
    for path in sorted(glob.glob(ROOT + '/docs/*.md')) + [ROOT + '/README.md']:
        for m in re.finditer(r'```[^\n]*\n(.*?)```', open(path, errors='replace').read(), re.S):
            if TILE_DECL.search(m.group(1)): save('tile', m.group(1), 6)
    nt = tma_seeds(ptx_dir)
    print('fuzz/seeds.py: %d .tile and %d PTX seeds from tests/ and docs/, %d tensor copies' % (n['tile'], n['ptx'], nt))


main()
