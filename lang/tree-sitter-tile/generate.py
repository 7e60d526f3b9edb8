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
from bisect import bisect_right

MAX_CHAR = 0x10FFFF


class GrammarError(Exception):
    pass


# ---------------------------------------------------------------- char sets

def cs_norm(ranges):
    out = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            if hi > out[-1][1]:
                out[-1] = (out[-1][0], hi)
        else:
            out.append((lo, hi))
    return tuple(out)


def cs_negate(cs):
    # negated classes never match end of input, which the lexer sees as 0
    out, lo = [], 1
    for a, b in cs:
        if a > lo:
            out.append((lo, a - 1))
        lo = max(lo, b + 1)
    if lo <= MAX_CHAR:
        out.append((lo, MAX_CHAR))
    return tuple(out)


SPACE = cs_norm([(9, 13), (32, 32), (0xA0, 0xA0), (0x1680, 0x1680), (0x2000, 0x200A), (0x2028, 0x2029),
                 (0x202F, 0x202F), (0x205F, 0x205F), (0x3000, 0x3000), (0xFEFF, 0xFEFF)])
DIGIT = ((48, 57),)
WORD = cs_norm([(48, 57), (65, 90), (95, 95), (97, 122)])
DOT = cs_negate(((10, 10), (13, 13), (0x2028, 0x2029)))


# ---------------------------------------------------------------- regex -> AST
# AST: ('chars', cs) | ('seq', [..]) | ('alt', [..]) | ('rep', node, min, max|None) | ('empty',)

class RegexParser:
    def __init__(self, src):
        self.s, self.i = src, 0

    def error(self, msg):
        raise GrammarError(f"pattern /{self.s}/ at {self.i}: {msg}")

    def peek(self):
        return self.s[self.i] if self.i < len(self.s) else None

    def parse(self):
        node = self.alt()
        if self.i != len(self.s):
            self.error("unexpected ')'")
        return node

    def alt(self):
        items = [self.seq()]
        while self.peek() == '|':
            self.i += 1
            items.append(self.seq())
        return items[0] if len(items) == 1 else ('alt', items)

    def seq(self):
        items = []
        while self.peek() is not None and self.peek() not in '|)':
            items.append(self.quantified())
        return ('seq', items) if items else ('empty',)

    def quantified(self):
        node = self.atom()
        while True:
            c = self.peek()
            if c == '*':
                node, self.i = ('rep', node, 0, None), self.i + 1
            elif c == '+':
                node, self.i = ('rep', node, 1, None), self.i + 1
            elif c == '?':
                node, self.i = ('rep', node, 0, 1), self.i + 1
            elif c == '{' and re.match(r'\{\d+(,\d*)?\}', self.s[self.i:]):
                m = re.match(r'\{(\d+)(,(\d*))?\}', self.s[self.i:])
                lo = int(m.group(1))
                hi = lo if m.group(2) is None else (int(m.group(3)) if m.group(3) else None)
                node, self.i = ('rep', node, lo, hi), self.i + m.end()
            else:
                return node
            if self.peek() == '?':  # lazy quantifiers mean nothing to a DFA
                self.i += 1

    def atom(self):
        c = self.peek()
        if c == '(':
            self.i += 1
            if self.s.startswith('?:', self.i):
                self.i += 2
            elif self.peek() == '?':
                self.error("lookaround is not supported")
            node = self.alt()
            if self.peek() != ')':
                self.error("missing ')'")
            self.i += 1
            return node
        if c == '[':
            return ('chars', self.char_class())
        if c == '.':
            self.i += 1
            return ('chars', DOT)
        if c == '\\':
            self.i += 1
            return ('chars', self.escape(in_class=False))
        if c in '*+?':
            self.error(f"nothing to repeat before '{c}'")
        if c in '^$':
            self.error("anchors are not supported")
        self.i += 1
        cp = ord(c)
        return ('chars', ((cp, cp),))

    def escape(self, in_class):
        c = self.peek()
        if c is None:
            self.error("trailing backslash")
        self.i += 1
        simple = {'n': 10, 't': 9, 'r': 13, 'f': 12, 'v': 11, '0': 0}
        if c in simple:
            return ((simple[c], simple[c]),)
        if c == 'b' and in_class:
            return ((8, 8),)
        classes = {'d': DIGIT, 'w': WORD, 's': SPACE}
        if c in classes:
            return classes[c]
        if c.lower() in classes:
            return cs_negate(classes[c.lower()])
        if c == 'x':
            h = self.s[self.i:self.i + 2]
            self.i += 2
            return ((int(h, 16), int(h, 16)),)
        if c == 'u':
            if self.peek() == '{':
                j = self.s.index('}', self.i)
                v = int(self.s[self.i + 1:j], 16)
                self.i = j + 1
            else:
                v = int(self.s[self.i:self.i + 4], 16)
                self.i += 4
            return ((v, v),)
        if c.isalnum():
            self.error(f"unsupported escape \\{c}")
        return ((ord(c), ord(c)),)

    def char_class(self):
        self.i += 1
        neg = self.peek() == '^'
        if neg:
            self.i += 1
        ranges = []
        first = True
        while True:
            c = self.peek()
            if c is None:
                self.error("missing ']'")
            if c == ']' and not first:
                self.i += 1
                break
            first = False
            lo = self.class_atom()
            if self.peek() == '-' and self.i + 1 < len(self.s) and self.s[self.i + 1] != ']' and len(lo) == 1 \
                    and lo[0][0] == lo[0][1]:
                self.i += 1
                hi = self.class_atom()
                if len(hi) != 1 or hi[0][0] != hi[0][1]:
                    self.error("bad range")
                ranges.append((lo[0][0], hi[0][0]))
            else:
                ranges.extend(lo)
        cs = cs_norm(ranges)
        return cs_negate(cs) if neg else cs

    def class_atom(self):
        c = self.peek()
        if c == '\\':
            self.i += 1
            return self.escape(in_class=True)
        self.i += 1
        return ((ord(c), ord(c)),)


