/**
 * tree-sitter grammar for tile (docs/language.md).
 *
 * Written from the reference's grammar section, not from lang/parse.c, so
 * the two parsers check each other (tests/test_treesitter.c).  Each rule
 * carries the reference's rule as a comment.  Differences that are inherent
 * to tree-sitter, not to the language:
 *   1. keywords are reserved only where the language uses them (tree-sitter
 *      lexes a keyword only where it is valid), so `in` is contextual as the
 *      reference says, and `let kernel = 1;` is accepted here although the
 *      compiler rejects it;
 *   2. the ten binary levels `or` ... `term` are one `binary_expression`
 *      rule ordered by precedence; below them the hidden rules `_unary`,
 *      `_power`, `_castexpr`, `_postfix` and `_primary` are the reference's `unary`,
 *      `power`, `castexpr`, `postfix` and `primary`, so `-x as f16` is `-(x as f16)`
 *      and `x as f16 (1)` is an error, as in the reference.
 * After editing: regenerate src/ (see README.md: `node dsl.js grammar.js` and
 * `python3 generate.py`) and commit it with this file.
 */

const PREC = {
  conditional: 0,
  or: 1,
  and: 2,
  bitor: 3,
  bitxor: 4,
  bitand: 5,
  equality: 6,
  relation: 7,
  shift: 8,
  additive: 9,
  term: 10,
};

const SCALAR_TYPES = [
  'i1', 'i8', 'i16', 'i32', 'i64', 'u8', 'u16', 'u32', 'u64',
  'f16', 'bf16', 'f32', 'f64', 'f8e4m3', 'f8e5m2',
];

const ASSIGN_OPS = ['=', '+=', '-=', '*=', '/=', '%=', '&=', '|=', '^=', '<<=', '>>='];

const commaSep1 = (rule) => seq(rule, repeat(seq(',', rule)));
const commaSep = (rule) => optional(commaSep1(rule));
// a list that may end with a comma (Python's, as black writes Triton code: one item a line, each with its comma)
const commaSepTrailing = (rule) => optional(seq(commaSep1(rule), optional(',')));

