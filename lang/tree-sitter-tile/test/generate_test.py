#!/usr/bin/env python3
"""generate_test.py - checks of generate.py itself (run by check-generated.sh).

    python3 lang/tree-sitter-tile/test/generate_test.py

The lexer's regular expressions are checked against Python's `re` on the
tile grammar's tokens; small grammars (written as grammar.json, so node is
not needed) are generated, compiled with `cc` against libtree-sitter and
parsed: precedence and associativity, a declared conflict settled by dynamic
precedence, an immediate token, a contextual keyword, an unresolved conflict
reported.  The compile-and-parse cases are skipped without `cc` or the
runtime's headers.
"""
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
import generate as G  # noqa: E402

HARNESS = r'''
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>
const TSLanguage *tree_sitter_t(void);
int main(int argc, char **argv) {
    TSParser *p = ts_parser_new();
    if (!ts_parser_set_language(p, tree_sitter_t())) return 2;
    for (int i = 1; i < argc; i++) {
        TSTree *t = ts_parser_parse_string(p, NULL, argv[i], (uint32_t)strlen(argv[i]));
        char *s = ts_node_string(ts_tree_root_node(t));
        printf("%s\n", s);
        free(s);
        ts_tree_delete(t);
    }
    ts_parser_delete(p);
    return 0;
}
'''


def S(v):
    return {"type": "STRING", "value": v}


def P(v):
    return {"type": "PATTERN", "value": v}


def SYM(n):
    return {"type": "SYMBOL", "name": n}


def SEQ(*m):
    return {"type": "SEQ", "members": list(m)}


def CHOICE(*m):
    return {"type": "CHOICE", "members": list(m)}


def REPEAT(c):
    return {"type": "REPEAT", "content": c}


def FIELD(n, c):
    return {"type": "FIELD", "name": n, "content": c}


def PREC(kind, v, c):
    return {"type": kind, "value": v, "content": c}


def grammar(rules, **kw):
    g = {"name": "t", "rules": rules, "extras": [P("\\s")], "conflicts": [], "precedences": [],
         "externals": [], "inline": [], "supertypes": []}
    g.update(kw)
    return g


EXPR = grammar({
    "doc": REPEAT(SYM("stmt")),
    "stmt": CHOICE(SEQ(S("say"), FIELD("what", SYM("_e")),
                       CHOICE(SEQ(S("."), {"type": "IMMEDIATE_TOKEN", "content": P("[a-z]+")}),
                              {"type": "BLANK"}), S(";")),
                   SEQ(CHOICE(PREC("PREC_DYNAMIC", 2, SYM("a")), SYM("b")), S("!"))),
    "a": SYM("name"),
    "b": SYM("name"),
    "_e": CHOICE(SYM("num"), SYM("name"), SYM("bin"), SYM("neg")),
    "bin": CHOICE(PREC("PREC_LEFT", 1, SEQ(SYM("_e"), S("+"), SYM("_e"))),
                  PREC("PREC_RIGHT", 2, SEQ(SYM("_e"), S("^"), SYM("_e")))),
    "neg": PREC("PREC", 3, SEQ(S("-"), SYM("_e"))),
    "num": {"type": "TOKEN", "content": P("[0-9]+")},
    "name": P("[a-z]+"),
}, word="name", conflicts=[["a", "b"]])


def have_runtime():
    cc = shutil.which("cc")
    if not cc:
        return False
    with tempfile.TemporaryDirectory() as d:
        c = os.path.join(d, "x.c")
        with open(c, "w") as f:
            f.write("#include <tree_sitter/api.h>\n#include <tree_sitter/parser.h>\nint main(void){return 0;}\n")
        return subprocess.run([cc, c, "-o", os.path.join(d, "x"), "-ltree-sitter"],
                              capture_output=True).returncode == 0


