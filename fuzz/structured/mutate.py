#!/usr/bin/env python3
"""mutate.py - structured (token-level) fuzzing of the compiler and the emulator.

Not part of CI: a tool to run by hand after changes to lang/, lower/ or emu/.

    cc -fsanitize=address,undefined -I. fuzz/structured/drv.c -Lbuild-asan -ltile \
       -Wl,-rpath,$PWD/build-asan -o build-asan/fuzzdrv
    fuzz/structured/mutate.py [--iters N] [--seed S] [--ptx] [--out DIR] [--only TEXT]

DIR defaults to build-asan/fuzz-findings (the compile cache of the runs: build-asan/fuzz-cache);
--only keeps the seeds whose path contains TEXT.

1. seeds: every .tile file of the repository and every fenced block of README.md
   and docs/*.md that declares a kernel;
2. each iteration takes a seed, tokenizes it (identifiers, numbers, strings,
   punctuation; comments dropped) and applies 1-3 mutations: delete, duplicate
   or swap tokens, an identifier replaced by another of the file or a builtin,
   a number made 0/-1/huge/float/nan, a dtype changed, a shape changed, a
   bracket dropped, call arguments swapped, `[None]` inserted, a statement
   nested in a loop or an if, a `const` parameter made a run-time one;
3. runs `drv tile` on it under `timeout` (ASan + UBSan build): compile for
   sm_80, sm_89 and sm_90a, run on the emulator when it compiles;
   with --ptx, also mutates the PTX of inputs that compiled (lines deleted,
   duplicated or swapped, operands and numbers changed) and runs `drv ptx`;
4. a finding (exit 70, a sanitizer report, a signal, a timeout, over 2 GiB)
   is saved under DIR/ with its output (peak RSS from /usr/bin/time: ASan
   reserves too much address space for an RLIMIT_AS).
"""
import argparse, glob, os, random, re, resource, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOK = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\])*"|\s+|0[xX][0-9a-fA-F_]+|\d[\d_]*(?:\.\d*)?(?:[eE][-+]?\d+)?'
                 r'|\.\d+(?:[eE][-+]?\d+)?|[A-Za-z_]\w*|<<=|>>=|\*\*|<<|>>|<=|>=|==|!=|&&|\|\||->|\+=|-=|\*=|/=|%=|&=|\|=|\^=|.', re.S)
DTYPES = "i1 i8 i16 i32 i64 u8 u16 u32 u64 f16 bf16 f32 f64 f8e4m3 f8e5m2 tf32".split()
BUILTINS = ("abs arange argmax argmin associative_scan atomic_add atomic_cas atomic_xchg broadcast_to cast cat cumsum dot "
            "exp expand_dims full gather histogram interleave join load make_block_ptr max maximum min num_programs permute "
            "program_id range reduce reshape sort split sqrt static_range store sum trans where zeros zeros_like topk flip "
            "static_assert device_assert device_print shape_of dtype_of numel rank advance make_tensor_descriptor "
            "load_tensor_descriptor store_tensor_descriptor inline_asm_elementwise None true false").split()
NUMS = ["0", "-1", "1", "2", "3", "7", "1000000", "2147483647", "2147483648", "4294967296", "9223372036854775807",
        "99999999999999999999999", "1e308", "1e-45", "0.5", "-0.0", "nan", "inf", "1 << 30", "1 << 62", "-2147483648", "0x7fffffff"]


def seeds():
    out = []
    for f in sorted(glob.glob(ROOT + "/**/*.tile", recursive=True)):
        if "/build" in f[len(ROOT):] or "/.git/" in f:
            continue
        out.append((os.path.relpath(f, ROOT), open(f, errors="replace").read()))
    for md in [ROOT + "/README.md"] + sorted(glob.glob(ROOT + "/docs/*.md")):
        text = open(md).read()
        for i, m in enumerate(re.finditer(r"```[a-z]*\n(.*?)```", text, re.S)):
            if re.search(r"\bkernel\s+\w+\s*\(", m.group(1)):
                out.append((f"{os.path.relpath(md, ROOT)}#{i}", m.group(1)))
    # the inline sources of the tests: runs of adjacent C string literals that declare a kernel
    lit = re.compile(r'(?:"(?:\\.|[^"\\\n])*"\s*){2,}')
    for c in sorted(glob.glob(ROOT + "/tests/test_lang*.c")) + [ROOT + "/tests/test_examples.c", ROOT + "/tests/test_e2e.c"]:
        text = open(c, errors="replace").read()
        for i, m in enumerate(lit.finditer(text)):
            parts = re.findall(r'"((?:\\.|[^"\\\n])*)"', m.group(0))
            body = "".join(parts).encode().decode("unicode_escape", errors="replace")
            if re.search(r"\bkernel\s+\w+\s*\(", body) and ": error:" not in body:  # not a source with its expected diagnostic
                out.append((f"{os.path.relpath(c, ROOT)}#{i}", body))
    return out


