/* layout.c - register tables and thread terms of distributed layouts.
 * See layout.h for the formulas; this file is pure arithmetic, no LLVM. */
#include "layout.h"

#include <stdlib.h>
#include <string.h>

const Layout *layout_root(const Layout *l) {
    while (l->kind == LAYOUT_SLICE) l = l->parent;
    return l;
}

int layout_root_dim(const Layout *l, int d) {
    while (l->kind == LAYOUT_SLICE) {
        if (d >= l->dim) d++;
        l = l->parent;
    }
    return d;
}

static int coverage_root(const Layout *b, int d) {
    switch (b->kind) {
    case LAYOUT_MMA: return d == 0 ? 16 * b->wpc[0] : 8 * b->wpc[1];
    case LAYOUT_DOT_A: return d == 0 ? 16 * b->parent->wpc[0] : b->kw;
    case LAYOUT_DOT_B: return d == 0 ? b->kw : 8 * b->parent->wpc[1];
    default: return b->spt[d] * b->tpw[d] * b->wpc[d];
    }
}

/* Thread terms of the mma-family layouts: g = lane/4 spans 8 rows (A, C) or columns (B),
 * t = lane%4 spans column pairs (C) or K (A, B); warps are warp_m = warp % wm, warp_n = warp / wm. */
static ThreadTerm mma_term(const Layout *b, int d) {
    const Layout *m = b->kind == LAYOUT_MMA ? b : b->parent;
    int wm = m->wpc[0], wn = m->wpc[1];
    ThreadTerm g_m = {4, 8, 1, 1, wm, 16}; /* rows of A and C */
    ThreadTerm g_n = {4, 8, 1, wm, wn, 8}; /* columns of B */
    ThreadTerm t_k = {1, 4, b->vpr, 1, 1, 0};
    ThreadTerm t_n = {1, 4, 2, wm, wn, 8}; /* columns of C */
    switch (b->kind) {
    case LAYOUT_MMA: return d == 0 ? g_m : t_n;
    case LAYOUT_DOT_A: return d == 0 ? g_m : t_k;
    default: return d == 0 ? t_k : g_n;
    }
}

int layout_coverage(const Layout *l, int d) { return coverage_root(layout_root(l), layout_root_dim(l, d)); }

ThreadTerm layout_thread_term(const Layout *l, int d) {
    const Layout *b = layout_root(l);
    int rd = layout_root_dim(l, d);
    if (b->kind != LAYOUT_BLOCKED) return mma_term(b, rd);
    ThreadTerm t = {0};
    int ls = 1, ws = 1;
    for (int i = 0; i < b->rank; i++) {
        int od = b->order[i];
        if (od == rd) {
            t.lane_stride = ls;
            t.lane_count = b->tpw[od];
            t.warp_stride = ws;
            t.warp_count = b->wpc[od];
        }
        ls *= b->tpw[od];
        ws *= b->wpc[od];
    }
    t.lane_mul = b->spt[rd];
    t.warp_mul = b->spt[rd] * b->tpw[rd];
    return t;
}

static int at_least_1(int v) { return v < 1 ? 1 : v; }

/* Registers of the mma-family layouts over root shape rs (see tir.h and layout.h). */
static int mma_regs(const Layout *b, const int32_t *rs, int32_t (**raw_out)[TIR_MAX_RANK]) {
    const Layout *m = b->kind == LAYOUT_MMA ? b : b->parent;
    int wm = m->wpc[0], wn = m->wpc[1];
    int n = 0;
    int32_t(*raw)[TIR_MAX_RANK];
    if (b->kind == LAYOUT_MMA) {
        int rm = at_least_1(rs[0] / (16 * wm)), rn = at_least_1(rs[1] / (8 * wn));
        raw = calloc((size_t)(rm * rn * 4), sizeof *raw);
        if (!raw) out_of_memory();
        for (int im = 0; im < rm; im++)
            for (int in = 0; in < rn; in++)
                for (int h = 0; h < 2; h++)
                    for (int e = 0; e < 2; e++, n++) {
                        raw[n][0] = im * 16 * wm + 8 * h;
                        raw[n][1] = in * 8 * wn + e;
                    }
    } else if (b->kind == LAYOUT_DOT_A) {
        int rm = at_least_1(rs[0] / (16 * wm)), nk = at_least_1(rs[1] / b->kw), per = 4 * b->vpr;
        raw = calloc((size_t)(rm * nk * per), sizeof *raw);
        if (!raw) out_of_memory();
        for (int im = 0; im < rm; im++)
            for (int kk = 0; kk < nk; kk++)
                for (int j = 0; j < per; j++, n++) {
                    int reg = j / b->vpr, e = j % b->vpr;
                    raw[n][0] = im * 16 * wm + 8 * (reg & 1);
                    raw[n][1] = kk * b->kw + e + (reg >> 1) * (b->kw / 2);
                }
    } else {
        int nk = at_least_1(rs[0] / b->kw), rn = at_least_1(rs[1] / (8 * wn)), per = 2 * b->vpr;
        raw = calloc((size_t)(rn * nk * per), sizeof *raw);
        if (!raw) out_of_memory();
        for (int in = 0; in < rn; in++)
            for (int kk = 0; kk < nk; kk++)
                for (int j = 0; j < per; j++, n++) {
                    int reg = j / b->vpr, e = j % b->vpr;
                    raw[n][0] = kk * b->kw + e + reg * (b->kw / 2);
                    raw[n][1] = in * 8 * wn;
                }
    }
    *raw_out = raw;
    return n;
}

