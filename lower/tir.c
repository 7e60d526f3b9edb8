/* tir.c - Tile IR construction: types, layouts, values, instructions.
 *
 * Types and layouts are interned (linear probe over a small array; a kernel
 * has tens of distinct types), so passes compare them by pointer. */
#include "tir.h"
#include "../support/target.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const OpInfo tir_op_info[OP_COUNT] = {
#define X(e, n, no, nr, f) {n, no, nr, f},
    TIR_OPS(X)
#undef X
};

const char *const tir_cmp_names[] = {
#define X(e, n) n,
    TIR_CMP_PREDS(X)
#undef X
};
const char *const tir_red_names[] = {
#define X(e, n) n,
    TIR_REDUCE_KINDS(X)
#undef X
};

static DType asm_reg_type(char c) {
    switch (c) {
    case 'h': return DT_I16;
    case 'r': return DT_I32;
    case 'l': return DT_I64;
    case 'f': return DT_F32;
    case 'd': return DT_F64;
    default: return DT_VOID;
    }
}

const char *tir_asm_regs(const char *constraints, AsmRegs *r, char *buf, size_t len) {
    const char *c = constraints;
    r->nout = r->nin = 0;
    for (;;) {
        const char *e = strchr(c, ',');
        size_t n = e ? (size_t)(e - c) : strlen(c);
        while (n && (*c == ' ' || *c == '\t')) c++, n--;
        while (n && (c[n - 1] == ' ' || c[n - 1] == '\t')) n--;
        if (n && *c == '~') { /* a clobber: ~{name} */
            bool ok = n > 3 && c[1] == '{' && c[n - 1] == '}';
            for (size_t k = 2; ok && k < n - 1; k++) ok = isalnum((unsigned char)c[k]) || c[k] == '_' || c[k] == '.';
            if (!ok) {
                snprintf(buf, len, "the clobber '%.*s' is not of the form ~{name}", (int)n, c);
                return buf;
            }
        } else if (n && *c == '=') {
            size_t at = 1 + (n > 1 && c[1] == '&');
            DType t = n == at + 1 ? asm_reg_type(c[at]) : DT_VOID;
            if (r->nin) {
                snprintf(buf, len, "the output '%.*s' comes after an input: outputs come first, such as \"=r,=r,r\"", (int)n, c);
                return buf;
            }
            if (t == DT_VOID) {
                snprintf(buf, len, "the output '%.*s' is not one of =h, =r, =l, =f, =d", (int)n, c);
                return buf;
            }
            if (r->nout == TIR_ASM_MAX_REGS) {
                snprintf(buf, len, "more than %d output registers", TIR_ASM_MAX_REGS);
                return buf;
            }
            r->out[r->nout++] = t;
        } else {
            if (!r->nout) {
                snprintf(buf, len, "the constraints start with the outputs, such as \"=r,r\"");
                return buf;
            }
            DType t = DT_VOID;
            if (n == 1 && *c >= '0' && *c <= '9') t = *c - '0' < r->nout ? r->out[*c - '0'] : DT_VOID;
            else if (n == 1) t = asm_reg_type(*c);
            if (t == DT_VOID) {
                snprintf(buf, len, "'%.*s' is not one of h, r, l, f, d or the digit of an output (0 to %d)", (int)n, c,
                         r->nout - 1);
                return buf;
            }
            if (r->nin == TIR_ASM_MAX_REGS) {
                snprintf(buf, len, "more than %d input registers", TIR_ASM_MAX_REGS);
                return buf;
            }
            r->in[r->nin++] = t;
        }
        if (!e) break;
        c = e + 1;
    }
    if (!r->nout) {
        snprintf(buf, len, "no output, such as \"=r\"");
        return buf;
    }
    return NULL;
}

