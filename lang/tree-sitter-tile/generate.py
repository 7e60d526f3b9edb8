#!/usr/bin/env python3
"""generate.py - write src/parser.c and src/node-types.json from src/grammar.json.

    node lang/tree-sitter-tile/dsl.js lang/tree-sitter-tile/grammar.js > lang/tree-sitter-tile/src/grammar.json
    python3 lang/tree-sitter-tile/generate.py          # reads and writes lang/tree-sitter-tile/src/

The parser is a tree-sitter language of ABI 14 (<tree_sitter/parser.h>; Debian's
libtree-sitter 0.20 loads 13 and 14).  Python 3 standard library only.

How it works:
  1. tokens are taken out of the rules (strings, patterns, token()); a rule
     that is one token used nowhere else becomes that token;
  2. repeat(x) becomes a hidden rule `aux -> aux aux | x`, choice and optional
     are multiplied out into productions whose steps carry field names and
     precedences;
  3. LALR(1) item sets (LR(1) sets with the same core merged); shift/reduce
     and reduce/reduce conflicts are settled by precedence and associativity;
     the two ends of a repetition are both kept (reduce, then shift-repeat);
     conflicts the grammar declares in `conflicts` keep every action (GLR);
     anything else is an error;
  4. states that only reduce a hidden rule of one child are skipped (their
     callers go straight to the state after the rule), states with the same
     actions are merged, unreachable states go;
  5. each state's valid tokens pick a lex mode; each lex mode is a DFA built
     from the tokens' regular expressions (longest match; on a tie a higher
     token precedence, then a string over a pattern, then the earlier token);
     strings the `word` token matches are keywords, lexed by ts_lex_keywords
     after the word token (so a keyword is one only where the grammar takes it);
  6. C tables in tree-sitter's layout: states 0 (error recovery) and 1 (start)
     in the large table, the others in the small table.
"""
import json
import os
import re
import sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ts_regex import MAX_CHAR, NFA, GrammarError, RegexParser, cs_negate, cs_norm, rule_to_regex  # noqa: E402,F401
from ts_emit import Writer, node_types  # noqa: E402


# ---------------------------------------------------------------- grammar preparation

class Token:
    def __init__(self, name, kind, rule, immediate):
        self.name, self.kind, self.rule, self.immediate = name, kind, rule, immediate
        self.uses = 1
        self.prec = 0
        self.is_string = rule['type'] == 'STRING'
        self.keyword = False


class Step:
    __slots__ = ('sym', 'field', 'prec', 'assoc', 'alias')

    def __init__(self, sym, field=None, prec=0, assoc=None, alias=None):
        self.sym, self.field, self.prec, self.assoc, self.alias = sym, field, prec, assoc, alias


class Production:
    def __init__(self, lhs, steps, dyn):
        self.lhs, self.steps, self.dyn = lhs, steps, dyn
        self.info_id = 0


def rule_key(rule):
    return json.dumps(rule, sort_keys=True)