# ---------------------------------------------------------------- NFA / DFA

class NFA:
    def __init__(self):
        self.eps = []     # node -> [node]
        self.trans = []   # node -> [(cs, node)]
        self.accept = {}  # node -> token index

    def node(self):
        self.eps.append([])
        self.trans.append([])
        return len(self.eps) - 1

    def build_regex(self, ast, start):
        """Adds `ast` starting at `start`; returns its end node."""
        kind = ast[0]
        if kind == 'empty':
            return start
        if kind == 'chars':
            end = self.node()
            if ast[1]:
                self.trans[start].append((ast[1], end))
            return end
        if kind == 'seq':
            cur = start
            for item in ast[1]:
                cur = self.build_regex(item, cur)
            return cur
        if kind == 'alt':
            end = self.node()
            for item in ast[1]:
                s = self.node()
                self.eps[start].append(s)
                self.eps[self.build_regex(item, s)].append(end)
            return end
        if kind == 'rep':
            _, sub, lo, hi = ast
            cur = start
            for _ in range(lo):
                cur = self.build_regex(sub, cur)
            if hi is None:
                loop = self.node()
                self.eps[cur].append(loop)
                e = self.build_regex(sub, loop)
                self.eps[e].append(loop)
                return loop
            end = self.node()
            self.eps[cur].append(end)
            for _ in range(hi - lo):
                cur = self.build_regex(sub, cur)
                self.eps[cur].append(end)
            return end
        raise AssertionError(kind)

    def closure(self, nodes):
        seen = set(nodes)
        stack = list(nodes)
        while stack:
            n = stack.pop()
            for m in self.eps[n]:
                if m not in seen:
                    seen.add(m)
                    stack.append(m)
        return frozenset(seen)

    def moves(self, nodes):
        """[(cs, frozenset target)] over disjoint character sets."""
        edges = [(cs, t) for n in nodes for cs, t in self.trans[n]]
        if not edges:
            return []
        points = set()
        for cs, _ in edges:
            for lo, hi in cs:
                points.add(lo)
                points.add(hi + 1)
        points = sorted(points)
        by_target = {}
        for k in range(len(points) - 1):
            a, b = points[k], points[k + 1] - 1
            targets = set()
            for cs, t in edges:
                j = bisect_right(cs, (a, MAX_CHAR + 1)) - 1
                if j >= 0 and cs[j][0] <= a <= cs[j][1]:
                    targets.add(t)
            if targets:
                key = self.closure(targets)
                by_target.setdefault(key, []).append((a, b))
        return [(cs_norm(r), t) for t, r in by_target.items()]