const char *tir_asm_text_check(const char *text, int noperands, char *buf, size_t len) {
    for (const char *p = text; (p = strchr(p, '$'));) {
        const char *at = p++;
        if (*p == '$') { /* $$: a literal $ */
            p++;
            continue;
        }
        bool braced = *p == '{';
        if (braced) p++;
        if (!isdigit((unsigned char)*p)) {
            snprintf(buf, len, "'%.*s' at offset %d: an operand is $N or ${N} with N from 0 to %d ($$ is a '$')", (int)(p - at + (*p != 0)), at,
                     (int)(at - text), noperands - 1);
            return buf;
        }
        long v = 0;
        while (isdigit((unsigned char)*p) && v < 100000) v = v * 10 + (*p++ - '0');
        if (braced && *p != '}') {
            snprintf(buf, len, "'%.*s' at offset %d: ${N} takes no modifier and needs its '}'", (int)(p - at + (*p != 0)), at, (int)(at - text));
            return buf;
        }
        if (braced) p++;
        if (v >= noperands) {
            snprintf(buf, len, "'%.*s' at offset %d names operand %ld, but there are %d ($0 to $%d)", (int)(p - at), at, (int)(at - text), v,
                     noperands, noperands - 1);
            return buf;
        }
    }
    return NULL;
}

int tir_asm_per_reg(int bits, int pack) { return bits < 32 ? (32 / bits < pack ? 32 / bits : pack) : 1; }

int tir_asm_value_regs(DType dt, int pack, int *bits) {
    int b = dt == DT_PTR ? 64 : dtype_bits(dt), e = tir_asm_per_reg(b, pack);
    *bits = e * b;
    return (pack + e - 1) / e;
}

bool tir_tma_reduce_ok(RedKind kind, DType elem) {
    bool half = elem == DT_F16 || elem == DT_BF16, int32 = elem == DT_U32 || elem == DT_I32;
    switch (kind) {
    case RED_SUM: return half || int32 || elem == DT_U64 || elem == DT_F32;
    case RED_MAX:
    case RED_MIN: return half || int32 || elem == DT_I64 || elem == DT_U64;
    case RED_AND:
    case RED_OR:
    case RED_XOR: return int32 || elem == DT_U64 || elem == DT_I64;
    default: return false;
    }
}

const char *const tir_sem_names[] = {
#define X(e, n) n,
    TIR_MEM_SEMS(X)
#undef X
};
const char *const tir_scope_names[] = {
#define X(e, n) n,
    TIR_MEM_SCOPES(X)
#undef X
};

const char *const tir_cop_names[COP_COUNT] = {
#define X(e, n) n,
    TIR_CACHE_COPS(X)
#undef X
};
const char *const tir_evict_names[EVICT_COUNT] = {
#define X(e, n) n,
    TIR_EVICTIONS(X)
#undef X
};

Op tir_op_from_name(const char *s, size_t n) {
    for (int i = 0; i < OP_COUNT; i++)
        if (strlen(tir_op_info[i].name) == n && !memcmp(tir_op_info[i].name, s, n)) return (Op)i;
    return OP_COUNT;
}

int tir_smem_limit(const char *arch) {
    const Target *t = target_find(arch);
    return t ? t->smem_dynamic : target_default()->smem_dynamic;
}

Module *tir_module_new(Arena *a) {
    Module *m = ARENA_NEW(a, Module);
    m->arena = a;
    m->arch = target_default()->name;
    return m;
}

Func *tir_func_new(Module *m, const char *name) {
    Func *f = ARENA_NEW(m->arena, Func);
    f->module = m;
    f->name = arena_strdup(m->arena, name);
    f->cap_values = 64;
    f->values = ARENA_ARRAY(m->arena, Value, f->cap_values);
    f->nvalues = 1;
    f->num_warps = 4;
    f->num_stages = 3;
    f->body = tir_block_new(f, NULL);
    if (m->nfuncs == m->cap_funcs) {
        int nc = m->cap_funcs ? m->cap_funcs * 2 : 4;
        m->funcs = arena_grow(m->arena, m->funcs, sizeof(Func *) * (size_t)m->cap_funcs, sizeof(Func *) * (size_t)nc);
        m->cap_funcs = nc;
    }
    m->funcs[m->nfuncs++] = f;
    return f;
}

