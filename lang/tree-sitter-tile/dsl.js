// dsl.js - evaluate a tree-sitter grammar.js and print it as grammar.json.
//
//   node dsl.js grammar.js > src/grammar.json
//
// Defines the grammar DSL (grammar, seq, choice, repeat, repeat1, optional,
// field, prec, prec.left, prec.right, prec.dynamic, token, token.immediate,
// alias, blank) as globals, loads the grammar file with require(), and writes
// the JSON that generate.py reads (tree-sitter's src/grammar.json layout).
'use strict';
const path = require('path');

function normalize(value) {
  if (value === undefined || value === null) throw new Error('undefined rule');
  if (typeof value === 'string') return { type: 'STRING', value };
  if (value instanceof RegExp) {
    if (value.flags) throw new Error(`regular expression flags are not supported: ${value}`);
    return { type: 'PATTERN', value: value.source };
  }
  if (value instanceof SymbolRef) return { type: 'SYMBOL', name: value.name };
  if (typeof value === 'object' && typeof value.type === 'string') return value;
  throw new TypeError(`invalid rule: ${value}`);
}

class SymbolRef {
  constructor(name) { this.name = name; }
}

const blank = () => ({ type: 'BLANK' });
const seq = (...members) => ({ type: 'SEQ', members: members.map(normalize) });
const choice = (...members) => ({ type: 'CHOICE', members: members.map(normalize) });
const optional = (rule) => choice(rule, blank());
const repeat = (rule) => ({ type: 'REPEAT', content: normalize(rule) });
const repeat1 = (rule) => ({ type: 'REPEAT1', content: normalize(rule) });
const field = (name, rule) => ({ type: 'FIELD', name, content: normalize(rule) });
const alias = (rule, value) => {
  if (typeof value === 'string') return { type: 'ALIAS', content: normalize(rule), named: false, value };
  if (value instanceof SymbolRef) return { type: 'ALIAS', content: normalize(rule), named: true, value: value.name };
  throw new TypeError('alias: the second argument must be a string or a $.symbol');
};
const token = (rule) => ({ type: 'TOKEN', content: normalize(rule) });
token.immediate = (rule) => ({ type: 'IMMEDIATE_TOKEN', content: normalize(rule) });

function precRule(type, a, b) {
  if (b === undefined) {
    if (type === 'PREC') throw new TypeError('prec needs a precedence and a rule');
    return { type, value: 0, content: normalize(a) };
  }
  return { type, value: a, content: normalize(b) };
}
const prec = (value, rule) => precRule('PREC', value, rule);
prec.left = (a, b) => precRule('PREC_LEFT', a, b);
prec.right = (a, b) => precRule('PREC_RIGHT', a, b);
prec.dynamic = (value, rule) => ({ type: 'PREC_DYNAMIC', value, content: normalize(rule) });

function grammar(options) {
  if (!options.name) throw new Error('grammar needs a name');
  const names = Object.keys(options.rules);
  const $ = new Proxy({}, {
    get(_, name) {
      if (typeof name !== 'string') return undefined;
      if (!names.includes(name) && !(options.externals)) throw new Error(`undefined symbol '${name}'`);
      return new SymbolRef(name);
    },
  });
  const rules = {};
  for (const name of names) rules[name] = normalize(options.rules[name].call(null, $));
  const list = (key) => (options[key] ? options[key].call(null, $) : []);
  const symbolName = (r, key) => {
    const n = normalize(r);
    if (n.type !== 'SYMBOL') throw new Error(`${key}: expected symbols`);
    return n.name;
  };
  const out = {
    name: options.name,
    word: options.word ? symbolName(options.word.call(null, $), 'word') : undefined,
    rules,
    extras: options.extras ? list('extras').map(normalize) : [{ type: 'PATTERN', value: '\\s' }],
    conflicts: list('conflicts').map((c) => c.map((r) => symbolName(r, 'conflicts'))),
    precedences: list('precedences').map((l) => l.map(normalize)),
    externals: list('externals').map(normalize),
    inline: list('inline').map((r) => symbolName(r, 'inline')),
    supertypes: list('supertypes').map((r) => symbolName(r, 'supertypes')),
  };
  if (out.word === undefined) delete out.word;
  return out;
}

Object.assign(global, { grammar, seq, choice, optional, repeat, repeat1, field, alias, token, prec, blank });

const file = process.argv[2];
if (!file) {
  process.stderr.write('usage: node dsl.js grammar.js\n');
  process.exit(2);
}
const g = require(path.resolve(file));
process.stdout.write(JSON.stringify(g, null, 2) + '\n');
