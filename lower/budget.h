/* budget.h - how much a kernel may ask of a thread, declared once: the front end's output is checked
 * against it before the passes (budget.c), and the IR LLVM gets, exactly, with its layouts
 * (llvm_codegen.c). */
#ifndef TILE_BUDGET_H
#define TILE_BUDGET_H

#include "tir.h"

enum {
    TIR_THREAD_WORDS = 2048,     /* 32-bit registers' worth of one tile's elements in each thread */
    TIR_KERNEL_WORDS = 1 << 18,  /* summed over the kernel's operations, what LLVM gets as instructions */
    TIR_CONTROL_WORDS = 16,      /* more for each if, for and while: LLVM's time grows with basic blocks */
    TIR_FRONT_END_FACTOR = 2,    /* before the passes the sum may be this many times TIR_KERNEL_WORDS */
};

/* The registers' worth of the front end's operations summed per kernel (each tile's elements spread evenly
 * over the program's threads, constants not counted); over TIR_FRONT_END_FACTOR * TIR_KERNEL_WORDS, an error at
 * the operation that crosses it and false. */
bool tir_check_front_end_size(Module *m, Diag *d);

#endif