FuncArg *tir_func_add_arg(Func *f, const char *name, const Type *t) {
    Arena *a = f->module->arena;
    if (!(f->nargs & (f->nargs - 1))) /* 0 or a power of two: full (the capacity doubles, 10000 arguments copied 10000 times) */
        f->args = arena_grow(a, f->args, sizeof(FuncArg) * (size_t)f->nargs, sizeof(FuncArg) * (size_t)(f->nargs ? 2 * f->nargs : 1));
    FuncArg *arg = &f->args[f->nargs++];
    arg->name = arena_strdup(a, name);
    arg->value = tir_block_add_arg(f, f->body, t);
    f->values[arg->value].name = arg->name;
    return arg;
}

static bool layout_eq(const Layout *a, const Layout *b) {
    if (a->kind != b->kind || a->rank != b->rank || a->dim != b->dim || a->parent != b->parent || a->kw != b->kw ||
        a->vpr != b->vpr)
        return false;
    for (int i = 0; i < a->rank; i++)
        if (a->spt[i] != b->spt[i] || a->tpw[i] != b->tpw[i] || a->wpc[i] != b->wpc[i] || a->order[i] != b->order[i])
            return false;
    return true;
}

const Layout *tir_layout_intern(Module *m, const Layout *l) {
    for (int i = 0; i < m->nlayouts; i++)
        if (layout_eq(m->layouts[i], l)) return m->layouts[i];
    if (m->nlayouts == m->cap_layouts) {
        int nc = m->cap_layouts ? m->cap_layouts * 2 : 16;
        m->layouts = arena_grow(m->arena, m->layouts, sizeof(void *) * (size_t)m->cap_layouts, sizeof(void *) * (size_t)nc);
        m->cap_layouts = nc;
    }
    Layout *n = ARENA_NEW(m->arena, Layout);
    *n = *l;
    /* canonical zero padding so field-wise compare is exact */
    for (int i = n->rank; i < TIR_MAX_RANK; i++) n->spt[i] = n->tpw[i] = n->wpc[i] = n->order[i] = 0;
    m->layouts[m->nlayouts++] = n;
    return n;
}

const Type *tir_type(Module *m, DType dt, int rank, const int32_t *shape, const Type *pointee, const Layout *layout) {
    Type t = {0};
    t.dt = dt;
    t.rank = (uint8_t)rank;
    for (int i = 0; i < rank; i++) t.shape[i] = shape[i];
    t.pointee = dt == DT_PTR ? pointee : NULL;
    t.layout = rank ? layout : NULL;
    for (int i = 0; i < m->ntypes; i++) {
        const Type *u = m->types[i];
        if (u->dt == t.dt && u->rank == t.rank && u->pointee == t.pointee && u->layout == t.layout &&
            !memcmp(u->shape, t.shape, sizeof t.shape))
            return u;
    }
    if (m->ntypes == m->cap_types) {
        int nc = m->cap_types ? m->cap_types * 2 : 32;
        m->types = arena_grow(m->arena, m->types, sizeof(void *) * (size_t)m->cap_types, sizeof(void *) * (size_t)nc);
        m->cap_types = nc;
    }
    Type *n = ARENA_NEW(m->arena, Type);
    *n = t;
    m->types[m->ntypes++] = n;
    return n;
}

const Type *tir_scalar(Module *m, DType dt) { return tir_type(m, dt, 0, NULL, NULL, NULL); }
const Type *tir_ptr(Module *m, const Type *pointee) { return tir_type(m, DT_PTR, 0, NULL, pointee, NULL); }
const Type *tir_with_shape(Module *m, const Type *t, int rank, const int32_t *shape) {
    return tir_type(m, t->dt, rank, shape, t->pointee, NULL);
}
const Type *tir_with_dtype(Module *m, const Type *t, DType dt) {
    return tir_type(m, dt, t->rank, t->shape, NULL, t->layout);
}
const Type *tir_with_layout(Module *m, const Type *t, const Layout *l) {
    return tir_type(m, t->dt, t->rank, t->shape, t->pointee, l);
}
const Type *tir_elem(Module *m, const Type *t) { return tir_type(m, t->dt, 0, NULL, t->pointee, NULL); }
bool tir_type_is_tensor(const Type *t) { return t->rank > 0; }
int64_t tir_type_numel(const Type *t) {
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++) n *= t->shape[i];
    return n;
}