/* Registers of blocked layout b over root shape rs (rank b->rank): fills raw coords. */
static int blocked_regs(const Layout *b, const int32_t *rs, int32_t (**raw_out)[TIR_MAX_RANK], int32_t *li_count) {
    if (b->kind != LAYOUT_BLOCKED) return mma_regs(b, rs, raw_out);
    int n = 1;
    for (int d = 0; d < b->rank; d++) {
        int cov = coverage_root(b, d);
        int reps = rs[d] / cov;
        if (reps < 1) reps = 1;
        li_count[d] = b->spt[d] * reps;
        n *= li_count[d];
    }
    int32_t(*raw)[TIR_MAX_RANK] = calloc((size_t)n, sizeof *raw);
    if (!raw) out_of_memory();
    for (int r = 0; r < n; r++) {
        int rem = r;
        for (int i = 0; i < b->rank; i++) {
            int d = b->order[i];
            int li = rem % li_count[d];
            rem /= li_count[d];
            raw[r][d] = (li / b->spt[d]) * coverage_root(b, d) + li % b->spt[d];
        }
    }
    *raw_out = raw;
    return n;
}

LayoutRegs layout_regs_of(const Layout *l, int rank, const int32_t *shape) {
    /* Walk down to the root, recording the sliced dims, to build the root shape. */
    const Layout *chain[TIR_MAX_RANK + 1];
    int depth = 0;
    for (const Layout *p = l; p->kind == LAYOUT_SLICE; p = p->parent) chain[depth++] = p;
    const Layout *b = layout_root(l);
    int32_t rs[TIR_MAX_RANK];
    /* root shape: insert size-1 dims at the sliced positions, innermost slice last */
    int32_t cur[TIR_MAX_RANK];
    int cr = rank;
    memcpy(cur, shape, sizeof(int32_t) * (size_t)rank);
    int sliced_mask = 0; /* in root dims */
    for (int k = 0; k < depth; k++) {
        int dim = chain[k]->dim;
        for (int i = cr; i > dim; i--) cur[i] = cur[i - 1];
        cur[dim] = 1;
        cr++;
    }
    memcpy(rs, cur, sizeof rs);
    /* which root dims are sliced: map each tensor dim to its root dim */
    int keep[TIR_MAX_RANK];
    for (int d = 0; d < rank; d++) keep[d] = layout_root_dim(l, d);
    for (int d = 0; d < b->rank; d++) {
        bool kept = false;
        for (int k = 0; k < rank; k++) kept |= keep[k] == d;
        if (!kept) sliced_mask |= 1 << d;
    }
    int32_t li_count[TIR_MAX_RANK];
    int32_t(*raw)[TIR_MAX_RANK];
    int nb = blocked_regs(b, rs, &raw, li_count);
    LayoutRegs out = {0};
    out.rank = rank;
    out.stat = calloc((size_t)nb, sizeof *out.stat);
    out.raw = calloc((size_t)nb, sizeof *out.raw);
    if (!out.stat || !out.raw) out_of_memory();
    for (int r = 0; r < nb; r++) {
        bool first = true;
        for (int d = 0; d < b->rank; d++)
            if ((sliced_mask >> d & 1) && raw[r][d] != 0) first = false;
        if (!first) continue;
        for (int k = 0; k < rank; k++) {
            out.raw[out.n][k] = raw[r][keep[k]];
            out.stat[out.n][k] = raw[r][keep[k]] & (shape[k] - 1);
        }
        out.n++;
    }
    free(raw);
    return out;
}

LayoutRegs layout_regs(const Type *t) {
    if (!t->rank) {
        LayoutRegs r = {.n = 1, .rank = 0};
        r.stat = calloc(1, sizeof *r.stat);
        r.raw = calloc(1, sizeof *r.raw);
        return r;
    }
    if (!t->layout) unreachable("tensor without layout");
    return layout_regs_of(t->layout, t->rank, t->shape);
}

bool layout_cols_in_chunks(const Type *t, int w) {
    if (t->rank != 2 || !t->layout || w < 1 || t->shape[1] % w || layout_coverage(t->layout, 1) > t->shape[1]) return false;
    ThreadTerm tt = layout_thread_term(t->layout, 1);
    int span = (tt.lane_count > 1 ? (tt.lane_count - 1) * tt.lane_mul : 0) + (tt.warp_count > 1 ? (tt.warp_count - 1) * tt.warp_mul : 0);
    LayoutRegs r = layout_regs(t);
    bool ok = true;
    for (int k = 0; k < r.n && ok; k++) ok = r.raw[k][1] < t->shape[1] && r.stat[k][1] / w == (r.stat[k][1] + span) / w;
    layout_regs_free(&r);
    return ok;
}