class Lexer(unittest.TestCase):
    def dfa_match(self, pattern, text):
        """The longest prefix of text the pattern's DFA accepts, or None."""
        nfa = G.NFA()
        start = nfa.node()
        end = nfa.build_regex(G.RegexParser(pattern).parse(), start)
        nfa.accept[end] = 1
        cur = nfa.closure([start])
        best = 0 if end in cur else None
        for i, ch in enumerate(text):
            nxt = [t for cs, t in nfa.moves(cur) if any(a <= ord(ch) <= b for a, b in cs)]
            if not nxt:
                break
            cur = nxt[0]
            if end in cur:
                best = i + 1
        return best

    def test_patterns_agree_with_python(self):
        patterns = [r"[0-9][0-9_]*", r"0[xX][0-9a-fA-F_]+", r"[0-9][0-9_]*\.[0-9_]*([eE][+-]?[0-9_]+)?",
                    r"\.[0-9][0-9_]*([eE][+-]?[0-9_]+)?", r"[A-Za-z_][A-Za-z0-9_]*", r"[^\n]*",
                    r"/\*[^*]*\*+([^/*][^*]*\*+)*/", r'"([^"\\\n]|\\["\\])*"', r"a{2,3}b?", r"(?:ab|a)c\d\s\w"]
        rng = random.Random(7)
        alphabet = 'ab019_.eE+-xX*/"\\\n cdF'
        for pat in patterns:
            rx = re.compile(pat)
            for _ in range(400):
                text = ''.join(rng.choice(alphabet) for _ in range(rng.randint(0, 10)))
                # Python's re is not longest-match on alternations; compare
                # the longest prefix any match of the pattern covers
                want = None
                for n in range(len(text), -1, -1):
                    if rx.fullmatch(text[:n]):
                        want = n
                        break
                self.assertEqual(self.dfa_match(pat, text), want, f"/{pat}/ on {text!r}")

    def test_unsupported_patterns_are_errors(self):
        for pat in [r"(?=a)", r"a^", r"\p{L}"]:
            with self.assertRaises(G.GrammarError, msg=pat):
                G.RegexParser(pat).parse()


class Tables(unittest.TestCase):
    def test_unresolved_conflict_names_its_items(self):
        g = grammar({"doc": REPEAT(SYM("e")), "e": CHOICE(SEQ(SYM("e"), S("+"), SYM("e")), P("[0-9]+"))})
        gen = G.Generator(g)
        with self.assertRaises(G.GrammarError) as cm:
            gen.generate_tables()
        self.assertIn("e -> e + e •", str(cm.exception))

    def test_declared_conflict_keeps_both_actions(self):
        gen = G.Generator(EXPR)
        gen.generate_tables()
        multi = [a for acts in gen.actions for lst in acts.values() for a in [lst] if len(lst) > 1
                 and all(x[0] == 'reduce' for x in lst)]
        self.assertTrue(multi, "no state reduces both a and b")

    def test_keywords(self):
        gen = G.Generator(EXPR)
        self.assertEqual(sorted(gen.terminals[k].name for k in gen.keywords), ["say"])


@unittest.skipUnless(have_runtime(), "cc or libtree-sitter-dev missing")
class Parse(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp()
        with open(os.path.join(cls.dir, "grammar.json"), "w") as f:
            json.dump(EXPR, f)
        assert G.main(["generate.py", cls.dir]) == 0
        with open(os.path.join(cls.dir, "h.c"), "w") as f:
            f.write(HARNESS)
        cls.exe = os.path.join(cls.dir, "parse")
        subprocess.run(["cc", "-w", "-o", cls.exe, os.path.join(cls.dir, "h.c"), os.path.join(cls.dir, "parser.c"),
                        "-ltree-sitter"], check=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def parse(self, text):
        return subprocess.run([self.exe, text], capture_output=True, text=True, check=True).stdout.strip()

    def test_precedence_and_associativity(self):
        self.assertEqual(self.parse("say 1 + -2 + x ^ y ^ z;"),
                         "(doc (stmt what: (bin (bin (num) (neg (num))) (bin (name) (bin (name) (name))))))")

    def test_dynamic_precedence_settles_a_declared_conflict(self):
        self.assertEqual(self.parse("zed !"), "(doc (stmt (a (name))))")

    def test_immediate_token(self):
        self.assertEqual(self.parse("say x .foo;"), "(doc (stmt what: (name)))")
        self.assertIn("ERROR", self.parse("say x . foo;"))

    def test_keyword_is_a_name_where_it_is_not_taken(self):
        self.assertEqual(self.parse("say say;"), "(doc (stmt what: (name)))")


if __name__ == "__main__":
    unittest.main()
