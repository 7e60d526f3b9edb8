; Folds: whole declarations, blocks, long parameter and argument lists,
; block comments.
[
  (function_definition)
  (kernel_definition)
  (block)
  (parameter_list)
  (argument_list)
  (list_expression)
  (comment)
] @fold