class Generator:
    def __init__(self, g):
        self.g = g
        for key in ('precedences', 'externals', 'inline'):
            if g.get(key):
                raise GrammarError(f"'{key}' is not supported by this generator")
        self.prepare()

    # -- tokens and syntax variables

    def prepare(self):
        g = self.g
        rules = g['rules']
        names = list(rules)
        self.tokens = []
        self.token_index = {}
        self.separators = []
        # ('T', i) terminal, ('N', name) nonterminal, in rules after extraction
        extracted = {}
        for name in names:
            self.cur_name, self.cur_count = name, 0
            extracted[name] = self.extract(rules[name], name)
        # a rule that is a single token used once becomes that token
        self.var_names = []
        token_of_var = {}
        for i, name in enumerate(names):
            r = extracted[name]
            if r[0] == 'T' and i > 0 and self.tokens[r[1]].uses == 1:
                tok = self.tokens[r[1]]
                tok.name, tok.kind = name, 'hidden' if name.startswith('_') else 'named'
                token_of_var[name] = r[1]
            else:
                self.var_names.append(name)
        self.token_of_var = token_of_var
        for name in names:
            extracted[name] = self.resolve(extracted[name])
        # extras
        self.extra_tokens = []
        for e in g.get('extras', []):
            if e['type'] in ('STRING', 'PATTERN'):
                self.separators.append(rule_to_regex(e, []))
            elif e['type'] == 'SYMBOL' and e['name'] in token_of_var:
                self.extra_tokens.append(token_of_var[e['name']])
            else:
                raise GrammarError(f"extra {json.dumps(e)}: only patterns and token rules can be extras")
        self.word = None
        if g.get('word'):
            if g['word'] not in token_of_var:
                raise GrammarError(f"the word token '{g['word']}' is not a token")
            self.word = token_of_var[g['word']]
        # the word token is the first terminal
        order = list(range(len(self.tokens)))
        if self.word is not None:
            order.remove(self.word)
            order.insert(0, self.word)
        remap = {old: new + 1 for new, old in enumerate(order)}  # 0 is end
        self.terminals = [None] + [self.tokens[o] for o in order]
        self.term_remap = remap
        self.word = remap[self.word] if self.word is not None else None
        self.extra_terms = [remap[t] for t in self.extra_tokens]
        # nonterminals
        self.nt_ids = {}
        nt_count = len(self.terminals)
        for name in self.var_names:
            self.nt_ids[name] = nt_count
            nt_count += 1
        self.symbols = [('end', 'end')] + [(t.name, t.kind) for t in self.terminals[1:]]
        for name in self.var_names:
            self.symbols.append((name, 'hidden' if name.startswith('_') else 'named'))
        self.supertypes = set()
        for s in g.get('supertypes', []):
            if s not in self.nt_ids:
                raise GrammarError(f"supertype '{s}' is not a rule")
            self.supertypes.add(self.nt_ids[s])
        self.conflicts = []
        for c in g.get('conflicts', []):
            ids = []
            for s in c:
                if s not in self.nt_ids:
                    raise GrammarError(f"conflict names '{s}', which is not a rule")
                ids.append(self.nt_ids[s])
            self.conflicts.append(frozenset(ids))
        # productions
        self.productions = []
        self.prods_of = {}
        self.repeat_cache = {}
        self.aux_count = {}
        for name in self.var_names:
            lhs = self.nt_ids[name]
            self.add_productions(lhs, extracted[name], name)
        self.symbol_count = len(self.symbols)
        self.token_count = len(self.terminals)
        self.aliased = set()
        for p in self.productions:
            for st in p.steps:
                if st.alias:
                    self.aliased.add(st.sym)
        self.find_keywords()

    def extract(self, rule, var):
        t = rule['type']
        if t in ('STRING', 'PATTERN', 'TOKEN', 'IMMEDIATE_TOKEN'):
            immediate = t == 'IMMEDIATE_TOKEN'
            content = rule['content'] if t in ('TOKEN', 'IMMEDIATE_TOKEN') else rule
            key = (rule_key(content), immediate)
            if key in self.token_index:
                tok = self.tokens[self.token_index[key]]
                tok.uses += 1
                return ('T', self.token_index[key])
            if content['type'] == 'STRING':
                tok = Token(content['value'], 'anon', content, immediate)
            else:
                self.cur_count += 1
                tok = Token(f"{var}_token{self.cur_count}", 'aux', content, immediate)
            prec = []
            tok.regex = rule_to_regex(content, prec)
            tok.prec = max(prec) if prec else 0
            self.token_index[key] = len(self.tokens)
            self.tokens.append(tok)
            return ('T', len(self.tokens) - 1)
        if t in ('SEQ', 'CHOICE'):
            return (t, [self.extract(m, var) for m in rule['members']])
        if t in ('REPEAT', 'REPEAT1'):
            return (t, self.extract(rule['content'], var))
        if t in ('PREC', 'PREC_LEFT', 'PREC_RIGHT', 'PREC_DYNAMIC'):
            if not isinstance(rule['value'], int):
                raise GrammarError("named precedences are not supported")
            return (t, rule['value'], self.extract(rule['content'], var))
        if t == 'FIELD':
            return (t, rule['name'], self.extract(rule['content'], var))
        if t == 'ALIAS':
            return (t, rule['value'], rule['named'], self.extract(rule['content'], var))
        if t == 'SYMBOL':
            if rule['name'] not in self.g['rules']:
                raise GrammarError(f"undefined symbol '{rule['name']}'")
            return ('SYM', rule['name'])
        if t == 'BLANK':
            return ('BLANK',)
        raise GrammarError(f"unknown rule type {t}")

    def resolve(self, r):
        """Terminal indexes -> final ids, symbol names -> ids."""
        k = r[0]
        if k == 'T':
            return ('S', self.term_remap_pending(r[1]))
        if k == 'SYM':
            if r[1] in self.token_of_var:
                return ('S', self.term_remap_pending(self.token_of_var[r[1]]))
            return ('SYMNT', r[1])
        if k in ('SEQ', 'CHOICE'):
            return (k, [self.resolve(m) for m in r[1]])
        if k in ('REPEAT', 'REPEAT1'):
            return (k, self.resolve(r[1]))
        if k in ('PREC', 'PREC_LEFT', 'PREC_RIGHT', 'PREC_DYNAMIC', 'FIELD'):
            return (k, r[1], self.resolve(r[2]))
        if k == 'ALIAS':
            return (k, r[1], r[2], self.resolve(r[3]))
        return r

    def term_remap_pending(self, i):
        return ('term', i)  # remapped once the order is known

    def flatten(self, r, lhs_name):
        """List of (steps, dyn) for rule r."""
        k = r[0]
        if k == 'S':
            return [([Step(self.term_remap[r[1][1]])], 0)]
        if k == 'SYMNT':
            return [([Step(self.nt_ids[r[1]])], 0)]
        if k == 'BLANK':
            return [([], 0)]
        if k == 'SEQ':
            out = [([], 0)]
            for m in r[1]:
                parts = self.flatten(m, lhs_name)
                out = [(a + b, max(da, db, key=abs)) for a, da in out for b, db in parts]
            return out
        if k == 'CHOICE':
            out = []
            for m in r[1]:
                out.extend(self.flatten(m, lhs_name))
            return out
        if k in ('REPEAT', 'REPEAT1'):
            aux = self.repeat_symbol(r[1], lhs_name)
            one = [([Step(aux)], 0)]
            return one if k == 'REPEAT1' else one + [([], 0)]
        if k in ('PREC', 'PREC_LEFT', 'PREC_RIGHT'):
            assoc = {'PREC': None, 'PREC_LEFT': 'left', 'PREC_RIGHT': 'right'}[k]
            out = self.flatten(r[2], lhs_name)
            for steps, _ in out:
                for st in steps:
                    if st.prec == 0 and st.assoc is None:
                        st.prec, st.assoc = r[1], assoc
            return out
        if k == 'PREC_DYNAMIC':
            return [(steps, max(d, r[1], key=abs)) for steps, d in self.flatten(r[2], lhs_name)]
        if k == 'FIELD':
            out = self.flatten(r[2], lhs_name)
            for steps, _ in out:
                for st in steps:
                    if st.field is None:
                        st.field = r[1]
            return out
        if k == 'ALIAS':
            raise GrammarError(f"{lhs_name}: alias() is not supported by this generator")
        raise AssertionError(k)

    def repeat_symbol(self, content, lhs_name):
        key = repr(content)
        if key in self.repeat_cache:
            return self.repeat_cache[key]
        n = self.aux_count.get(lhs_name, 0) + 1
        self.aux_count[lhs_name] = n
        sym = len(self.symbols)
        self.symbols.append((f"{lhs_name}_repeat{n}", 'aux'))
        self.repeat_cache[key] = sym
        self.pending_aux.append((sym, content, lhs_name))
        return sym

    def add_productions(self, lhs, rule, name):
        self.pending_aux = []
        self.add_flat(lhs, self.flatten(rule, name))
        while self.pending_aux:
            sym, content, lhs_name = self.pending_aux.pop(0)
            flat = [([Step(sym), Step(sym)], 0)] + self.flatten(content, lhs_name)
            self.add_flat(sym, flat)

    def add_flat(self, lhs, flat):
        seen = set()
        for steps, dyn in flat:
            key = tuple((s.sym, s.field, s.prec, s.assoc, s.alias) for s in steps)
            if key in seen:
                continue
            seen.add(key)
            p = Production(lhs, steps, dyn)
            self.productions.append(p)
            self.prods_of.setdefault(lhs, []).append(len(self.productions) - 1)

    def find_keywords(self):
        if self.word is None:
            return
        nfa = NFA()
        start = nfa.node()
        end = nfa.build_regex(self.terminals[self.word].regex, start)
        nfa.accept[end] = 0
        for i, tok in enumerate(self.terminals):
            if i == 0 or i == self.word or not tok.is_string or tok.immediate:
                continue
            cur = nfa.closure([start])
            for ch in tok.rule['value']:
                nxt = [t for cs, t in nfa.moves(cur) if any(a <= ord(ch) <= b for a, b in cs)]
                cur = nxt[0] if nxt else frozenset()
            if end in cur:
                tok.keyword = True
        self.keywords = [i for i, t in enumerate(self.terminals) if i and t.keyword]

    # -- helpers

    def is_nt(self, s):
        return s >= self.token_count

    def visible(self, s):
        kind = self.symbols[s][1]
        return kind in ('named', 'anon')

    def hidden_nt(self, s):
        return self.is_nt(s) and not self.visible(s)

    # -- LALR(1)

    def compute_first(self):
        self.nullable = set()
        self.first = {nt: set() for nt in range(self.token_count, self.symbol_count)}
        changed = True
        while changed:
            changed = False
            for p in self.productions:
                f = self.first[p.lhs]
                before = len(f)
                all_null = True
                for st in p.steps:
                    if self.is_nt(st.sym):
                        f |= self.first[st.sym]
                        if st.sym not in self.nullable:
                            all_null = False
                            break
                    else:
                        f.add(st.sym)
                        all_null = False
                        break
                if all_null and p.lhs not in self.nullable:
                    self.nullable.add(p.lhs)
                    changed = True
                if len(f) != before:
                    changed = True
        self.first_cache = {}

    def first_of(self, p, k):
        key = (p, k)
        r = self.first_cache.get(key)
        if r is None:
            f = set()
            steps = self.productions[p].steps if p >= 0 else [Step(self.start)]
            null = True
            for st in steps[k:]:
                if self.is_nt(st.sym):
                    f |= self.first[st.sym]
                    if st.sym not in self.nullable:
                        null = False
                        break
                else:
                    f.add(st.sym)
                    null = False
                    break
            r = (frozenset(f), null)
            self.first_cache[key] = r
        return r

    def steps_of(self, p):
        return self.productions[p].steps if p >= 0 else self.start_steps

    def closure(self, kernel):
        items = {it: set(la) for it, la in kernel.items()}
        work = list(items)
        while work:
            it = work.pop()
            p, d = it
            steps = self.steps_of(p)
            if d >= len(steps) or not self.is_nt(steps[d].sym):
                continue
            f, null = self.first_of(p, d + 1)
            la = set(f)
            if null:
                la |= items[it]
            for q in self.prods_of[steps[d].sym]:
                ni = (q, 0)
                cur = items.get(ni)
                if cur is None:
                    items[ni] = set(la)
                    work.append(ni)
                elif not la <= cur:
                    cur |= la
                    work.append(ni)
        return items

    def build_states(self):
        self.start = self.nt_ids[self.var_names[0]]
        self.start_steps = [Step(self.start)]
        self.compute_first()
        kernels = [{(-1, 0): {0}}]
        core_index = {frozenset(kernels[0]): 0}
        self.items = [None]
        self.trans = [None]
        queue = [0]
        queued = {0}
        while queue:
            s = queue.pop(0)
            queued.discard(s)
            items = self.closure(kernels[s])
            self.items[s] = items
            by_sym = {}
            for (p, d), la in items.items():
                steps = self.steps_of(p)
                if d < len(steps):
                    by_sym.setdefault(steps[d].sym, {})[(p, d + 1)] = la
            trans = {}
            for sym in sorted(by_sym):
                k = by_sym[sym]
                core = frozenset(k)
                t = core_index.get(core)
                if t is None:
                    t = len(kernels)
                    core_index[core] = t
                    kernels.append({it: set(la) for it, la in k.items()})
                    self.items.append(None)
                    self.trans.append(None)
                    queue.append(t)
                    queued.add(t)
                else:
                    grew = False
                    for it, la in k.items():
                        if not la <= kernels[t][it]:
                            kernels[t][it] |= la
                            grew = True
                    if grew and t not in queued:
                        queue.append(t)
                        queued.add(t)
                trans[sym] = t
            self.trans[s] = trans
        self.kernels = kernels

    def describe_item(self, it):
        p, d = it
        steps = self.steps_of(p)
        lhs = self.symbols[self.productions[p].lhs][0] if p >= 0 else "START"
        parts = [self.symbols[st.sym][0] for st in steps]
        parts.insert(d, "•")
        return f"{lhs} -> {' '.join(parts)}"

    def build_actions(self):
        """Per state: {terminal: [action]} and {nonterminal: state}.
        Actions: ('shift', state, repetition) ('reduce', prod) ('accept',)."""
        self.actions = []
        self.gotos = []
        errors = []
        for s, items in enumerate(self.items):
            acts = {}
            gotos = {}
            for sym, t in self.trans[s].items():
                if self.is_nt(sym):
                    gotos[sym] = t
                else:
                    acts[sym] = [('shift', t, False)]
            reduces = {}
            for (p, d), la in items.items():
                if d < len(self.steps_of(p)):
                    continue
                for t in la:
                    if p < 0:
                        acts.setdefault(t, []).append(('accept',))
                    else:
                        reduces.setdefault(t, []).append(p)
            for t, ps in reduces.items():
                result = self.resolve_conflict(s, t, acts.get(t), ps, errors)
                if result is not None:
                    acts[t] = result
            for e in self.extra_terms:
                if e not in acts:
                    acts[e] = [('shift_extra',)]
            self.actions.append(acts)
            self.gotos.append(gotos)
        if errors:
            raise GrammarError("unresolved conflicts:\n" + "\n".join(errors[:20]))

    def item_prec(self, it):
        p, d = it
        steps = self.steps_of(p)
        if d == 0 or p < 0:
            return 0, None
        st = steps[d - 1]
        return st.prec, st.assoc

    def resolve_conflict(self, s, t, shift, reduce_prods, errors):
        items = self.items[s]
        reduce_prods = sorted(set(reduce_prods))
        shift_items = [it for it in items if it[1] < len(self.steps_of(it[0]))
                       and self.steps_of(it[0])[it[1]].sym == t] if shift else []
        if not shift and len(reduce_prods) == 1:
            return [('reduce', reduce_prods[0])]
        # reduce/reduce: the higher precedence wins
        if len(reduce_prods) > 1:
            precs = {p: self.item_prec((p, len(self.productions[p].steps)))[0] for p in reduce_prods}
            top = max(precs.values())
            winners = [p for p in reduce_prods if precs[p] == top]
            if len(winners) < len(reduce_prods):
                reduce_prods = winners
        keep_reduces = []
        keep_shift = bool(shift)
        repetition = False
        for p in reduce_prods:
            prod = self.productions[p]
            if not shift:
                keep_reduces.append(p)
                continue
            rprec, rassoc = self.item_prec((p, len(prod.steps)))
            sitems = [it for it in shift_items if it[1] > 0]
            sprecs = [self.item_prec(it) for it in sitems] or [(0, None)]
            smin = min(x[0] for x in sprecs)
            smax = max(x[0] for x in sprecs)
            if self.symbols[prod.lhs][1] == 'aux' and len(prod.steps) == 2 \
                    and prod.steps[0].sym == prod.lhs and prod.steps[1].sym == prod.lhs:
                keep_reduces.append(p)
                repetition = True
            elif rprec > smax:
                keep_reduces.append(p)
                keep_shift = False
            elif rprec < smin:
                pass
            elif rprec == smin == smax and rassoc == 'left':
                keep_reduces.append(p)
                keep_shift = False
            elif rprec == smin == smax and rassoc == 'right':
                pass
            else:
                keep_reduces.append(p)  # unresolved: a declared conflict or an error
        if repetition and keep_shift:
            return [('reduce', p) for p in keep_reduces] + [('shift', shift[0][1], True)]
        actions = [('reduce', p) for p in keep_reduces] + (shift if keep_shift else [])
        if len(actions) > 1:
            involved = {self.productions[p].lhs for p in keep_reduces}
            if keep_shift:
                involved |= {self.productions[it[0]].lhs for it in shift_items if it[0] >= 0}
            if frozenset(involved) not in self.conflicts:
                lines = [f"state {s}, lookahead '{self.symbols[t][0]}': "
                         + ", ".join(self.symbols[x][0] for x in sorted(involved))]
                for p in keep_reduces:
                    lines.append("  reduce " + self.describe_item((p, len(self.productions[p].steps))))
                if keep_shift:
                    for it in shift_items:
                        lines.append("  shift  " + self.describe_item(it))
                errors.append("\n".join(lines))
        return actions

    # -- table clean-up

    def remove_unit_reductions(self):
        """A state whose every action reduces the same hidden, non-supertype
        rule of one child (no fields) is skipped: its callers use their goto
        on that rule instead."""
        unit = {}
        for s, acts in enumerate(self.actions):
            sym = None
            ok = True
            for t, lst in acts.items():
                for a in lst:
                    if a[0] == 'shift_extra':
                        continue
                    if a[0] == 'reduce':
                        p = self.productions[a[1]]
                        if len(p.steps) == 1 and self.prod_info_id[a[1]] == 0 and p.dyn == 0 \
                                and self.hidden_nt(p.lhs) and p.lhs not in self.supertypes \
                                and p.lhs not in self.aliased and (sym is None or sym == p.lhs):
                            sym = p.lhs
                            continue
                    ok = False
                    break
                if not ok:
                    break
            if ok and sym is not None:
                unit[s] = sym

        def redirect(s, target):
            seen = set()
            while target in unit and target not in seen:
                seen.add(target)
                nxt = self.gotos[s].get(unit[target])
                if nxt is None:
                    break
                target = nxt
            return target

        for s in range(len(self.actions)):
            for t, lst in self.actions[s].items():
                self.actions[s][t] = [('shift', redirect(s, a[1]), a[2]) if a[0] == 'shift' else a for a in lst]
            for nt, target in self.gotos[s].items():
                self.gotos[s][nt] = redirect(s, target)

    def merge_equivalent_states(self):
        """Merge states whose actions are the same up to merged states
        (partition refinement): the same reductions and accepts on the same
        tokens, shifts and gotos to equivalent states."""
        n = len(self.actions)

        def same(a, cls):
            if a[0] == 'shift':
                return ('shift', cls[a[1]], a[2])
            if a[0] == 'reduce':
                p = self.productions[a[1]]
                return ('reduce', p.lhs, len(p.steps), p.dyn, self.prod_info_id[a[1]])
            return a

        def signature(s, cls):
            acts = tuple(sorted((t, tuple(same(a, cls) for a in lst)) for t, lst in self.actions[s].items()))
            gotos = tuple(sorted((nt, cls[t]) for nt, t in self.gotos[s].items()))
            return acts, gotos

        cls = [0] * n
        count = 1
        while True:
            index = {}
            new = []
            for s in range(n):
                # the start state stays alone: it is state 1 of the table
                key = ('start',) if s == 0 else (cls[s], signature(s, cls))
                new.append(index.setdefault(key, len(index)))
            if len(index) == count:
                break
            cls, count = new, len(index)
        rep = {}
        for s in range(n):
            rep.setdefault(cls[s], s)
        target = [rep[cls[s]] for s in range(n)]
        for s in range(n):
            for t, lst in self.actions[s].items():
                self.actions[s][t] = [('shift', target[a[1]], a[2]) if a[0] == 'shift' else a for a in lst]
            for nt in self.gotos[s]:
                self.gotos[s][nt] = target[self.gotos[s][nt]]

    def renumber(self):
        """Drop unreachable states; final ids: 0 error recovery, 1 start, ..."""
        reach = [0]
        seen = {0}
        i = 0
        while i < len(reach):
            s = reach[i]
            i += 1
            targets = [a[1] for lst in self.actions[s].values() for a in lst if a[0] == 'shift']
            targets += list(self.gotos[s].values())
            for t in sorted(set(targets)):
                if t not in seen:
                    seen.add(t)
                    reach.append(t)
        order = sorted(seen)
        new_id = {old: k + 1 for k, old in enumerate(order)}
        acts, gotos = [], []
        for old in order:
            acts.append({t: [('shift', new_id[a[1]], a[2]) if a[0] == 'shift' else a for a in lst]
                         for t, lst in self.actions[old].items()})
            gotos.append({nt: new_id[t] for nt, t in self.gotos[old].items()})
        # the error recovery state: every token recovers, extras are shifted
        err = {}
        for t in range(self.token_count):
            err[t] = [('shift_extra',)] if t in self.extra_terms else [('recover',)]
        self.actions = [err] + acts
        self.gotos = [{}] + gotos

    # -- production info (fields)

    def compute_fields(self):
        direct = {nt: set() for nt in range(self.token_count, self.symbol_count)}
        for p in self.productions:
            for st in p.steps:
                if st.field:
                    direct[p.lhs].add(st.field)
        inherited = {nt: set(v) for nt, v in direct.items()}
        changed = True
        while changed:
            changed = False
            for p in self.productions:
                for st in p.steps:
                    if self.hidden_nt(st.sym) and not st.alias:
                        before = len(inherited[p.lhs])
                        inherited[p.lhs] |= inherited[st.sym]
                        changed |= len(inherited[p.lhs]) != before
        self.fields_of = inherited
        names = sorted({f for v in inherited.values() for f in v})
        self.field_names = names
        self.field_id = {n: i + 1 for i, n in enumerate(names)}
        self.prod_infos = [()]
        info_index = {(): 0}
        self.prod_info_id = []
        for p in self.productions:
            entries = []
            for i, st in enumerate(p.steps):
                if st.field:
                    entries.append((self.field_id[st.field], i, False))
                if self.hidden_nt(st.sym) and not st.alias:
                    for f in self.fields_of[st.sym]:
                        entries.append((self.field_id[f], i, True))
            key = tuple(sorted(set(entries)))
            if key not in info_index:
                info_index[key] = len(self.prod_infos)
                self.prod_infos.append(key)
            self.prod_info_id.append(info_index[key])

    def generate_tables(self):
        self.build_states()
        self.compute_fields()
        self.build_actions()
        self.remove_unit_reductions()
        self.merge_equivalent_states()
        self.renumber()

    # -- lexer

    def build_lexer(self):
        nfa = NFA()
        self.nfa = nfa
        starts = {}
        for i, tok in enumerate(self.terminals):
            if i == 0 or tok.keyword:
                continue
            st = nfa.node()
            end = nfa.build_regex(tok.regex, st)
            if end == st or nfa.closure([st]) & {end}:
                raise GrammarError(f"token '{tok.name}' matches the empty string")
            nfa.accept[end] = i
            starts[i] = st
        sep = ()
        for r in self.separators:
            while r[0] == 'seq' and len(r[1]) == 1:
                r = r[1][0]
            if r[0] != 'chars':
                raise GrammarError("only single-character patterns are supported as extras (e.g. /\\s/)")
            sep = cs_norm(sep + r[1])
        self.sep = sep
        # lex modes: one per set of valid tokens
        self.lex_modes = []
        mode_index = {}
        self.state_lex_mode = []
        for s, acts in enumerate(self.actions):
            valid = set()
            for t in acts:
                if t != 0 and self.terminals[t].keyword:
                    valid.add(self.word)
                else:
                    valid.add(t)
            if s == 0:
                valid = {t for t in range(self.token_count) if t == 0 or not self.terminals[t].keyword}
            key = frozenset(valid)
            if key not in mode_index:
                mode_index[key] = len(self.lex_modes)
                self.lex_modes.append(key)
            self.state_lex_mode.append(mode_index[key])
        # DFA
        self.dfa = []
        memo = {}
        work = []

        def state_for(nodes):
            if nodes in memo:
                return memo[nodes]
            k = len(self.dfa)
            memo[nodes] = k
            self.dfa.append({'accept': self.best_accept(nodes), 'eof': None, 'trans': [], 'skip': None})
            work.append((k, nodes))
            return k

        eof_state = None
        self.mode_start = []
        for valid in self.lex_modes:
            immediate = [t for t in valid if t and self.terminals[t].immediate]
            normal = [t for t in valid if t and not self.terminals[t].immediate]
            # the start state; with immediate tokens, a second one for after skipped extras
            phases = [0, 1] if immediate else [0]
            first = len(self.dfa)
            self.mode_start.append(first)
            for _ in phases:
                self.dfa.append({'accept': None, 'eof': None, 'trans': [], 'skip': None})
            for phase in phases:
                toks = normal + (immediate if phase == 0 else [])
                k = first + phase
                nodes = nfa.closure([starts[t] for t in toks])
                for cs, target in nfa.moves(nodes):
                    if sep and cs_overlap(cs, sep):
                        raise GrammarError("a token starts with a character that extras skip")
                    self.dfa[k]['trans'].append((cs, state_for(target)))
                if 0 in valid:
                    if eof_state is None:
                        eof_state = len(self.dfa)
                        self.dfa.append({'accept': 0, 'eof': None, 'trans': [], 'skip': None})
                    self.dfa[k]['eof'] = eof_state
                if sep:
                    self.dfa[k]['skip'] = (sep, first + 1 if immediate else first)
            while work:
                k, nodes = work.pop()
                self.dfa[k]['trans'] = [(cs, state_for(t)) for cs, t in nfa.moves(nodes)]
        # keywords
        self.kw_dfa = []
        if self.word is not None and self.keywords:
            knfa = NFA()
            start = knfa.node()
            for i in self.keywords:
                st = knfa.node()
                knfa.eps[start].append(st)
                knfa.accept[knfa.build_regex(self.terminals[i].regex, st)] = i
            kmemo = {}
            kwork = []

            def kstate(nodes):
                if nodes in kmemo:
                    return kmemo[nodes]
                k = len(self.kw_dfa)
                kmemo[nodes] = k
                acc = [knfa.accept[n] for n in nodes if n in knfa.accept]
                self.kw_dfa.append({'accept': min(acc) if acc else None, 'eof': None, 'trans': [], 'skip': None})
                kwork.append((k, nodes))
                return k

            kstate(knfa.closure([start]))
            while kwork:
                k, nodes = kwork.pop()
                self.kw_dfa[k]['trans'] = [(cs, kstate(t)) for cs, t in knfa.moves(nodes)]

    def best_accept(self, nodes):
        acc = [self.nfa.accept[n] for n in nodes if n in self.nfa.accept]
        if not acc:
            return None
        return min(acc, key=lambda t: (-self.terminals[t].prec, not self.terminals[t].is_string, t))


def cs_overlap(a, b):
    for lo, hi in a:
        for c, d in b:
            if lo <= d and c <= hi:
                return True
    return False


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.join(here, 'src')
    if len(argv) > 1:
        src = argv[1]
    with open(os.path.join(src, 'grammar.json')) as f:
        grammar = json.load(f)
    try:
        gen = Generator(grammar)
        gen.generate_tables()
        gen.build_lexer()
        text = Writer(gen).write()
    except GrammarError as e:
        sys.stderr.write(f"generate.py: {e}\n")
        return 1
    with open(os.path.join(src, 'parser.c'), 'w') as f:
        f.write(text)
    with open(os.path.join(src, 'node-types.json'), 'w') as f:
        f.write(json.dumps(node_types(gen), indent=2) + '\n')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
