"""kernels.py - Triton versions of tile's shipped kernels, for the SASS
comparison of bench/sass_report.py (issue 13).  Never run: only compiled.

Each kernel solves the same problem as its kernels/**/*.tile counterpart with
the same masks (sizes need not be multiples of the tile), the same tile
sizes and, in triton_ref/compile.py, the same num_warps / num_stages and
the same argument specializations (strides divisible by 16, unit strides).
They are written from the algorithms in tile's own kernel comments (grouped
GEMM order, FlashAttention-2's online softmax in the log2 domain with one fma
per score, vLLM-style paged decode and fused-MoE gathers), in plain Triton:
  matmul       kernels/gemm/gemm.tile gemm_program (alpha = 1, no beta, bias,
               activation or split-K: the shipped default launch) and
               kernels/matmul.tile (f32, ieee products);
  attention    kernels/attention/attention.tile (one loop, the causal mask
               applied in every iteration, as tile's kernel; Triton's
               tutorial splits the diagonal block off instead).  KEY_MASK
               = 0 drops what the tutorial's kernel assumes away (seq_k a
               multiple of BN, every row sees a key: no load masks, no
               -inf guard): a different, easier problem, kept to compare
               with the tutorial's numbers;
  paged        kernels/attention/paged_attention.tile, SPLIT = false;
  moe_gate_up  kernels/moe/experts.tile gate_up_program (no weight scales, or
               f8e4m3 weights with 128 x 128 block scales);
  moe_down     kernels/moe/experts.tile down_program;
  add_rmsnorm  kernels/norm/norm.tile with RESIDUAL, RMSNorm, no quantization;
  silu_mul     kernels/norm/act.tile with ACT = 0 (SiLU), no quantization;
  router       kernels/moe/router.tile with its defaults (softmax, top-2,
               no groups, no bias, no renormalization).
"""
import triton
import triton.language as tl