def rule_to_regex(rule, tokprec):
    """A token's rule (grammar.json) as a regex AST; records PREC in tokprec."""
    t = rule['type']
    if t == 'STRING':
        return ('seq', [('chars', ((ord(c), ord(c)),)) for c in rule['value']])
    if t == 'PATTERN':
        return RegexParser(rule['value']).parse()
    if t == 'SEQ':
        return ('seq', [rule_to_regex(m, tokprec) for m in rule['members']])
    if t == 'CHOICE':
        return ('alt', [rule_to_regex(m, tokprec) for m in rule['members']])
    if t == 'REPEAT':
        return ('rep', rule_to_regex(rule['content'], tokprec), 0, None)
    if t == 'REPEAT1':
        return ('rep', rule_to_regex(rule['content'], tokprec), 1, None)
    if t == 'BLANK':
        return ('empty',)
    if t in ('PREC', 'PREC_LEFT', 'PREC_RIGHT', 'PREC_DYNAMIC'):
        if not isinstance(rule['value'], int):
            raise GrammarError("named precedences are not supported")
        tokprec.append(rule['value'])
        return rule_to_regex(rule['content'], tokprec)
    if t in ('TOKEN', 'IMMEDIATE_TOKEN', 'FIELD'):
        return rule_to_regex(rule['content'], tokprec)
    raise GrammarError(f"a {t} inside a token")


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


# ---------------------------------------------------------------- C output

PUNCT = {'~': 'TILDE', '`': 'BQUOTE', '!': 'BANG', '@': 'AT', '#': 'POUND', '$': 'DOLLAR', '%': 'PERCENT',
         '^': 'CARET', '&': 'AMP', '*': 'STAR', '(': 'LPAREN', ')': 'RPAREN', '-': 'DASH', '+': 'PLUS',
         '=': 'EQ', '{': 'LBRACE', '}': 'RBRACE', '[': 'LBRACK', ']': 'RBRACK', '\\': 'BSLASH', '|': 'PIPE',
         ':': 'COLON', ';': 'SEMI', '"': 'DQUOTE', "'": 'SQUOTE', '<': 'LT', '>': 'GT', ',': 'COMMA',
         '.': 'DOT', '?': 'QMARK', '/': 'SLASH', ' ': 'SPACE', '\n': 'LF', '\t': 'TAB', '\r': 'CR'}


def mangle(name):
    out = []
    word = ''
    for c in name:
        if c.isalnum() or c == '_':
            word += c
        else:
            if word:
                out.append(word)
                word = ''
            out.append(PUNCT.get(c, f"U{ord(c):04X}"))
    if word:
        out.append(word)
    return '_'.join(out)


def c_string(s):
    out = ''
    for c in s:
        if c == '"':
            out += '\\"'
        elif c == '\\':
            out += '\\\\'
        elif c == '\n':
            out += '\\n'
        elif c == '\t':
            out += '\\t'
        elif c == '\r':
            out += '\\r'
        elif ord(c) < 32:
            out += f'\\{ord(c):03o}'
        else:
            out += c
    return '"' + out + '"'


def c_char(c):
    esc = {10: "'\\n'", 9: "'\\t'", 13: "'\\r'", 11: "'\\v'", 12: "'\\f'", 0: '0', 39: "'\\''", 92: "'\\\\'"}
    if c in esc:
        return esc[c]
    if 32 <= c < 127:
        return f"'{chr(c)}'"
    return f"0x{c:x}"


