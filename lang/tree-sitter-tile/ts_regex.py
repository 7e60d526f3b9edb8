#!/usr/bin/env python3
"""ts_regex.py - the generator's lexer half (generate.py): character sets, tree-sitter's regular expressions
parsed to a small AST, and the NFA that the lex modes' DFAs are built from."""
import json
import re
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