@triton.jit
def matmul(a, b, c, M, N, K, sam, sak, sbk, sbn, scm,
           BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr, PRECISION: tl.constexpr):
    # grouped program order, as gemm_program
    pid = tl.program_id(0)
    num_m = tl.cdiv(M, BM)
    num_n = tl.cdiv(N, BN)
    per_group = GROUP_M * num_n
    first_m = (pid // per_group) * GROUP_M
    group_rows = min(num_m - first_m, GROUP_M)
    pm = first_m + (pid % per_group) % group_rows
    pn = (pid % per_group) // group_rows
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    if c.dtype.element_ty == tl.int32:
        acc = tl.zeros((BM, BN), dtype=tl.int32)
    else:
        acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + rk
        ta = tl.load(a + rm[:, None] * sam + kk[None, :] * sak, mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0)
        tb = tl.load(b + kk[:, None] * sbk + rn[None, :] * sbn, mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(ta, tb, acc, input_precision=PRECISION)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(c + rm[:, None] * scm + rn[None, :], acc.to(c.dtype.element_ty), mask=mask)


@triton.jit
def attention(q, k, v, o, lse, seq_q, seq_k, heads_q, group,
              sqb, sqs, sqh, skb, sks, skh, svb, svs, svh, sob, sos, soh, slb, slh, scale,
              HEAD_DIM: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, CAUSAL: tl.constexpr,
              WRITE_LSE: tl.constexpr, KEY_MASK: tl.constexpr):
    m0 = tl.program_id(0) * BM
    bh = tl.program_id(1)
    b = bh // heads_q
    h = bh % heads_q
    hk = h // group
    b64 = b.to(tl.int64)
    q_base = q + b64 * sqb + h * sqh
    k_base = k + b64 * skb + hk * skh
    v_base = v + b64 * svb + hk * svh
    o_base = o + b64 * sob + h * soh
    l_base = lse + b64 * slb + h * slh
    rm = m0 + tl.arange(0, BM)
    rn = tl.arange(0, BN)
    rd = tl.arange(0, HEAD_DIM)
    qmask = rm[:, None] < seq_q
    tq = tl.load(q_base + rm[:, None] * sqs + rd[None, :], mask=qmask, other=0.0)
    if scale < 0.0:  # the row max is over unscaled scores: the factor must be >= 0
        tq = -tq
    diag = seq_k - seq_q
    lo = 0
    hi = seq_k
    if CAUSAL:
        hi = min(hi, m0 + BM + diag)
    if m0 >= seq_q:
        hi = lo
    qk_scale = tl.abs(scale) * 1.4426950408889634
    m_i = tl.full((BM,), float("-inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, HEAD_DIM), tl.float32)
    for n0 in range(lo, hi, BN):
        cols = n0 + rn
        kvmask = cols[:, None] < seq_k
        if KEY_MASK:
            tk = tl.load(k_base + cols[:, None] * sks + rd[None, :], mask=kvmask, other=0.0)
        else:
            tk = tl.load(k_base + cols[:, None] * sks + rd[None, :])
        s = tl.dot(tq, tl.trans(tk))
        if KEY_MASK:
            visible = tl.broadcast_to(cols[None, :] < seq_k, (BM, BN))
            if CAUSAL:
                visible = visible & (cols[None, :] <= rm[:, None] + diag)
            s = tl.where(visible, s, float("-inf"))
        elif CAUSAL:
            s = tl.where(cols[None, :] <= rm[:, None] + diag, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
        if KEY_MASK:
            m_use = tl.where(m_new == float("-inf"), 0.0, m_new)
        else:
            m_use = m_new
        p = tl.math.exp2(s * qk_scale - m_use[:, None])
        alpha = tl.math.exp2(m_i - m_use)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        if KEY_MASK:
            tv = tl.load(v_base + cols[:, None] * svs + rd[None, :], mask=kvmask, other=0.0)
        else:
            tv = tl.load(v_base + cols[:, None] * svs + rd[None, :])
        acc = tl.dot(p.to(tv.dtype), tv, acc)
        m_i = m_new
    empty = l_i == 0.0
    out = acc / tl.where(empty, 1.0, l_i)[:, None]
    tl.store(o_base + rm[:, None] * sos + rd[None, :], out.to(o.dtype.element_ty), mask=qmask)
    if WRITE_LSE:
        row_lse = tl.where(empty, float("-inf"), (m_i + tl.math.log2(tl.where(empty, 1.0, l_i))) * 0.6931471805599453)
        tl.store(l_base + rm, row_lse, mask=rm < seq_q)


@triton.jit
def paged(q, kc, vc, o, block_tables, context_lens, num_tokens, group,
          sqs, sqt, sqh, skb, sks, skh, svb, svs, svh, sos, sot, soh, sbt, scale,
          HEAD_DIM: tl.constexpr, BLOCK_SIZE: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr):
    hk = tl.program_id(0)
    seq = tl.program_id(1)
    ctx = tl.load(context_lens + seq)
    table = block_tables + seq.to(tl.int64) * sbt
    r = tl.arange(0, BM)
    t = r // group
    hq = hk * group + r % group
    rvalid = r < group * num_tokens
    rd = tl.arange(0, HEAD_DIM)
    qmask = rvalid[:, None]
    tq = tl.load(q + seq.to(tl.int64) * sqs + (t * sqt + hq * sqh)[:, None] + rd[None, :], mask=qmask, other=0.0)
    qpos = ctx - num_tokens + t
    if scale < 0.0:
        tq = -tq
    qk_scale = tl.abs(scale) * 1.4426950408889634
    m_i = tl.full((BM,), float("-inf"), tl.float32)
    l_i = tl.zeros((BM,), tl.float32)
    acc = tl.zeros((BM, HEAD_DIM), tl.float32)
    rn = tl.arange(0, BN)
    k_head = kc + hk * skh
    v_head = vc + hk * svh
    for n0 in range(0, ctx, BN):
        pos = n0 + rn
        kvalid = pos < ctx
        blk = tl.load(table + pos // BLOCK_SIZE, mask=kvalid, other=0)
        slot = pos % BLOCK_SIZE
        koff = blk.to(tl.int64) * skb + slot * sks
        tk = tl.load(k_head + koff[:, None] + rd[None, :], mask=kvalid[:, None], other=0.0)
        s = tl.dot(tq, tl.trans(tk.to(tq.dtype)))
        vis = kvalid[None, :] & (pos[None, :] <= qpos[:, None])
        s = tl.where(vis, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale)
        m_use = tl.where(m_new == float("-inf"), 0.0, m_new)
        p = tl.math.exp2(s * qk_scale - m_use[:, None])
        alpha = tl.math.exp2(m_i - m_use)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        voff = blk.to(tl.int64) * svb + slot * svs
        tv = tl.load(v_head + voff[:, None] + rd[None, :], mask=kvalid[:, None], other=0.0)
        acc = tl.dot(p.to(tq.dtype), tv.to(tq.dtype), acc)
        m_i = m_new
    empty = l_i == 0.0
    out = acc / tl.where(empty, 1.0, l_i)[:, None]
    optr = o + seq.to(tl.int64) * sos + (t * sot + hq * soh)[:, None] + rd[None, :]
    tl.store(optr, out.to(o.dtype.element_ty), mask=qmask)


@triton.jit
def moe_gate_up(x, w1, w1s, h, sorted_ids, expert_ids, total, n_slots, topk, hidden, inter, sx,
                BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, BLOCK_SCALES: tl.constexpr):
    pm = tl.program_id(0)
    if pm * BM >= tl.load(total):
        return
    e = tl.load(expert_ids + pm)
    slot = tl.load(sorted_ids + pm * BM + tl.arange(0, BM))
    valid = slot < n_slots
    tok = slot // topk
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    wg = w1 + e.to(tl.int64) * (2 * inter) * hidden
    wu = wg + inter.to(tl.int64) * hidden
    # BLOCK_SCALES: f8e4m3 weights with one f32 scale per 128 x 128 block (experts.tile's SCALE_BLOCK)
    nbh = tl.cdiv(hidden, 128)
    nbi = tl.cdiv(inter, 128)
    sg = w1s + (e.to(tl.int64) * (2 * nbi) + tl.program_id(1) * BN // 128) * nbh
    su = sg + nbi.to(tl.int64) * nbh
    acc_g = tl.zeros((BM, BN), tl.float32)
    acc_u = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, hidden, BK):
        kk = k0 + rk
        ta = tl.load(x + tok[:, None] * sx + kk[None, :], mask=valid[:, None] & (kk[None, :] < hidden), other=0.0)
        bmask = (kk[:, None] < hidden) & (rn[None, :] < inter)
        tg = tl.load(wg + rn[None, :] * hidden + kk[:, None], mask=bmask, other=0.0)
        tu = tl.load(wu + rn[None, :] * hidden + kk[:, None], mask=bmask, other=0.0)
        if BLOCK_SCALES:
            acc_g += tl.dot(ta, tg.to(ta.dtype)) * tl.load(sg + k0 // 128)
            acc_u += tl.dot(ta, tu.to(ta.dtype)) * tl.load(su + k0 // 128)
        else:
            acc_g = tl.dot(ta, tg, acc_g)
            acc_u = tl.dot(ta, tu, acc_u)
    act = acc_g / (1.0 + tl.exp(-acc_g)) * acc_u
    hmask = valid[:, None] & (rn[None, :] < inter)
    tl.store(h + slot[:, None] * inter + rn[None, :], act.to(h.dtype.element_ty), mask=hmask)


@triton.jit
def moe_down(h, w2, out, topk_w, sorted_ids, expert_ids, total, n_slots, topk, hidden, inter, so,
             BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    if pm * BM >= tl.load(total):
        return
    e = tl.load(expert_ids + pm)
    slot = tl.load(sorted_ids + pm * BM + tl.arange(0, BM))
    valid = slot < n_slots
    tok = slot // topk
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    wb = w2 + e.to(tl.int64) * hidden * inter
    acc = tl.zeros((BM, BN), tl.float32)
    for k0 in range(0, inter, BK):
        kk = k0 + rk
        ta = tl.load(h + slot[:, None] * inter + kk[None, :], mask=valid[:, None] & (kk[None, :] < inter), other=0.0)
        tb = tl.load(wb + rn[None, :] * inter + kk[:, None], mask=(kk[:, None] < inter) & (rn[None, :] < hidden),
                     other=0.0)
        acc = tl.dot(ta, tb, acc)
    wt = tl.load(topk_w + slot, mask=valid, other=0.0)
    omask = valid[:, None] & (rn[None, :] < hidden)
    tl.atomic_add(out + tok[:, None] * so + rn[None, :], acc * wt[:, None], mask=omask)


@triton.jit
def add_rmsnorm(x, res, w, out, hidden, sx, sr, so, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    px = x + row * sx
    pr = res + row * sr
    po = out + row * so
    acc = tl.zeros((BLOCK,), tl.float32)
    for off in range(0, hidden, BLOCK):
        c = off + cols
        m = c < hidden
        zr = (tl.load(px + c, mask=m, other=0.0).to(tl.float32) + tl.load(pr + c, mask=m, other=0.0).to(tl.float32))
        zr = zr.to(res.dtype.element_ty)
        tl.store(pr + c, zr, mask=m)
        z = zr.to(tl.float32)
        acc += z * z
    tl.debug_barrier()
    r = tl.math.rsqrt(tl.sum(acc, 0) / hidden + eps)
    for off in range(0, hidden, BLOCK):
        c = off + cols
        m = c < hidden
        y = tl.load(pr + c, mask=m, other=0.0).to(tl.float32) * r * tl.load(w + c, mask=m, other=0.0).to(tl.float32)
        tl.store(po + c, y.to(out.dtype.element_ty), mask=m)


@triton.jit
def silu_mul(x, out, d, sx, so, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    pg = x + row * sx
    pu = pg + d
    po = out + row * so
    for off in range(0, d, BLOCK):
        c = off + cols
        m = c < d
        g = tl.load(pg + c, mask=m, other=0.0).to(tl.float32)
        u = tl.load(pu + c, mask=m, other=0.0).to(tl.float32)
        tl.store(po + c, (g / (1.0 + tl.exp(-g)) * u).to(out.dtype.element_ty), mask=m)


@triton.jit
def router(logits, topk_ids, topk_w, tokens, experts, sl, scale,
           K: tl.constexpr, KP: tl.constexpr, BT: tl.constexpr, BE: tl.constexpr):
    # softmax scores, top-K by logit (lowest expert index on ties), weights not renormalized
    rows = tl.program_id(0) * BT + tl.arange(0, BT)
    cols = tl.arange(0, BE)
    rmask = rows < tokens
    cmask = cols < experts
    lg = tl.load(logits + rows[:, None] * sl + cols[None, :], mask=rmask[:, None] & cmask[None, :], other=0.0)
    lg = tl.where(cmask[None, :], lg.to(tl.float32), float("-inf"))
    ex = tl.exp(lg - tl.max(lg, 1)[:, None])
    s = ex / tl.sum(ex, 1)[:, None]
    choice = lg
    kcol = tl.arange(0, KP)
    ids = tl.zeros((BT, KP), tl.int32)
    wts = tl.zeros((BT, KP), tl.float32)
    for j in range(0, K):
        best = tl.max(choice, 1)
        idx = tl.min(tl.where(choice == best[:, None], cols[None, :], BE), 1)
        hit = cols[None, :] == idx[:, None]
        w = tl.sum(tl.where(hit, s, 0.0), 1)
        ids = tl.where(kcol[None, :] == j, idx[:, None], ids)
        wts = tl.where(kcol[None, :] == j, w[:, None], wts)
        choice = tl.where(hit, float("-inf"), choice)
    omask = rmask[:, None] & (kcol[None, :] < K)
    optr = rows[:, None] * K + kcol[None, :]
    tl.store(topk_ids + optr, ids, mask=omask)
    tl.store(topk_w + optr, wts * scale, mask=omask)