def tokens(src):
    return [t for t in TOK.findall(src) if not t.startswith("//") and not t.startswith("/*")]


def sig_idx(toks):
    return [i for i, t in enumerate(toks) if not t.isspace()]


def matching(toks, i):
    """Index of the bracket closing toks[i], or None."""
    pairs = {"(": ")", "[": "]", "{": "}"}
    o, c, d = toks[i], pairs[toks[i]], 0
    for j in range(i, len(toks)):
        if toks[j] == o:
            d += 1
        elif toks[j] == c:
            d -= 1
            if d == 0:
                return j
    return None


def top_args(toks, i, j):
    """Top-level comma-separated argument spans inside toks[i+1:j]."""
    spans, d, s = [], 0, i + 1
    for k in range(i + 1, j):
        t = toks[k]
        if t in "([{":
            d += 1
        elif t in ")]}":
            d -= 1
        elif t == "," and d == 0:
            spans.append((s, k))
            s = k + 1
    spans.append((s, j))
    return spans


def mutate_once(toks, r):
    idx = sig_idx(toks)
    if not idx:
        return toks
    idents = sorted({t for t in toks if re.match(r"[A-Za-z_]\w*$", t)})
    kind = r.randrange(14)
    i = r.choice(idx)
    t = toks[i]
    if kind == 0:  # delete a token
        return toks[:i] + toks[i + 1:]
    if kind == 1:  # duplicate a token
        return toks[:i] + [t, " "] + toks[i:]
    if kind == 2:  # swap two tokens
        j = r.choice(idx)
        toks = toks[:]
        toks[i], toks[j] = toks[j], toks[i]
        return toks
    if kind == 3:  # identifier -> another identifier or a builtin
        ids = [k for k in idx if re.match(r"[A-Za-z_]\w*$", toks[k])]
        if ids:
            k = r.choice(ids)
            toks = toks[:]
            toks[k] = r.choice(idents + BUILTINS if r.random() < 0.6 else BUILTINS)
        return toks
    if kind == 4:  # a number -> an edge value
        ns = [k for k in idx if re.match(r"\.?\d", toks[k])]
        if ns:
            k = r.choice(ns)
            toks = toks[:]
            toks[k] = r.choice(NUMS)
        return toks
    if kind == 5:  # a dtype -> another
        ds = [k for k in idx if toks[k] in DTYPES]
        if ds:
            k = r.choice(ds)
            toks = toks[:]
            toks[k] = r.choice(DTYPES)
        return toks
    if kind == 6:  # a shape [a, b] -> changed
        bs = [k for k in idx if toks[k] == "["]
        if bs:
            k = r.choice(bs)
            e = matching(toks, k)
            if e:
                shapes = ["[]", "[0]", "[1]", "[3]", "[1 << 20]", "[1 << 30]", "[2, 2, 2, 2, 2, 2, 2, 2]", "[64, 64, 64]",
                          "[-1]", "[16, 0]", "[None]", "[:, None]", "[None, :]", "[1, 2, 3, 4, 5, 6, 7, 8, 9]"]
                return toks[:k] + [r.choice(shapes)] + toks[e + 1:]
        return toks
    if kind == 7:  # drop a bracket
        bs = [k for k in idx if toks[k] in "()[]{}"]
        if bs:
            k = r.choice(bs)
            return toks[:k] + toks[k + 1:]
        return toks
    if kind == 8:  # swap two arguments of a call
        ps = [k for k in idx if toks[k] == "(" and k > 0]
        r.shuffle(ps)
        for k in ps[:5]:
            e = matching(toks, k)
            if not e:
                continue
            sp = top_args(toks, k, e)
            if len(sp) >= 2:
                a, b = r.sample(range(len(sp)), 2)
                a, b = min(a, b), max(a, b)
                (s1, e1), (s2, e2) = sp[a], sp[b]
                return toks[:s1] + toks[s2:e2] + toks[e1:s2] + toks[s1:e1] + toks[e2:]
        return toks
    if kind == 9:  # insert [None] after an identifier or a closing bracket
        ks = [k for k in idx if re.match(r"[A-Za-z_]\w*$", toks[k]) or toks[k] in ")]"]
        if ks:
            k = r.choice(ks)
            return toks[:k + 1] + [r.choice(["[None]", "[:, None]", "[None, :]", "[0]", "[None, None]"])] + toks[k + 1:]
        return toks
    if kind == 10:  # nest a statement in a loop or an if
        semis = [k for k in idx if toks[k] == ";"]
        if semis:
            e = r.choice(semis)
            s = e - 1
            while s > 0 and toks[s] not in (";", "{", "}"):
                s -= 1
            head = r.choice(["for zz in range(0, 3) { ", "for zz in static_range(0, 2) { ", "if program_id(0) < 2 { ",
                             "while false { ", "if true { ", "for zz in range(0, program_id(0)) { "])
            return toks[:s + 1] + [" ", head] + toks[s + 1:e + 1] + [" }"] + toks[e + 1:]
        return toks
    if kind == 11:  # const parameter -> run-time; or a let -> const
        cs = [k for k in idx if toks[k] == "const"]
        if cs:
            k = r.choice(cs)
            return toks[:k] + toks[k + 1:]
        return toks
    if kind == 12:  # insert an existing token somewhere else
        j = r.choice(idx)
        return toks[:i] + [toks[j], " "] + toks[i:]
    # 13: replace an operator
    ops = [k for k in idx if toks[k] in ("+", "-", "*", "/", "%", "<", ">", "==", "&", "|", "<<", ">>", "&&", "||")]
    if ops:
        k = r.choice(ops)
        toks = toks[:]
        toks[k] = r.choice(["+", "-", "*", "/", "%", "<", ">", "==", "&", "|", "<<", ">>", "&&", "||", "**", "//"])
    return toks