void layout_regs_free(LayoutRegs *r) {
    free(r->stat);
    free(r->raw);
    r->stat = r->raw = NULL;
}

int layout_regs_find(const LayoutRegs *r, const int32_t *coord) {
    for (int i = 0; i < r->n; i++) {
        bool eq = true;
        for (int d = 0; d < r->rank && eq; d++) eq = r->stat[i][d] == coord[d];
        if (eq) return i;
    }
    return -1;
}

static ThreadTerm norm_term(ThreadTerm t) {
    if (t.lane_count <= 1) t.lane_stride = t.lane_count = 1, t.lane_mul = 0;
    if (t.warp_count <= 1) t.warp_stride = t.warp_count = 1, t.warp_mul = 0;
    return t;
}

bool layout_convert_is_local(const Type *from, const Type *to) {
    if (!from->layout || !to->layout || from->rank != to->rank || !from->rank) return false;
    if (layout_root(from->layout)->kind == LAYOUT_SHARED || layout_root(to->layout)->kind == LAYOUT_SHARED) return false;
    for (int d = 0; d < from->rank; d++) {
        if (from->shape[d] != to->shape[d]) return false;
        ThreadTerm a = norm_term(layout_thread_term(from->layout, d)), b = norm_term(layout_thread_term(to->layout, d));
        if (memcmp(&a, &b, sizeof a)) return false;
    }
    LayoutRegs fr = layout_regs(from), tr = layout_regs(to);
    bool ok = true;
    for (int r = 0; r < tr.n && ok; r++) ok = layout_regs_find(&fr, tr.stat[r]) >= 0;
    layout_regs_free(&fr);
    layout_regs_free(&tr);
    return ok;
}

int layout_xor_partner(const Type *t, int ax, int j) {
    const Layout *l = t->layout;
    if (!l || l->kind != LAYOUT_BLOCKED || t->shape[ax] < layout_coverage(l, ax)) return 0;
    int spt = l->spt[ax], tpw = l->tpw[ax];
    if (j < spt || j >= layout_coverage(l, ax)) return 1; /* the element or the repetition bits */
    return j < spt * tpw ? 2 : 0;
}

Layout layout_blocked_for(int rank, const int32_t *shape, const int *order, int vec, int num_warps) {
    Layout l = {0};
    l.kind = LAYOUT_BLOCKED;
    l.rank = (uint8_t)rank;
    for (int i = 0; i < rank; i++) l.order[i] = (uint8_t)(order ? order[i] : rank - 1 - i);
    for (int d = 0; d < rank; d++) l.spt[d] = l.tpw[d] = l.wpc[d] = 1;
    int f = l.order[0];
    int v = vec < 1 ? 1 : vec;
    if (v > shape[f]) v = shape[f];
    l.spt[f] = (uint8_t)v;
    /* lanes along order, fastest first */
    int lanes = 32;
    for (int i = 0; i < rank && lanes > 1; i++) {
        int d = l.order[i];
        int want = shape[d] / l.spt[d];
        if (want < 1) want = 1;
        int t = want < lanes ? want : lanes;
        l.tpw[d] = (uint8_t)t;
        lanes /= t;
    }
    l.tpw[f] = (uint8_t)(l.tpw[f] * lanes); /* leftover lanes replicate along the fastest dim */
    /* warps along order, slowest first */
    int warps = num_warps;
    for (int i = rank - 1; i >= 0 && warps > 1; i--) {
        int d = l.order[i];
        int want = shape[d] / (l.spt[d] * l.tpw[d]);
        if (want < 1) want = 1;
        int w = want < warps ? want : warps;
        l.wpc[d] = (uint8_t)w;
        warps /= w;
    }
    int s = l.order[rank - 1];
    l.wpc[s] = (uint8_t)(l.wpc[s] * warps);
    return l;
}

Layout layout_slice(const Layout *parent, int dim) {
    Layout l = {0};
    l.kind = LAYOUT_SLICE;
    l.rank = (uint8_t)(parent->rank - 1);
    l.dim = (int8_t)dim;
    l.parent = parent;
    return l;
}

Layout layout_permute(const Layout *b, const int32_t *perm) {
    Layout l = *b;
    int inv[TIR_MAX_RANK];
    for (int i = 0; i < b->rank; i++) {
        l.spt[i] = b->spt[perm[i]];
        l.tpw[i] = b->tpw[perm[i]];
        l.wpc[i] = b->wpc[perm[i]];
        inv[perm[i]] = i;
    }
    for (int i = 0; i < b->rank; i++) l.order[i] = (uint8_t)inv[b->order[i]];
    return l;
}
