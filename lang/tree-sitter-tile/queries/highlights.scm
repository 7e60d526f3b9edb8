; Syntax highlighting for tile, in nvim-treesitter's capture names.
; Later patterns win in Neovim, so general patterns come first.
; (Helix lets the first match win and names some captures differently:
; see queries/helix/highlights.scm.)

(identifier) @variable

; Names in SCREAMING_CASE are compile-time constants by convention.
((identifier) @constant
  (#match? @constant "^[A-Z][A-Z0-9_]*$"))

(parameter
  name: (identifier) @variable.parameter)

(const_parameter
  name: (identifier) @constant)

(const_declaration
  name: (identifier) @constant)

(keyword_argument
  name: (identifier) @variable.parameter)

(for_statement
  variable: (identifier) @variable)

; Declarations and calls
(function_definition
  name: (identifier) @function)

(kernel_definition
  name: (identifier) @function)

(call_expression
  function: (identifier) @function.call)

; a type given by a call (`as pointer_type(f16)`): the query built-ins, else a user's function
(type_call
  function: (identifier) @function.call)

((type_call
  function: (identifier) @function.builtin)
  (#any-of? @function.builtin "dtype_of" "element_type" "pointer_type" "tensor_desc"))

((call_expression
  function: (identifier) @function.builtin)
  (#any-of? @function.builtin
    "program_id" "num_programs" "arange" "zeros" "full" "reshape" "trans"
    "expand_dims" "broadcast_to" "where" "cast" "exp" "exp2" "log" "log2"
    "sqrt" "rsqrt" "abs" "sin" "cos" "tanh" "sigmoid" "erf" "floor" "ceil"
    "tan" "log10" "exp10" "erfinv" "lgamma" "tgamma" "fma" "minimum" "maximum" "min" "max" "sum" "argmax" "argmin" "cumsum"
    "dot" "load" "store" "atomic_add" "atomic_max" "atomic_min"
    "atomic_xchg" "atomic_cas" "atomic_and" "atomic_or" "atomic_xor" "atomic_load" "atomic_store" "atomic_poll"
    "gdc_wait" "gdc_launch_dependents"
    "make_tensor_descriptor" "load_tensor_descriptor" "store_tensor_descriptor"
    "atomic_add_tensor_descriptor" "atomic_max_tensor_descriptor" "atomic_min_tensor_descriptor"
    "atomic_and_tensor_descriptor" "atomic_or_tensor_descriptor" "atomic_xor_tensor_descriptor"
    "join" "split" "interleave" "cat" "ravel" "permute" "flip" "gather" "reduce" "associative_scan"
    "cumprod" "xor_sum" "reduce_or" "sort" "bitonic_merge" "topk" "histogram" "map_elementwise" "to_tensor" "constexpr"
    "multiple_of" "max_contiguous" "max_constancy" "assume"
    "dtype_of" "shape_of" "numel" "rank" "len" "zip" "enumerate" "is_float" "is_int" "is_signed" "is_ptr" "bitwidth" "element_type" "pointer_type"))

(attribute
  "@" @attribute
  name: (identifier) @attribute)

; Types
(primitive_type) @type.builtin

; Literals
(integer) @number

(float) @number.float

[
  (true)
  (false)
] @boolean

(none) @constant.builtin

(string) @string

(import_declaration
  path: (string) @string.special.path)

(comment) @comment @spell

; Keywords
[
  "fn"
  "kernel"
] @keyword.function

[
  "let"
  "const"
] @keyword

[
  "assert"
  "pass"
] @keyword

"import" @keyword.import

"return" @keyword.return

[
  "for"
  "in"
  "range"
  "static_range"
  "while"
  "break"
  "continue"
] @keyword.repeat

[
  "if"
  "else"
] @keyword.conditional

[
  "as"
  "is"
  "not"
] @keyword.operator

; Operators and punctuation
[
  "=" "+=" "-=" "*=" "/=" "%=" "&=" "|=" "^=" "<<=" ">>="
  "||" "&&" "|" "^" "&" "==" "!=" "<" "<=" ">" ">=" "<<" ">>"
  "+" "-" "*" "/" "%" "**" "!" "~"
] @operator

[
  "("
  ")"
  "["
  "]"
  "{"
  "}"
] @punctuation.bracket

[
  ";"
  ","
  ":"
] @punctuation.delimiter

(slice) @punctuation.special

; After the operators: the `*` of a pointer type is part of the type.
(pointer_type
  "*" @type.builtin)