def mutate_ptx(text, r):
    lines = text.split("\n")
    for _ in range(r.randint(1, 3)):
        body = [i for i, l in enumerate(lines) if l.strip() and not l.strip().startswith("//")]
        if not body:
            break
        i = r.choice(body)
        k = r.randrange(7)
        if k == 0:
            del lines[i]
        elif k == 1:
            lines.insert(i, lines[i])
        elif k == 2:
            j = r.choice(body)
            lines[i], lines[j] = lines[j], lines[i]
        elif k == 3:  # a number
            ms = list(re.finditer(r"(?<![%\w])-?\d+", lines[i]))
            if ms:
                m = r.choice(ms)
                lines[i] = lines[i][:m.start()] + r.choice(["0", "-1", "4294967295", "65536", "1048576", "7", "2147483648",
                                                            "18446744073709551615", "100000000"]) + lines[i][m.end():]
        elif k == 4:  # a register or operand swapped with another of the line
            ms = list(re.finditer(r"%\w+", lines[i]))
            if len(ms) >= 2:
                a, b = r.sample(ms, 2)
                if a.start() > b.start():
                    a, b = b, a
                s = lines[i]
                lines[i] = s[:a.start()] + b.group() + s[a.end():b.start()] + a.group() + s[b.end():]
        elif k == 5:  # a type suffix changed
            ms = list(re.finditer(r"\.(?:[usbf](?:8|16|32|64)|pred|f16x2|bf16|v2|v4)\b", lines[i]))
            if ms:
                m = r.choice(ms)
                lines[i] = lines[i][:m.start()] + r.choice([".u32", ".s64", ".f32", ".b16", ".pred", ".f16x2", ".v4", ".b8",
                                                            ".f64", ".v2", ".u8"]) + lines[i][m.end():]
        else:  # a register number changed
            ms = list(re.finditer(r"%(r|rd|f|p|h|fd|hh)(\d+)", lines[i]))
            if ms:
                m = r.choice(ms)
                lines[i] = lines[i][:m.start(2)] + str(r.choice([0, 1, int(m.group(2)) + 1, 9999, 100000])) + lines[i][m.end(2):]
    return "\n".join(lines)


