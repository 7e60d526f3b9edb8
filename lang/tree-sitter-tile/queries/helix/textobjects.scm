; Structural selection for Helix (`maf`, `mif`, `]f`, `map`, `mac`...).

(function_definition
  body: (_) @function.inside) @function.around

(kernel_definition
  body: (_) @function.inside) @function.around

(parameter_list
  ((_) @parameter.inside . ","? @parameter.around) @parameter.around)

(argument_list
  ((_) @parameter.inside . ","? @parameter.around) @parameter.around)

(comment) @comment.inside

(comment)+ @comment.around
