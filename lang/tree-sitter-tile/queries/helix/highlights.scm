; Syntax highlighting for tile, in Helix's scope names.  Helix lets the
; first matching pattern win, so specific patterns come first (the reverse
; of ../highlights.scm, which is for Neovim).

(comment) @comment

(string) @string

(integer) @constant.numeric.integer

(float) @constant.numeric.float

[
  (true)
  (false)
] @constant.builtin.boolean

(none) @constant.builtin

(primitive_type) @type.builtin

(pointer_type
  "*" @type.builtin)

(attribute
  "@" @attribute
  name: (identifier) @attribute)

(function_definition
  name: (identifier) @function)

(kernel_definition
  name: (identifier) @function)

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

; a type given by a call (`as pointer_type(f16)`): the query built-ins, else a user's function
((type_call
  function: (identifier) @function.builtin)
  (#any-of? @function.builtin "dtype_of" "element_type" "pointer_type"))

(type_call
  function: (identifier) @function)

(call_expression
  function: (identifier) @function)

(parameter
  name: (identifier) @variable.parameter)

(keyword_argument
  name: (identifier) @variable.parameter)

(const_parameter
  name: (identifier) @constant)

(const_declaration
  name: (identifier) @constant)

((identifier) @constant
  (#match? @constant "^[A-Z][A-Z0-9_]*$"))

(identifier) @variable

[
  "fn"
  "kernel"
] @keyword.function

"let" @keyword

"const" @keyword.storage.modifier

[
  "assert"
  "pass"
] @keyword

"import" @keyword.control.import

"return" @keyword.control.return

[
  "for"
  "in"
  "range"
  "static_range"
  "while"
  "break"
  "continue"
] @keyword.control.repeat

[
  "if"
  "else"
] @keyword.control.conditional

[
  "as"
  "is"
  "not"
] @keyword.operator

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
