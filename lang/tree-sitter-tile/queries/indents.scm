; Indentation (nvim-treesitter captures; Helix: queries/helix/indents.scm).
[
  (block)
  (parameter_list)
  (argument_list)
  (list_expression)
  (parenthesized_expression)
] @indent.begin

(block
  "}" @indent.end)

[
  "}"
  ")"
  "]"
] @indent.branch

(comment) @indent.auto

; While a block is still being typed its "{" sits in an ERROR node.
(ERROR
  "{" @indent.begin)
