; Indentation for Helix.
[
  (block)
  (parameter_list)
  (argument_list)
  (list_expression)
  (parenthesized_expression)
] @indent

[
  "}"
  ")"
  "]"
] @outdent
