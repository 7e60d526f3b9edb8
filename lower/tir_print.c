/* tir_print.c - the textual form of Tile IR.
 *
 *   #L0 = blocked<spt=[1,4], tpw=[4,8], wpc=[4,1], order=[1,0]>
 *   kernel @add(%x: ptr<f32> #div16, %n: i32) num_warps=4 num_stages=3 smem=0 {
 *     %0 = program_id {axis=0} : i32
 *     %1 = arange {start=0, end=1024} : tensor<1024xi32, #L0>
 *     %2:2 = for %a, %b, %c, %d, %e : tensor<..>, tensor<..> {
 *     ^(%3: i32, %4: tensor<..>, %5: tensor<..>):
 *       yield %4, %5
 *     }
 *     return
 *   }
 *
 * Values are renumbered densely in program order, so the same function
 * prints the same text however it was built; kernel arguments print by name.
 * tir_parse() reads exactly this form back. */
#include "tir.h"
#include "../support/target.h"

#include <stdlib.h>
#include <string.h>

typedef struct Printer {
    Str *s;
    const Func *f;
    const Module *m;
    int *alias; /* by index in m->layouts: its #L number, -1 when no value uses it */
    int32_t *num;   /* value id -> printed number, -1: named argument */
    int next;
} Printer;

void tir_print_layout(Str *s, const Layout *l) {
    static const char *kinds[] = {"blocked", "slice", "dot_a", "dot_b", "mma", "shared"};
    str_printf(s, "%s<", kinds[l->kind]);
    if (l->kind == LAYOUT_SHARED) {
        str_puts(s, "order=[");
        for (int d = 0; d < l->rank; d++) str_printf(s, "%s%d", d ? "," : "", l->order[d]);
        str_puts(s, "]");
    } else if (l->kind == LAYOUT_MMA) {
        str_printf(s, "wpc=[%d,%d]", l->wpc[0], l->wpc[1]);
    } else if (l->kind == LAYOUT_BLOCKED) {
        const uint8_t *arr[4] = {l->spt, l->tpw, l->wpc, l->order};
        const char *names[4] = {"spt", "tpw", "wpc", "order"};
        for (int k = 0; k < 4; k++) {
            str_printf(s, "%s%s=[", k ? ", " : "", names[k]);
            for (int d = 0; d < l->rank; d++) str_printf(s, "%s%d", d ? "," : "", arr[k][d]);
            str_puts(s, "]");
        }
    } else {
        if (l->kind == LAYOUT_SLICE) str_printf(s, "dim=%d, ", l->dim);
        else str_printf(s, "kw=%d, vpr=%d, ", l->kw, l->vpr);
        tir_print_layout(s, l->parent);
    }
    str_puts(s, ">");
}

static void print_layout_ref(Printer *p, const Layout *l) {
    if (p->m && p->alias) {
        for (int i = 0; i < p->m->nlayouts; i++)
            if (p->m->layouts[i] == l && p->alias[i] >= 0) {
                str_printf(p->s, "#L%d", p->alias[i]);
                return;
            }
    }
    tir_print_layout(p->s, l);
}

static void print_type(Printer *p, const Type *t) {
    Str *s = p->s;
    if (t->rank) {
        str_puts(s, "tensor<");
        for (int i = 0; i < t->rank; i++) str_printf(s, "%dx", t->shape[i]);
    }
    if (t->dt == DT_PTR) {
        str_puts(s, "ptr<");
        print_type(p, t->pointee);
        str_puts(s, ">");
    } else {
        str_puts(s, dtype_name(t->dt));
    }
    if (t->rank) {
        if (t->layout) {
            str_puts(s, ", ");
            print_layout_ref(p, t->layout);
        }
        str_puts(s, ">");
    }
}

void tir_print_type(Str *s, const Type *t) {
    Printer p = {.s = s};
    print_type(&p, t);
}

static void print_value(Printer *p, ValueId v) {
    if (v == 0 || v >= p->f->nvalues) {
        str_puts(p->s, "%<bad>");
        return;
    }
    if (p->num[v] == -1) str_printf(p->s, "%%%s", p->f->values[v].name);
    else if (p->num[v] < -1) str_puts(p->s, "%<undefined>");
    else str_printf(p->s, "%%%d", p->num[v]);
}

static void number_value(Printer *p, ValueId v) {
    if (p->num[v] < -1) p->num[v] = p->next++;
}

static void indent(Str *s, int n) {
    for (int i = 0; i < n; i++) str_puts(s, "  ");
}

