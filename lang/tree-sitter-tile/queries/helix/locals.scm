; Scopes and definitions for Helix: a reference to a definition is
; highlighted with the scope named after @local.definition.

(source_file) @local.scope

(function_definition) @local.scope

(kernel_definition) @local.scope

(block) @local.scope

(for_statement) @local.scope

(parameter
  name: (identifier) @local.definition.variable.parameter)

(const_parameter
  name: (identifier) @local.definition.constant)

(const_declaration
  name: (identifier) @local.definition.constant)

(let_statement
  name: (identifier) @local.definition.variable)

(for_statement
  variable: (identifier) @local.definition.variable)

; `let (e) = t;` and `for (v) in t` define e and v (Python's parenthesized name is the name)
(let_statement
  name: (parenthesized_name
    (identifier) @local.definition.variable))

(for_statement
  variable: (parenthesized_name
    (identifier) @local.definition.variable))

(let_tuple_statement
  names: (names
    (identifier) @local.definition.variable))

(let_tuple_statement
  names: (names
    (names
      (identifier) @local.definition.variable)))

(let_tuple_statement
  names: (bare_names
    (identifier) @local.definition.variable))

(let_tuple_statement
  names: (bare_names
    (names
      (identifier) @local.definition.variable)))

(identifier) @local.reference