ValueId tir_new_value(Func *f, const Type *t, Inst *def, int index) {
    if (f->nvalues == f->cap_values) {
        uint32_t nc = f->cap_values * 2;
        f->values = arena_grow(f->module->arena, f->values, sizeof(Value) * f->cap_values, sizeof(Value) * nc);
        f->cap_values = nc;
    }
    ValueId v = f->nvalues++;
    f->values[v] = (Value){.type = t, .def = def, .index = (uint16_t)index};
    return v;
}

Block *tir_block_new(Func *f, Inst *parent) {
    Block *b = ARENA_NEW(f->module->arena, Block);
    b->parent = parent;
    return b;
}

ValueId tir_block_add_arg(Func *f, Block *b, const Type *t) {
    if (!(b->nargs & (b->nargs - 1))) /* 0 or a power of two: full, the capacity doubles */
        b->args = arena_grow(f->module->arena, b->args, sizeof(ValueId) * (size_t)b->nargs,
                             sizeof(ValueId) * (size_t)(b->nargs ? 2 * b->nargs : 1));
    ValueId v = tir_new_value(f, t, NULL, b->nargs);
    f->values[v].block = b;
    b->args[b->nargs++] = v;
    return v;
}

Inst *tir_inst_new(Func *f, Op op, const ValueId *ops, int nops, const Type *const *res_types, int nres, Loc loc) {
    Arena *a = f->module->arena;
    Inst *i = ARENA_NEW(a, Inst);
    i->op = op;
    i->loc = loc;
    i->a.smem_offset = -1;
    i->nops = nops;
    i->ops = nops ? ARENA_ARRAY(a, ValueId, nops) : NULL;
    if (nops) memcpy(i->ops, ops, sizeof(ValueId) * (size_t)nops);
    i->nres = nres;
    i->res = nres ? ARENA_ARRAY(a, ValueId, nres) : NULL;
    for (int k = 0; k < nres; k++) i->res[k] = tir_new_value(f, res_types[k], i, k);
    return i;
}

void tir_block_append(Block *b, Inst *i) {
    i->parent = b;
    i->next = NULL;
    i->prev = b->last;
    if (b->last) b->last->next = i;
    else b->first = i;
    b->last = i;
}

void tir_insert_before(Inst *pos, Inst *i) {
    Block *b = pos->parent;
    i->parent = b;
    i->next = pos;
    i->prev = pos->prev;
    if (pos->prev) pos->prev->next = i;
    else b->first = i;
    pos->prev = i;
}

void tir_insert_after(Inst *pos, Inst *i) {
    if (pos->next) tir_insert_before(pos->next, i);
    else tir_block_append(pos->parent, i);
}

void tir_inst_remove(Inst *i) {
    Block *b = i->parent;
    if (!b) return;
    if (i->prev) i->prev->next = i->next;
    else b->first = i->next;
    if (i->next) i->next->prev = i->prev;
    else b->last = i->prev;
    i->prev = i->next = NULL;
    i->parent = NULL;
}

void tir_inst_add_region(Func *f, Inst *i, Block *b) {
    i->regions = arena_grow(f->module->arena, i->regions, sizeof(Block *) * (size_t)i->nregions, sizeof(Block *) * (size_t)(i->nregions + 1));
    i->regions[i->nregions++] = b;
    b->parent = i;
}

void tir_inst_set_operand(Func *f, Inst *i, int k, ValueId v) {
    (void)f;
    i->ops[k] = v;
}

Inst *tir_emit(Builder *b, Op op, const ValueId *ops, int nops, const Type *res_type) {
    Inst *i = tir_inst_new(b->f, op, ops, nops, &res_type, res_type ? 1 : 0, b->loc);
    if (b->before) tir_insert_before(b->before, i);
    else tir_block_append(b->block, i);
    return i;
}