static void print_attrs(Printer *p, const Inst *i) {
    Str *s = p->s;
    const Attrs *a = &i->a;
    char buf[256] = {0};
    Str t = {0};
    switch (i->op) {
    case OP_CONST:
        if (a->is_float) str_printf(&t, "value=%.17g", a->fval);
        else str_printf(&t, "value=%lld", (long long)a->ival);
        break;
    case OP_ARANGE: str_printf(&t, "start=%lld, end=%lld", (long long)a->ival, (long long)a->ival2); break;
    case OP_PROGRAM_ID:
    case OP_NUM_PROGRAMS:
    case OP_EXPAND_DIMS:
    case OP_REDUCE_FN:
    case OP_SCAN_FN: str_printf(&t, "axis=%lld", (long long)a->ival); break;
    case OP_GATHER:
        str_printf(&t, "axis=%lld", (long long)a->ival);
        if (a->ival2) str_printf(&t, ", xor=%lld", (long long)a->ival2);
        break;
    case OP_TRANS: {
        const Type *rt = p->f->values[i->res[0]].type;
        str_puts(&t, "perm=[");
        for (int d = 0; d < rt->rank; d++) str_printf(&t, "%s%d", d ? "," : "", a->perm[d]);
        str_puts(&t, "]");
        break;
    }
    case OP_MULTIPLE_OF:
    case OP_MAX_CONTIGUOUS:
    case OP_MAX_CONSTANCY: {
        const Type *rt = p->f->values[i->res[0]].type;
        str_puts(&t, "values=[");
        for (int d = 0; d < (rt->rank ? rt->rank : 1); d++) str_printf(&t, "%s%d", d ? "," : "", a->perm[d]);
        str_puts(&t, "]");
        break;
    }
    case OP_REDUCE:
    case OP_SCAN: str_printf(&t, "kind=%s, axis=%lld", tir_red_names[a->ival2], (long long)a->ival); break;
    case OP_CMP: str_printf(&t, "pred=%s", tir_cmp_names[a->ival2]); break;
    case OP_ATOMIC_RMW: str_printf(&t, "kind=%s", a->ival2 == RED_SUM ? "add" : tir_red_names[a->ival2]); break;
    case OP_DOT:
        if (a->allow_tf32) str_puts(&t, "tf32=1");
        if (a->ival) str_printf(&t, "%spending=%lld", a->allow_tf32 ? ", " : "", (long long)a->ival);
        break;
    case OP_ASYNC_WAIT: str_printf(&t, "pending=%lld", (long long)a->ival); break;
    case OP_TMA_LOAD: str_printf(&t, "map=%lld", (long long)a->ival); break;
    case OP_TMA_STORE:
        str_printf(&t, "map=%lld", (long long)a->ival);
        if (a->ival2 > 0 && a->ival2 <= RED_XOR + 1)
            str_printf(&t, ", kind=%s", a->ival2 - 1 == RED_SUM ? "add" : tir_red_names[a->ival2 - 1]);
        break;
    case OP_MBAR_EXPECT: str_printf(&t, "bytes=%lld", (long long)a->ival); break;
    case OP_LOCAL_STORE:
        if (a->ival) str_printf(&t, "col=%lld", (long long)a->ival);
        break;
    case OP_MBAR_INIT:
        if (a->ival > 1) str_printf(&t, "count=%lld", (long long)a->ival);
        break;
    case OP_WS_PRODUCER: str_printf(&t, "warps=%lld", (long long)a->ival); break;
    case OP_WGMMA_WAIT:
        if (a->ival) str_printf(&t, "pending=%lld", (long long)a->ival);
        break;
    case OP_FOR:
        if (a->ival) str_puts(&t, "remainder=1");
        if (a->ival2) str_printf(&t, "%sstages=%lld", a->ival ? ", " : "", (long long)a->ival2 - 1);
        if (a->vec) str_printf(&t, "%sunroll=%d", a->ival || a->ival2 ? ", " : "", a->vec);
        break;
    case OP_EXP:
    case OP_EXP2:
    case OP_TANH:
        if (a->ival) str_puts(&t, "exact=1");
        break;
    case OP_PRINT:
        if (a->ival) str_puts(&t, "hex=1");
        break;
    case OP_MAP_FN:
        if (a->ival > 1) str_printf(&t, "pack=%lld", (long long)a->ival);
        break;
    case OP_INLINE_ASM:
        if (a->ival > 1) str_printf(&t, "pack=%lld", (long long)a->ival);
        if (a->ival2) str_printf(&t, "%sout=%lld", a->ival > 1 ? ", " : "", (long long)a->ival2);
        break;
    default: break;
    }
    bool ordered = i->op == OP_ATOMIC_RMW || i->op == OP_ATOMIC_CAS || i->op == OP_ATOMIC_POLL ||
                   ((i->op == OP_LOAD || i->op == OP_STORE) && (a->cache & TIR_CACHE_STRONG));
    if (ordered && a->sem)
        str_printf(&t, "%ssem=%s", t.len ? ", " : "", tir_sem_names[a->sem]);
    if (ordered && a->scope)
        str_printf(&t, "%sscope=%s", t.len ? ", " : "", tir_scope_names[a->scope]);
    if (a->msg) {
        str_printf(&t, "%smsg=\"", t.len ? ", " : "");
        for (const char *c = a->msg; *c; c++) {
            if (*c == '"' || *c == '\\') str_printf(&t, "\\%c", *c);
            else if (*c == '\n') str_puts(&t, "\\n");
            else str_printf(&t, "%c", *c);
        }
        str_puts(&t, "\"");
    }
    if (a->cache) str_printf(&t, "%scache=%d", t.len ? ", " : "", a->cache);
    if (a->vec > 1 && i->op != OP_FOR) str_printf(&t, "%svec=%d", t.len ? ", " : "", a->vec); /* a for's vec is its unroll */
    if (a->smem_offset >= 0) str_printf(&t, "%ssmem=%d:%d", t.len ? ", " : "", a->smem_offset, a->smem_bytes);
    (void)buf;
    if (t.len) str_printf(s, " {%s}", t.buf);
    str_free(&t);
}