module.exports = grammar({
  name: 'tile',

  word: ($) => $.identifier,

  extras: ($) => [/\s/, $.comment],

  supertypes: ($) => [$._declaration, $._statement, $._expression, $._type],

  // `(a, b) = t;` and `(a, b);` share their start: after `(a` only the token
  // after the closing `)` (`=` or not) tells unpacked names from a tuple, so
  // both are parsed (GLR) until one fails
  // `t[0] = v;` and `t[0];` likewise: only the token after `]` tells an element target from an expression
  conflicts: ($) => [[$._name_target, $._primary], [$.parenthesized_name, $._primary], [$.element_target, $._primary]],

  rules: {
    // file = { import | constdecl | fn | kernel }
    source_file: ($) => repeat($._declaration),

    _declaration: ($) => choice(
      $.import_declaration,
      $.const_declaration,
      $.function_definition,
      $.kernel_definition,
    ),

    // import = "import" STRING ";"
    import_declaration: ($) => seq('import', field('path', $.string), ';'),

    // constdecl = "const" IDENT [ ":" type ] "=" expr ";"
    const_declaration: ($) => seq(
      'const',
      field('name', $.identifier),
      optional(seq(':', field('type', $._type))),
      '=',
      field('value', $._expression),
      ';',
    ),

    // fn = "fn" IDENT "(" [ param { "," param } ] ")" block
    function_definition: ($) => seq(
      'fn',
      field('name', $.identifier),
      field('parameters', $.parameter_list),
      field('body', $.block),
    ),

    // kernel = { attr } "kernel" IDENT "(" [ param { "," param } ] ")" block
    kernel_definition: ($) => seq(
      repeat(field('attribute', $.attribute)),
      'kernel',
      field('name', $.identifier),
      field('parameters', $.parameter_list),
      field('body', $.block),
    ),

    // attr = "@" IDENT "(" [ arg { "," arg } ] ")"     (arg = [ IDENT "=" ] expr)
    attribute: ($) => seq(
      '@',
      field('name', $.identifier),
      '(',
      commaSepTrailing(field('argument', choice($._expression, $.keyword_argument))),
      ')',
    ),

    parameter_list: ($) => seq('(', commaSepTrailing(choice($.parameter, $.const_parameter)), ')'),

    // param = [ "const" ] IDENT [ ":" ( type | tuple_type ) ] [ "=" expr ]
    // (a `const` parameter is its own node: it is a compile-time value)
    parameter: ($) => seq(
      field('name', $.identifier),
      optional(seq(':', field('type', choice($._type, $.tuple_type)))),
      optional(seq('=', field('default', $._expression))),
    ),

    // tuple_type = "(" [ ( type | tuple_type ) { "," ( type | tuple_type ) } [ "," ] ] ")"   (a kernel's tuple parameter)
    tuple_type: ($) => seq('(', commaSepTrailing(choice($._type, $.tuple_type)), ')'),

    const_parameter: ($) => seq(
      'const',
      field('name', $.identifier),
      optional(seq(':', field('type', $._type))),
      optional(seq('=', field('default', $._expression))),
    ),

    // type = SCALAR_TYPE | IDENT | call | "*" type   (IDENT: a compile-time constant whose value is a type;
    //        call: IDENT "(" ... ")" giving a type, dtype_of(x), pointer_type(f16))
    // (an IDENT followed by "(" is a call: `*f(x)` as a value is the pointer type *f(x), as lang/parse.c reads it)
    _type: ($) => choice($.primitive_type, $.pointer_type, prec(-1, $.identifier), $.type_call),

    type_call: ($) => seq(field('function', $.identifier), field('arguments', $.argument_list)),

    primitive_type: (_) => choice(...SCALAR_TYPES),

    pointer_type: ($) => seq('*', field('pointee', $._type)),

    // block = "{" { stmt } "}"
    block: ($) => seq('{', repeat($._statement), '}'),

    _statement: ($) => choice(
      $.const_declaration,
      $.let_statement,
      $.let_tuple_statement,
      $.assignment_statement,
      $.tuple_assignment_statement,
      $.for_statement,
      $.while_statement,
      $.if_statement,
      $.return_statement,
      $.break_statement,
      $.continue_statement,
      $.assert_statement,
      $.pass_statement,
      $.expression_statement,
    ),

    // stmt = constdecl (a local compile-time constant)
    //      | "let" IDENT [ ":" ( type | "constexpr" ) ] "=" value ";"
    let_statement: ($) => seq(
      'let',
      field('name', choice($.identifier, $.parenthesized_name)),
      optional(seq(':', field('type', $._type))),
      '=',
      field('value', $._value),
      ';',
    ),

    //      | "let" ( names | bare ) "=" value ";"
    let_tuple_statement: ($) => seq('let', field('names', choice($.names, $.bare_names)), '=', field('value', $._value), ';'),

    // bare = target "," [ target { "," target } [ "," ] ]   (Python's targets without parentheses)
    bare_names: ($) => seq($._name_target, ',', optional(seq(commaSep1($._name_target), optional(',')))),

    // value = expr [ "," [ expr { "," expr } [ "," ] ] ]   (Python's tuple without parentheses)
    _value: ($) => choice($._expression, $.bare_tuple),
    bare_tuple: ($) => seq($._expression, ',', optional(seq(commaSep1($._expression), optional(',')))),

    // names = "(" target "," [ target { "," target } [ "," ] ] ")"   target = IDENT | names
    // ((a,) unpacks a tuple of one, (a, (b, c)) a nested tuple)
    names: ($) => seq('(', $._name_target, ',', optional(seq(commaSep1($._name_target), optional(','))), ')'),
    _name_target: ($) => choice($.identifier, $.names, $.parenthesized_name),
    // "(" IDENT ")": Python's parenthesized name is the name ((a,) is the tuple of one)
    parenthesized_name: ($) => seq('(', choice($.identifier, $.parenthesized_name), ')'),

    // IDENT "[" expr "]": one element of a tuple (t[i] = v with a compile-time i); x[i][j], f(x)[i], x[i, j], x[:] and
    // (x)[i] are no targets (the parser: "cannot assign to an element or slice")
    element_target: ($) => seq(field('value', $.identifier), '[', field('index', $._expression), ']'),

    //      | ( names | bare ) "=" value ";"
    tuple_assignment_statement: ($) => seq(field('left', choice($.names, $.bare_names)), '=', field('right', $._value), ';'),

    //      | IDENT [ "[" expr "]" ] "=" value ";"   | IDENT [ "[" expr "]" ] ( "+=" | ... | ">>=" ) expr ";"
    assignment_statement: ($) => choice(
      seq(field('left', choice($.identifier, $.element_target, $.parenthesized_name)), field('operator', '='),
        field('right', $._value), ';'),
      seq(
        field('left', choice($.identifier, $.element_target, $.parenthesized_name)),
        field('operator', choice(...ASSIGN_OPS.filter((op) => op !== '='))),
        field('right', $._expression),
        ';',
      ),
    ),

    //      | "for" IDENT "in" ( "range" | "static_range" ) "(" expr [ "," expr [ "," expr ] ] { "," IDENT "=" expr } ")" block
    //      | "for" ( IDENT | names | bare ) "in" expr block
    // (names and bare targets unpack each element; the parser refuses them before range, tree-sitter keeps one rule)
    for_statement: ($) => seq(
      'for',
      field('variable', choice($.identifier, $.names, $.bare_names, $.parenthesized_name)),
      'in',
      choice(
        seq(
          choice('range', 'static_range'),
          '(',
          field('bound', $._expression),
          optional(seq(',', field('bound', $._expression),
            optional(seq(',', field('bound', $._expression))))),
          repeat(seq(',', field('option', $.keyword_argument))),
          optional(','),
          ')',
        ),
        //  | "for" ( IDENT | names | bare ) "in" expr block   (over a tuple or list, unrolled)
        field('iterable', $._expression),
      ),
      field('body', $.block),
    ),

    //      | "while" expr block
    while_statement: ($) => seq(
      'while',
      field('condition', $._expression),
      field('body', $.block),
    ),

    // ifstmt = "if" expr block [ "else" ( block | ifstmt ) ]
    if_statement: ($) => seq(
      'if',
      field('condition', $._expression),
      field('consequence', $.block),
      optional(seq('else', field('alternative', choice($.block, $.if_statement)))),
    ),

    //      | "return" [ value ] ";"
    return_statement: ($) => seq('return', optional(field('value', $._value)), ';'),

    //      | "assert" expr [ "," expr ] ";"   (Python's: device_assert)   | "pass" ";"
    assert_statement: ($) => seq('assert', field('condition', $._expression), optional(seq(',', field('message', $._expression))), ';'),
    pass_statement: (_) => seq('pass', ';'),

    //      | "break" ";" | "continue" ";"
    break_statement: ($) => seq('break', ';'),
    continue_statement: ($) => seq('continue', ';'),

    //      | expr ";"
    expression_statement: ($) => seq($._expression, ';'),

    // expr = or [ "if" or "else" expr ]; the ten binary levels, then unary, castexpr, postfix, primary
    _expression: ($) => choice(
      $.conditional_expression,
      $.binary_expression,
      $._unary,
    ),

    // Python's `a if cond else b` (right to left)
    conditional_expression: ($) => prec.right(PREC.conditional, seq(
      field('consequence', $._expression),
      'if',
      field('condition', $._expression),
      'else',
      field('alternative', $._expression),
    )),

    // or = and { "||" and } ... term = unary { ( "*" | "/" | "%" ) unary }
    binary_expression: ($) => {
      const table = [
        [PREC.or, '||'],
        [PREC.and, '&&'],
        [PREC.bitor, '|'],
        [PREC.bitxor, '^'],
        [PREC.bitand, '&'],
        [PREC.equality, choice('==', '!=')],
        [PREC.relation, choice('<', '<=', '>', '>=')],
        [PREC.shift, choice('<<', '>>')],
        [PREC.additive, choice('+', '-')],
        [PREC.term, choice('*', '/', '%')],
      ];
      return choice(...table.map(([p, op]) => prec.left(p, seq(
        field('left', $._expression),
        field('operator', op),
        field('right', $._expression),
      ))),
      // equality: ... | "is" [ "not" ] ( "None" | relation ) | [ "not" ] "in" relation
      prec.left(PREC.equality, seq(
        field('left', $._expression),
        field('operator', choice('is', seq('is', 'not'), 'in', seq('not', 'in'))),
        field('right', $._expression),
      )));
    },

    // unary = ( "-" | "+" | "!" | "~" ) unary | power
    _unary: ($) => choice($.unary_expression, $._power),

    unary_expression: ($) => seq(
      field('operator', choice('-', '+', '!', '~')),
      field('operand', $._unary),
    ),

    // power = castexpr [ "**" unary ]
    _power: ($) => choice($.power_expression, $._castexpr),

    power_expression: ($) => seq(
      field('left', $._castexpr),
      field('operator', '**'),
      field('right', $._unary),
    ),

    // castexpr = postfix { "as" type }
    _castexpr: ($) => choice($.cast_expression, $._postfix),

    cast_expression: ($) => seq(
      field('value', $._castexpr),
      'as',
      field('type', $._type),
    ),

    // postfix = primary { "(" [ arg { "," arg } ] ")" | "[" index { "," index } "]" }
    _postfix: ($) => choice($.call_expression, $.index_expression, $._primary),

    call_expression: ($) => seq(
      field('function', $._postfix),
      field('arguments', $.argument_list),
    ),

    // a positional STRING is an expression: device_print("x", x), static_assert(c, "msg")
    argument_list: ($) => seq('(', commaSepTrailing(choice($._expression, $.keyword_argument)), ')'),

    // arg = [ IDENT "=" ] expr | [ IDENT "=" ] STRING   (sem="relaxed")
    keyword_argument: ($) => seq(field('name', $.identifier), '=', field('value', $._expression)),

    // A string is a compile-time value (const ACT = "relu", ACT == "relu", sem="relaxed"); adjacent strings are one
    // ("mov.b32 $0, $1;" " add.s32 $0, $0, 1;"), as in Python
    _string_literal: ($) => choice($.string, $.concatenated_string),
    concatenated_string: ($) => seq($.string, repeat1($.string)),

    index_expression: ($) => seq(
      field('value', $._postfix),
      '[',
      commaSep1(field('index', choice($.slice, $.slice_range, $._expression))),
      ']',
    ),

    // index = ":" | "None" | expr (an element of a tuple or list); None is also a compile-time value anywhere
    // (let b = None, f(None), a parameter's default), as docs/language.md says and the compiler parses it
    slice: (_) => ':',
    // [ expr ] ":" [ expr ] [ ":" [ expr ] ]: Python's slice of a tuple or list (x.shape[:-1], t[1:], t[::-1])
    slice_range: ($) => choice(
      seq(field('start', $._expression), ':', optional(field('stop', $._expression)),
        optional(seq(':', optional(field('step', $._expression))))),
      seq(':', field('stop', $._expression), optional(seq(':', optional(field('step', $._expression))))),
      seq(':', ':', optional(field('step', $._expression))),
    ),
    none: (_) => 'None',

    // primary = INT | FLOAT | "true" | "false" | "None" | IDENT | SCALAR_TYPE | "*" type | STRING { STRING }
    //         | "(" expr ")" | "(" expr "," expr { "," expr } ")" | "[" expr { "," expr } "]"
    _primary: ($) => choice(
      $.integer,
      $.float,
      $.true,
      $.false,
      $.none,
      $.identifier,
      $.primitive_type,
      $.pointer_type,
      $.parenthesized_expression,
      $.tuple_expression,
      $.list_expression,
      $._string_literal,
    ),

    parenthesized_expression: ($) => seq('(', $._expression, ')'),

    tuple_expression: ($) => seq('(', optional(seq($._expression, choice(seq(repeat1(seq(',', $._expression)), optional(',')), ','))), ')'), // () too: the empty tuple

    list_expression: ($) => seq('[', optional(seq(commaSep1($._expression), optional(','))), ']'), // [] too: a scalar's shape

    true: (_) => 'true',
    false: (_) => 'false',

    // Integer literals: decimal, hex, binary, with optional `_` separators, as in Python: one at a time, between
    // digits (or right after 0x / 0b): 1_000, 0x_ff; 1__0, 1_ and 0x_ are no literals.
    integer: (_) => token(choice(
      /[0-9](_?[0-9])*/,
      /0[xX]_?[0-9a-fA-F](_?[0-9a-fA-F])*/,
      /0[bB]_?[01](_?[01])*/,
    )),

    // Float literals: `1.0`, `1e-5`, `.5`, `2.5e3`, `1_0.2_5` (separators between digits only: 1_.5, 1._5, 1_e5 are none).
    float: (_) => token(choice(
      /[0-9](_?[0-9])*\.([0-9](_?[0-9])*)?([eE][+-]?[0-9](_?[0-9])*)?/,
      /\.[0-9](_?[0-9])*([eE][+-]?[0-9](_?[0-9])*)?/,
      /[0-9](_?[0-9])*[eE][+-]?[0-9](_?[0-9])*/,
    )),

    // Strings: "..." on one line, with Python's escapes (\" \' \\ \n \t \r; another backslash stays as written).
    // "..." on one line, or Python's """...""" over lines (multi-line inline assembly)
    string: (_) => token(choice(
      seq('"', repeat(choice(/[^"\\\n]/, /\\[^\n]/)), '"'),
      seq('"""', repeat(choice(/[^"\\]/, /\\(.|\n)/, /"[^"\\]/, /""[^"\\]/)), '"""'),
    )),

    identifier: (_) => /[A-Za-z_][A-Za-z0-9_]*/,

    // `// to end of line` and `/* block */` (not nested)
    comment: (_) => token(choice(
      seq('//', /[^\n]*/),
      seq('/*', /[^*]*\*+([^/*][^*]*\*+)*/, '/'),
    )),
  },
});
