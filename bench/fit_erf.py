"""Fit the f32 erf's two polynomials (lower/llvm_elementwise.c, OP_ERF) and check them in simulated f32.

    python3 bench/fit_erf.py      (NumPy; SPLIT=x moves the boundary between the ranges, default 1.0)

Range 1, |x| < SPLIT: erf(x) / x as a degree-6 polynomial in x^2; range 2, SPLIT <= |x| < 3.92:
log2(erfc(x)) + x^2 log2(e) as a degree-8 polynomial in x - (SPLIT + 3.92) / 2.  Both by weighted least
squares (Lawson's iteration towards minimax) against Python's math.erf / math.erfc; then the f32 evaluation
(each fma rounded once, 2^q exact as on the emulator) is compared with math.erf on about 130000 points.
Prints the fit errors, the f32 result's worst absolute and ulp error, and the coefficients."""
import numpy as np, math
erf = np.vectorize(math.erf); erfc = np.vectorize(math.erfc)
SPLIT = float(__import__("os").environ.get("SPLIT", "1.0"))
x = np.concatenate([np.cos(np.linspace(0, np.pi, 4000)) * SPLIT / 2 + SPLIT / 2, np.linspace(1e-6, SPLIT, 4000)])
x = x[x > 1e-9]
s = x * x
y = erf(x) / x
# range 1
V1 = np.vander(s, 7); w = np.ones_like(y)
for it in range(40):
    c1, *_ = np.linalg.lstsq((V1 / y[:, None]) * np.sqrt(w)[:, None], np.sqrt(w), rcond=None)
    err = np.abs(V1 @ c1 / y - 1); w = w * (err + 1e-30); w = np.maximum(w / w.max(), 1e-12)
L2E = 1.4426950408889634
x2 = np.concatenate([np.cos(np.linspace(0, np.pi, 4000)) * (3.92 - SPLIT) / 2 + (3.92 + SPLIT) / 2, np.linspace(SPLIT, 3.92, 4000)])
R = np.log2(erfc(x2)) + x2 * x2 * L2E
C = (SPLIT + 3.92) / 2
for deg in (6, 7, 8, 9):
    V = np.vander(x2 - C, deg + 1); w = np.ones_like(R)
    for it in range(40):
        c, *_ = np.linalg.lstsq(V * np.sqrt(w)[:, None], R * np.sqrt(w), rcond=None)
        err = np.abs(V @ c - R); w = w * (err + 1e-30); w = np.maximum(w / w.max(), 1e-12)
    print("deg", deg, "max err", err.max(), "coef max", np.abs(c).max())
    if deg == 8: c2 = c
f = np.float32
def fma(a, b, c): return f(float(a) * float(b) + float(c))
def f32erf(xv):
    ax = abs(f(xv)); s_ = f(ax * ax)
    cc = list(c1); cc[-1] = cc[-1] - 1.0   # P(s) - 1: erf = ax + ax * (P - 1), one rounding at the end
    p = f(cc[0])
    for k in cc[1:]: p = fma(p, s_, f(k))
    r1 = fma(ax, p, ax)
    t = f(ax - f(C))
    q = f(c2[0])
    for k in c2[1:]: q = fma(q, t, f(k))
    q = fma(f(-s_), f(L2E), q)   # -x^2 log2e + R
    e = f(2.0 ** float(q)); r2 = f(f(1) - e)
    r = r1 if ax < SPLIT else (f(1) if ax >= 3.92 else r2)
    return math.copysign(float(r), xv)
xs = np.concatenate([np.linspace(-6, 6, 120001), np.logspace(-10, 0, 10000), [1e-30, 1e-38, 0.0, 0.99999, 1.0, 1.00001, 3.9199, 3.92]])
res = [(abs(f32erf(float(f(xv))) - math.erf(float(f(xv)))), float(f(xv))) for xv in xs]
maxabs = max(res)
def ulp(w): return float(np.spacing(f(abs(w)))) if w != 0 else 1.4e-45
maxulp = max(abs(f32erf(float(f(xv))) - math.erf(float(f(xv)))) / ulp(math.erf(float(f(xv)))) for xv in xs)
print("max abs", maxabs, "max ulp", maxulp)
print("c1 =", ", ".join("%.17g" % v for v in c1[::-1]))
print("c2 =", ", ".join("%.17g" % v for v in c2[::-1]))