def run(cmd, tmo):
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:exitcode=66:allocator_may_return_null=1",
               LSAN_OPTIONS=f"suppressions={ROOT}/tests/lsan.supp", UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=67",
               TILE_CACHE_DIR=os.path.join(ROOT, "build-asan", "fuzz-cache"))
    try:
        # no address-space limit (ASan reserves terabytes): /usr/bin/time reports the peak RSS instead
        p = subprocess.run(["/usr/bin/time", "-f", "maxrss %M"] + cmd, capture_output=True, timeout=tmo, env=env)
        out = p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace")
        m = re.search(r"maxrss (\d+)\s*$", out)
        if m and int(m.group(1)) > 2 << 20:
            return "memory", out
        return p.returncode, out
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") + (e.stderr or b"").decode(errors="replace")
        return "timeout", out


def bad(rc, out):
    if rc == "timeout":
        return "hang"
    if rc == "memory":
        return "memory"
    if rc in (66, 67) or "ERROR: AddressSanitizer" in out or "runtime error:" in out or "LeakSanitizer" in out:
        return "sanitizer"
    if isinstance(rc, int) and rc < 0:
        return f"signal{-rc}"
    if rc == 70:
        return "finding"
    if rc not in (0,):
        return f"rc{rc}"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ptx", action="store_true")
    ap.add_argument("--out", default=os.path.join(ROOT, "build-asan", "fuzz-findings"))
    ap.add_argument("--drv", default=ROOT + "/build-asan/fuzzdrv")
    ap.add_argument("--only", default="", help="only the seeds whose path contains this text")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    r = random.Random(a.seed)
    ss = [s for s in seeds() if a.only in s[0]]
    print(f"{len(ss)} seeds", flush=True)
    stats = {}
    for it in range(a.iters):
        name, src = r.choice(ss)
        toks = tokens(src)
        for _ in range(1 if r.random() < 0.6 else r.randint(2, 3)):
            toks = mutate_once(toks, r)
        text = "".join(toks)
        path = f"{a.out}/cur.tile"
        open(path, "w").write(text)
        ptxdir = f"{a.out}/ptx"
        os.makedirs(ptxdir, exist_ok=True)
        if os.path.exists(ptxdir + "/k.ptx"):
            os.unlink(ptxdir + "/k.ptx")
        rc, out = run([a.drv, "tile", path, ptxdir], 60)
        k = bad(rc, out)
        compiled = "sm_80: ok" in out.lower() or "sm_80: TILE_OK" in out
        stats[k or ("ok" if " launch " in out or "launch " in out else "rejected")] = stats.get(k or ("ok" if "launch " in out else "rejected"), 0) + 1
        first = re.search(r"^\S+:\d+:\d+: error: .*$", out, re.M)
        if first:  # one line per rejection, for reading through: does each point at the right place?
            with open(f"{a.out}/diags.log", "a") as dl:
                dl.write(f"{a.seed}-{it} {name}: {first.group(0)[:300]}\n")
        if k:
            fn = f"{a.out}/{k}-{a.seed}-{it}"
            open(fn + ".tile", "w").write(text)
            open(fn + ".out", "w").write(f"seed file {name}\n{out[-20000:]}")
            print(f"[{it}] {k} from {name}: {fn}.tile", flush=True)
        if a.ptx and os.path.exists(ptxdir + "/k.ptx"):
            base = open(ptxdir + "/k.ptx").read()
            for j in range(3):
                m = mutate_ptx(base, r)
                pp = f"{a.out}/cur.ptx"
                open(pp, "w").write(m)
                rc, out = run([a.drv, "ptx", pp, "sm_80"], 40)
                k = bad(rc, out)
                stats["ptx-" + (k or "fine")] = stats.get("ptx-" + (k or "fine"), 0) + 1
                if k:
                    fn = f"{a.out}/ptx-{k}-{a.seed}-{it}-{j}"
                    open(fn + ".ptx", "w").write(m)
                    open(fn + ".out", "w").write(f"from {name}\n{out[-20000:]}")
                    print(f"[{it}.{j}] ptx {k} from {name}: {fn}.ptx", flush=True)
        if it % 20 == 19:
            print(f"[{it}] {stats}", flush=True)
    print(stats)


if __name__ == "__main__":
    main()