def range_cond(lo, hi):
    if lo == hi:
        return f"lookahead == {c_char(lo)}"
    if hi == lo + 1:
        return f"lookahead == {c_char(lo)} ||\n          lookahead == {c_char(hi)}"
    return f"({c_char(lo)} <= lookahead && lookahead <= {c_char(hi)})"


def char_cond(cs):
    comp, lo = [], 0
    for a, b in cs:
        if a > lo:
            comp.append((lo, a - 1))
        lo = b + 1
    if lo <= MAX_CHAR:
        comp.append((lo, MAX_CHAR))
    if len(comp) < len(cs):
        parts = []
        for a, b in comp:
            if a == b:
                parts.append(f"lookahead != {c_char(a)}")
            else:
                parts.append(f"(lookahead < {c_char(a)} || {c_char(b)} < lookahead)")
        return " &&\n          ".join(parts)
    return " ||\n          ".join(range_cond(a, b) for a, b in cs)


class Writer:
    def __init__(self, gen):
        self.g = gen
        self.out = []
        used = set()
        self.cname = []
        for i, (name, kind) in enumerate(gen.symbols):
            if i == 0:
                c = 'ts_builtin_sym_end'
            elif kind == 'anon':
                c = 'anon_sym_' + mangle(name)
            elif kind == 'aux':
                c = 'aux_sym_' + mangle(name)
            else:
                c = 'sym_' + mangle(name)
            base, n = c, 1
            while c in used:
                n += 1
                c = f"{base}{n}"
            used.add(c)
            self.cname.append(c)

    def w(self, s=''):
        self.out.append(s)

    def metadata(self, i):
        g = self.g
        name, kind = g.symbols[i]
        if i == 0:
            return False, True, False
        if kind == 'anon':
            return True, False, False
        if kind == 'named':
            return True, True, False
        if kind == 'hidden':
            return False, True, i in g.supertypes
        return False, False, False

    def write(self):
        g = self.g
        w = self.w
        states = len(g.actions)
        large = 2
        max_len = max([len(p.steps) for p in g.productions] + [1])
        w('#include <tree_sitter/parser.h>')
        w()
        w('#if defined(__GNUC__) || defined(__clang__)')
        w('#pragma GCC diagnostic push')
        w('#pragma GCC diagnostic ignored "-Wmissing-field-initializers"')
        w('#endif')
        w()
        w('/* Generated by lang/tree-sitter-tile/generate.py from src/grammar.json: do not edit. */')
        w()
        w('#define LANGUAGE_VERSION 14')
        w(f'#define STATE_COUNT {states}')
        w(f'#define LARGE_STATE_COUNT {large}')
        w(f'#define SYMBOL_COUNT {g.symbol_count}')
        w('#define ALIAS_COUNT 0')
        w(f'#define TOKEN_COUNT {g.token_count}')
        w('#define EXTERNAL_TOKEN_COUNT 0')
        w(f'#define FIELD_COUNT {len(g.field_names)}')
        w(f'#define MAX_ALIAS_SEQUENCE_LENGTH {max_len}')
        w(f'#define PRODUCTION_ID_COUNT {len(g.prod_infos)}')
        w()
        w('enum {')
        for i in range(1, g.symbol_count):
            w(f'  {self.cname[i]} = {i},')
        w('};')
        w()
        w('static const char * const ts_symbol_names[] = {')
        for i in range(g.symbol_count):
            w(f'  [{self.cname[i]}] = {c_string(g.symbols[i][0])},')
        w('};')
        w()
        public = {}
        w('static const TSSymbol ts_symbol_map[] = {')
        for i in range(g.symbol_count):
            vis, named, _ = self.metadata(i)
            key = (g.symbols[i][0], named) if vis else ('#', i)
            public.setdefault(key, i)
            w(f'  [{self.cname[i]}] = {self.cname[public[key]]},')
        w('};')
        w()
        w('static const TSSymbolMetadata ts_symbol_metadata[] = {')
        for i in range(g.symbol_count):
            vis, named, sup = self.metadata(i)
            w(f'  [{self.cname[i]}] = {{')
            w(f'    .visible = {"true" if vis else "false"},')
            w(f'    .named = {"true" if named else "false"},')
            if sup:
                w('    .supertype = true,')
            w('  },')
        w('};')
        w()
        if g.field_names:
            w('enum {')
            for i, n in enumerate(g.field_names):
                w(f'  field_{n} = {i + 1},')
            w('};')
            w()
        w('static const char * const ts_field_names[] = {')
        w('  [0] = NULL,')
        for n in g.field_names:
            w(f'  [field_{n}] = {c_string(n)},')
        w('};')
        w()
        w('static const TSFieldMapSlice ts_field_map_slices[PRODUCTION_ID_COUNT] = {')
        index = 0
        starts = []
        for pid, info in enumerate(g.prod_infos):
            starts.append(index)
            if info:
                w(f'  [{pid}] = {{.index = {index}, .length = {len(info)}}},')
                index += len(info)
        w('};')
        w()
        w('static const TSFieldMapEntry ts_field_map_entries[] = {')
        for pid, info in enumerate(g.prod_infos):
            if not info:
                continue
            w(f'  [{starts[pid]}] =')
            for fid, child, inh in info:
                w(f'    {{field_{g.field_names[fid - 1]}, {child}{", .inherited = true" if inh else ""}}},')
        if index == 0:
            w('  {0},')
        w('};')
        w()
        w('static const TSSymbol ts_alias_sequences[PRODUCTION_ID_COUNT][MAX_ALIAS_SEQUENCE_LENGTH] = {')
        w('  [0] = {0},')
        w('};')
        w()
        w('static const uint16_t ts_non_terminal_alias_map[] = {')
        w('  0,')
        w('};')
        w()
        w('static const TSStateId ts_primary_state_ids[STATE_COUNT] = {')
        for s in range(states):
            w(f'  [{s}] = {s},')
        w('};')
        w()
        self.write_lexer('ts_lex', g.dfa)
        self.write_lexer('ts_lex_keywords', g.kw_dfa)
        w('static const TSLexMode ts_lex_modes[STATE_COUNT] = {')
        for s in range(states):
            w(f'  [{s}] = {{.lex_state = {g.mode_start[g.state_lex_mode[s]]}}},')
        w('};')
        w()
        self.write_parse_tables(large)
        w('#ifdef __cplusplus')
        w('extern "C" {')
        w('#endif')
        w('#ifdef _WIN32')
        w('#define extern __declspec(dllexport)')
        w('#endif')
        w()
        w(f'extern const TSLanguage *tree_sitter_{g.g["name"]}(void) {{')
        w('  static const TSLanguage language = {')
        for line in ['.version = LANGUAGE_VERSION', '.symbol_count = SYMBOL_COUNT', '.alias_count = ALIAS_COUNT',
                     '.token_count = TOKEN_COUNT', '.external_token_count = EXTERNAL_TOKEN_COUNT',
                     '.state_count = STATE_COUNT', '.large_state_count = LARGE_STATE_COUNT',
                     '.production_id_count = PRODUCTION_ID_COUNT', '.field_count = FIELD_COUNT',
                     '.max_alias_sequence_length = MAX_ALIAS_SEQUENCE_LENGTH',
                     '.parse_table = &ts_parse_table[0][0]', '.small_parse_table = ts_small_parse_table',
                     '.small_parse_table_map = ts_small_parse_table_map', '.parse_actions = ts_parse_actions',
                     '.symbol_names = ts_symbol_names', '.field_names = ts_field_names',
                     '.field_map_slices = ts_field_map_slices', '.field_map_entries = ts_field_map_entries',
                     '.symbol_metadata = ts_symbol_metadata', '.public_symbol_map = ts_symbol_map',
                     '.alias_map = ts_non_terminal_alias_map', '.alias_sequences = &ts_alias_sequences[0][0]',
                     '.lex_modes = ts_lex_modes', '.lex_fn = ts_lex']:
            w(f'    {line},')
        if g.kw_dfa:
            w('    .keyword_lex_fn = ts_lex_keywords,')
            w(f'    .keyword_capture_token = {self.cname[g.word]},')
        w('    .primary_state_ids = ts_primary_state_ids,')
        w('  };')
        w('  return &language;')
        w('}')
        w('#ifdef __cplusplus')
        w('}')
        w('#endif')
        return '\n'.join(self.out) + '\n'

    def write_lexer(self, fn, dfa):
        w = self.w
        if not dfa:
            return
        w(f'static bool {fn}(TSLexer *lexer, TSStateId state) {{')
        w('  START_LEXER();')
        w('  eof = lexer->eof(lexer);')
        w('  switch (state) {')
        for k, st in enumerate(dfa):
            w(f'    case {k}:')
            if st['accept'] is not None:
                w(f'      ACCEPT_TOKEN({self.cname[st["accept"]]});')
            if st['eof'] is not None:
                w(f'      if (eof) ADVANCE({st["eof"]});')
            for cs, t in sorted(st['trans'], key=lambda x: x[0]):
                w(f'      if ({char_cond(cs)}) ADVANCE({t});')
            if st['skip']:
                cs, t = st['skip']
                w(f'      if ({char_cond(cs)}) SKIP({t})')
            w('      END_STATE();')
        w('    default:')
        w('      return false;')
        w('  }')
        w('}')
        w()

    def action_c(self, a):
        g = self.g
        if a[0] == 'shift':
            return f'SHIFT_REPEAT({a[1]})' if a[2] else f'SHIFT({a[1]})'
        if a[0] == 'shift_extra':
            return 'SHIFT_EXTRA()'
        if a[0] == 'recover':
            return 'RECOVER()'
        if a[0] == 'accept':
            return 'ACCEPT_INPUT()'
        p = g.productions[a[1]]
        extra = ''
        if p.dyn:
            extra += f', .dynamic_precedence = {p.dyn}'
        if g.prod_info_id[a[1]]:
            extra += f', .production_id = {g.prod_info_id[a[1]]}'
        return f'REDUCE({self.cname[p.lhs]}, {len(p.steps)}{extra})'

    def write_parse_tables(self, large):
        g = self.g
        w = self.w
        entries = [(0, [])]
        entry_index = {(): 0}
        next_index = 1

        def entry(actions):
            nonlocal next_index
            key = tuple(actions)
            if key not in entry_index:
                entry_index[key] = next_index
                entries.append((next_index, actions))
                next_index += 1 + len(actions)
            return entry_index[key]

        rows = []
        for s in range(len(g.actions)):
            row = {}
            for t in sorted(g.actions[s]):
                row[t] = ('ACTIONS', entry(g.actions[s][t]))
            for nt in sorted(g.gotos[s]):
                row[nt] = ('STATE', g.gotos[s][nt])
            rows.append(row)
        w('static const uint16_t ts_parse_table[LARGE_STATE_COUNT][SYMBOL_COUNT] = {')
        for s in range(large):
            w(f'  [{s}] = {{')
            for sym, (kind, v) in sorted(rows[s].items()):
                w(f'    [{self.cname[sym]}] = {kind}({v}),')
            w('  },')
        w('};')
        w()
        w('static const uint16_t ts_small_parse_table[] = {')
        offsets = []
        off = 0
        for s in range(large, len(rows)):
            groups = {}
            for sym, val in sorted(rows[s].items()):
                groups.setdefault(val, []).append(sym)
            offsets.append(off)
            w(f'  [{off}] = {len(groups)},')
            off += 1
            for (kind, v), syms in sorted(groups.items(), key=lambda x: (len(x[1]), x[0][1])):
                w(f'    {kind}({v}), {len(syms)},')
                for sym in syms:
                    w(f'      {self.cname[sym]},')
                off += 2 + len(syms)
        w('};')
        w()
        w('static const uint32_t ts_small_parse_table_map[] = {')
        for k, o in enumerate(offsets):
            w(f'  [SMALL_STATE({k + large})] = {o},')
        w('};')
        w()
        w('static const TSParseActionEntry ts_parse_actions[] = {')
        for idx, actions in entries:
            body = ''.join(', ' + self.action_c(a) for a in actions)
            w(f'  [{idx}] = {{.entry = {{.count = {len(actions)}, .reusable = false}}}}{body},')
        w('};')
        w()


