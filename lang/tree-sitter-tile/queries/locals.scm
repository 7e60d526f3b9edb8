; Scopes, definitions and references (nvim-treesitter names; Helix reads the
; same @local.* captures).  A function sees only its parameters and
; file-level names; blocks and `for` open nested scopes.

(source_file) @local.scope

(function_definition) @local.scope

(kernel_definition) @local.scope

(block) @local.scope

(for_statement) @local.scope

; Functions and kernels are defined in the file, not in their own scope.
(function_definition
  name: (identifier) @local.definition.function
  (#set! definition.function.scope "parent"))

(kernel_definition
  name: (identifier) @local.definition.function
  (#set! definition.function.scope "parent"))

(const_declaration
  name: (identifier) @local.definition.constant)

(parameter
  name: (identifier) @local.definition.parameter)

(const_parameter
  name: (identifier) @local.definition.parameter)

(let_statement
  name: (identifier) @local.definition.var)

(for_statement
  variable: (identifier) @local.definition.var)

; `let (e) = t;` and `for (v) in t` define e and v (Python's parenthesized name is the name)
(let_statement
  name: (parenthesized_name
    (identifier) @local.definition.var))

(for_statement
  variable: (parenthesized_name
    (identifier) @local.definition.var))

; `let (a, (b, c)) = t;` and `let a, (b, c) = t;` define a, b and c (two levels of nesting); the
; names of a tuple assignment are references.
(let_tuple_statement
  names: (names
    (identifier) @local.definition.var))

(let_tuple_statement
  names: (names
    (names
      (identifier) @local.definition.var)))

(let_tuple_statement
  names: (bare_names
    (identifier) @local.definition.var))

(let_tuple_statement
  names: (bare_names
    (names
      (identifier) @local.definition.var)))

(identifier) @local.reference