static void print_block(Printer *p, const Block *b, int depth);

static void print_inst(Printer *p, const Inst *i, int depth) {
    Str *s = p->s;
    indent(s, depth);
    for (int k = 0; k < i->nres; k++) number_value(p, i->res[k]);
    if (i->nres == 1) {
        print_value(p, i->res[0]);
        str_puts(s, " = ");
    } else if (i->nres > 1) {
        print_value(p, i->res[0]);
        str_printf(s, ":%d = ", i->nres);
    }
    str_puts(s, tir_op_info[i->op].name);
    for (int k = 0; k < i->nops; k++) {
        str_puts(s, k ? ", " : " ");
        print_value(p, i->ops[k]);
    }
    print_attrs(p, i);
    if (i->nres) {
        str_puts(s, " : ");
        for (int k = 0; k < i->nres; k++) {
            if (k) str_puts(s, ", ");
            print_type(p, p->f->values[i->res[k]].type);
        }
    }
    for (int r = 0; r < i->nregions; r++) {
        str_puts(s, r ? " else {\n" : " {\n");
        print_block(p, i->regions[r], depth + 1);
        indent(s, depth);
        str_puts(s, "}");
    }
    str_puts(s, "\n");
}

static void print_block(Printer *p, const Block *b, int depth) {
    Str *s = p->s;
    if (b->nargs) {
        indent(s, depth - 1);
        str_puts(s, "^(");
        for (int k = 0; k < b->nargs; k++) {
            number_value(p, b->args[k]);
            if (k) str_puts(s, ", ");
            print_value(p, b->args[k]);
            str_puts(s, ": ");
            print_type(p, p->f->values[b->args[k]].type);
        }
        str_puts(s, "):\n");
    }
    for (const Inst *i = b->first; i; i = i->next) print_inst(p, i, depth);
}

static void print_func(Printer *p, const Func *f) {
    Str *s = p->s;
    p->f = f;
    p->num = malloc(sizeof(int32_t) * f->nvalues);
    if (!p->num) out_of_memory();
    for (uint32_t v = 0; v < f->nvalues; v++) p->num[v] = -2;
    p->next = 0;
    str_printf(s, "kernel @%s(", f->name);
    for (int k = 0; k < f->nargs; k++) {
        const FuncArg *a = &f->args[k];
        p->num[a->value] = -1;
        if (k) str_puts(s, ", ");
        str_printf(s, "%%%s: ", a->name);
        print_type(p, f->values[a->value].type);
        if (a->spec == SPEC_ONE) str_puts(s, " #one");
        else if (a->spec == SPEC_DIV16) str_puts(s, " #div16");
        else if (a->spec == SPEC_NULL) str_puts(s, " #null");
    }
    str_printf(s, ") num_warps=%d num_stages=%d", f->num_warps, f->num_stages);
    if (f->warp_specialize) str_puts(s, " warp_specialize=1");
    if (f->pingpong) str_puts(s, " pingpong=1");
    if (f->overlap) str_puts(s, " overlap=1");
    if (f->producer_warps) str_printf(s, " producer_warps=%d", f->producer_warps);
    if (f->smem_bytes) str_printf(s, " smem=%d", f->smem_bytes);
    str_puts(s, " {\n");
    for (int k = 0; k < f->ntmaps; k++) {
        str_printf(s, "  tensor_map %d = ", k);
        tir_print_tmap(s, f, &f->tmaps[k], false);
        str_puts(s, "\n");
    }
    /* the body's args are the kernel arguments: print only the instructions */
    for (const Inst *i = f->body->first; i; i = i->next) print_inst(p, i, 1);
    str_puts(s, "}\n");
    free(p->num);
    p->num = NULL;
}