ValueId tir_emit_v(Builder *b, Op op, const ValueId *ops, int nops, const Type *res_type) {
    return tir_emit(b, op, ops, nops, res_type)->res[0];
}

ValueId tir_const_int(Builder *b, const Type *t, int64_t v) {
    Inst *i = tir_emit(b, OP_CONST, NULL, 0, t);
    i->a.ival = v;
    return i->res[0];
}

ValueId tir_const_float(Builder *b, const Type *t, double v) {
    Inst *i = tir_emit(b, OP_CONST, NULL, 0, t);
    i->a.fval = v;
    i->a.is_float = 1;
    return i->res[0];
}

static bool replace_visit(Inst *i, void *ud) {
    ValueId *ft = ud;
    for (int k = 0; k < i->nops; k++)
        if (i->ops[k] == ft[0]) i->ops[k] = ft[1];
    return true;
}

bool tir_value_used(const Block *b, ValueId v) {
    for (const Inst *i = b->first; i; i = i->next) {
        for (int k = 0; k < i->nops; k++)
            if (i->ops[k] == v) return true;
        for (int r = 0; r < i->nregions; r++)
            if (tir_value_used(i->regions[r], v)) return true;
    }
    return false;
}

/* Where v can be read: a block argument in its block; an op's result after the op in the op's block (and in the
 * regions of the ops there), since a value defined in a region is not seen outside it.  Sets *from to the first op
 * to look at and returns true; false when v's definition is in no block (an op taken out): then look everywhere. */
static bool value_scope(const Func *f, ValueId v, Inst **from) {
    const Value *val = &f->values[v];
    if (val->def && val->def->parent) {
        *from = val->def->next;
        return true;
    }
    if (!val->def && val->block) {
        *from = val->block->first;
        return true;
    }
    return false;
}

/* Each call walks only where `from` can be read (value_scope), so that replacing the uses of every loop's
 * value in a kernel of many loops costs each loop its own body, not the whole kernel. */
void tir_replace_uses(Func *f, ValueId from, ValueId to) {
    ValueId ft[2] = {from, to};
    Inst *first;
    if (!value_scope(f, from, &first)) {
        tir_walk(f->body, replace_visit, ft);
        return;
    }
    for (Inst *i = first; i; i = i->next) {
        replace_visit(i, ft);
        for (int r = 0; r < i->nregions; r++) tir_walk(i->regions[r], replace_visit, ft);
    }
}

bool tir_result_used(const Func *f, ValueId v) {
    Inst *first;
    if (!value_scope(f, v, &first)) return tir_value_used(f->body, v);
    for (const Inst *i = first; i; i = i->next) {
        for (int k = 0; k < i->nops; k++)
            if (i->ops[k] == v) return true;
        for (int r = 0; r < i->nregions; r++)
            if (tir_value_used(i->regions[r], v)) return true;
    }
    return false;
}

static bool count_visit(Inst *i, void *ud) {
    int *c = ud;
    for (int k = 0; k < i->nops; k++) c[i->ops[k]]++;
    return true;
}

int *tir_use_counts(Func *f) {
    int *c = calloc(f->nvalues, sizeof(int));
    if (!c) out_of_memory();
    tir_walk(f->body, count_visit, c);
    return c;
}

bool tir_block_holds(const Block *b, Op op) {
    for (const Inst *i = b->first; i; i = i->next) {
        if (i->op == op) return true;
        for (int r = 0; r < i->nregions; r++)
            if (tir_block_holds(i->regions[r], op)) return true;
    }
    return false;
}

bool tir_walk(Block *b, TirVisitFn fn, void *ud) {
    for (Inst *i = b->first, *n; i; i = n) {
        n = i->next;
        if (!fn(i, ud)) return false;
        for (int r = 0; r < i->nregions; r++)
            if (!tir_walk(i->regions[r], fn, ud)) return false;
    }
    return true;
}