def node_types(gen):
    """src/node-types.json: every visible node type, its fields and children."""
    g = gen
    supertypes = g.supertypes

    def vis_types(sym, seen):
        """The visible types a child of symbol `sym` shows as."""
        if g.visible(sym) or sym in supertypes or sym == 0:
            return {sym}
        if sym in seen:
            return set()
        seen = seen | {sym}
        out = set()
        for p in g.prods_of.get(sym, []):
            for st in g.productions[p].steps:
                out |= vis_types(st.sym, seen)
        return out

    memo = {}

    def summary(sym, stack):
        """{key: [types, min, max]} for the children of a rule; key 'child' or a field name."""
        if sym in memo:
            return memo[sym]
        if sym in stack:
            return None
        stack = stack | {sym}
        total = None
        recursive = False
        for p in g.prods_of[sym]:
            s = {}
            rec = False
            for st in g.productions[p].steps:
                if st.field:
                    e = s.setdefault(st.field, [set(), 0, 0])
                    e[0] |= vis_types(st.sym, frozenset())
                    e[1] += 1
                    e[2] += 1
                elif g.visible(st.sym) or st.sym in supertypes:
                    if g.symbols[st.sym][1] == 'anon':
                        continue
                    e = s.setdefault('', [set(), 0, 0])
                    e[0].add(st.sym)
                    e[1] += 1
                    e[2] += 1
                elif g.is_nt(st.sym):
                    sub = summary(st.sym, stack)
                    if sub is None:
                        rec = True
                        continue
                    for k, (types, lo, hi) in sub.items():
                        e = s.setdefault(k, [set(), 0, 0])
                        e[0] |= types
                        e[1] += lo
                        e[2] += hi
            if rec:
                recursive = True
            if total is None:
                total = {k: [set(v[0]), v[1], v[2]] for k, v in s.items()}
            else:
                for k in set(total) | set(s):
                    a = total.get(k, [set(), 0, 0])
                    b = s.get(k, [set(), 0, 0])
                    total[k] = [a[0] | b[0], min(a[1], b[1]), max(a[2], b[2])]
        total = total or {}
        if recursive:
            for v in total.values():
                v[2] = 2
        memo[sym] = total
        return total

    def type_list(types):
        items = [(g.symbols[t][0], g.symbols[t][1] != 'anon') for t in types if t != 0]
        return [{"type": n, "named": named} for n, named in sorted(set(items))]

    entries = []
    for sym in range(g.token_count, g.symbol_count):
        name, kind = g.symbols[sym]
        if sym in supertypes:
            subs = set()
            for p in g.prods_of[sym]:
                for st in g.productions[p].steps:
                    subs |= vis_types(st.sym, frozenset([sym]))
            entries.append((name, True, {"type": name, "named": True, "subtypes": type_list(subs)}))
        elif kind == 'named':
            s = summary(sym, frozenset())
            e = {"type": name, "named": True, "fields": {}}
            for k in sorted(x for x in s if x):
                types, lo, hi = s[k]
                e["fields"][k] = {"multiple": hi > 1, "required": lo >= 1, "types": type_list(types)}
            if '' in s and s[''][0]:
                types, lo, hi = s['']
                e["children"] = {"multiple": hi > 1, "required": lo >= 1, "types": type_list(types)}
            entries.append((name, True, e))
    tokens = []
    for t in range(1, g.token_count):
        name, kind = g.symbols[t]
        if kind in ('anon', 'named'):
            tokens.append((name, kind == 'named', {"type": name, "named": kind == 'named'}))
    return [e for _, _, e in sorted(entries)] + [e for _, _, e in sorted(tokens)]


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