typedef struct UsedCtx {
    const Module *m;
    int *a;
    const Func *f;
} UsedCtx;

static void mark_used(UsedCtx *u, ValueId v) {
    const Type *t = u->f->values[v].type;
    for (const Layout *l = t ? t->layout : NULL; l; l = l->parent)
        for (int i = 0; i < u->m->nlayouts; i++)
            if (u->m->layouts[i] == l) u->a[i] = 0;
}

static bool mark_inst(Inst *i, void *ud) {
    UsedCtx *u = ud;
    for (int k = 0; k < i->nres; k++) mark_used(u, i->res[k]);
    for (int r = 0; r < i->nregions; r++)
        for (int k = 0; k < i->regions[r]->nargs; k++) mark_used(u, i->regions[r]->args[k]);
    return true;
}

/* Aliases for the layouts some value of the module uses (passes may intern layouts they
 * end up not using), numbered in interning order.  Returns how many; alias malloc'd. */
static int number_layouts(const Module *m, int **alias) {
    int *a = malloc(sizeof(int) * (size_t)(m->nlayouts + 1));
    if (!a) out_of_memory();
    for (int i = 0; i < m->nlayouts; i++) a[i] = -1;
    UsedCtx u = {m, a, NULL};
    for (int k = 0; k < m->nfuncs; k++) {
        const Func *f = m->funcs[k];
        u.f = f;
        for (int i = 0; i < f->nargs; i++) mark_used(&u, f->args[i].value);
        tir_walk(f->body, mark_inst, &u);
    }
    int n = 0;
    for (int i = 0; i < m->nlayouts; i++)
        if (a[i] >= 0) a[i] = n++;
    *alias = a;
    return n;
}

void tir_print_func(Str *s, const Func *f) {
    Printer p = {.s = s, .m = f->module};
    number_layouts(f->module, &p.alias);
    print_func(&p, f);
    free(p.alias);
}

void tir_print_module(Str *s, const Module *m) {
    Printer p = {.s = s, .m = m};
    int n = number_layouts(m, &p.alias);
    const Target *t = m->arch ? target_find(m->arch) : NULL;
    if (t && t != target_default()) str_printf(s, "target %s\n", t->name);
    for (int i = 0; i < m->nlayouts; i++) {
        if (p.alias[i] < 0) continue;
        str_printf(s, "#L%d = ", p.alias[i]);
        tir_print_layout(s, m->layouts[i]);
        str_puts(s, "\n");
    }
    for (int i = 0; i < m->nfuncs; i++) {
        if (i || n) str_puts(s, "\n");
        print_func(&p, m->funcs[i]);
    }
    free(p.alias);
}

static void print_host_arg(Str *s, const Func *f, int a, bool by_index) {
    if (by_index) str_printf(s, "$%d", a);
    else str_printf(s, "%%%s", f->args[a].name);
}

static void print_host_expr(Str *s, const Func *f, const HostExpr *e, bool by_index) {
    if (!e->n) {
        str_puts(s, "?");
        return;
    }
    for (int k = 0; k < e->n; k++) {
        const HostTerm *t = &e->t[k];
        if (k) str_puts(s, " + ");
        bool args = t->a[0] >= 0;
        if (!args || t->c != 1) str_printf(s, "%lld%s", (long long)t->c, args ? "*" : "");
        for (int j = 0; j < 2 && t->a[j] >= 0; j++) {
            if (j) str_puts(s, "*");
            print_host_arg(s, f, t->a[j], by_index);
        }
    }
}

void tir_print_tmap(Str *s, const Func *f, const TensorMap *tm, bool by_index) {
    str_puts(s, "base ");
    print_host_arg(s, f, tm->base, by_index);
    str_printf(s, ", esize %d, ", tm->esize);
    if (tm->elem != DT_VOID) str_printf(s, "elem %s, ", dtype_name(tm->elem));
    str_printf(s, "swizzle %d, box [", tm->swizzle);
    for (int d = 0; d < tm->rank; d++) str_printf(s, "%s%d", d ? ", " : "", tm->box[d]);
    str_puts(s, "], dims [");
    for (int d = 0; d < tm->rank; d++) {
        if (d) str_puts(s, ", ");
        print_host_expr(s, f, &tm->dim[d], by_index);
    }
    str_puts(s, "], strides [");
    for (int d = 1; d < tm->rank; d++) {
        if (d > 1) str_puts(s, ", ");
        print_host_expr(s, f, &tm->stride[d], by_index);
    }
    str_puts(s, "]");
}
