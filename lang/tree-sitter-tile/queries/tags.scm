; Code navigation and outlines (tree-sitter tags; also used by GitHub).
(function_definition
  name: (identifier) @name) @definition.function

(kernel_definition
  name: (identifier) @name) @definition.function

(const_declaration
  name: (identifier) @name) @definition.constant

(call_expression
  function: (identifier) @name) @reference.call
