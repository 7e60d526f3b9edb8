/* handles.h - the registry of live API handles (runtime/handles.c). */
#ifndef TILE_RUNTIME_HANDLES_H
#define TILE_RUNTIME_HANDLES_H

#include <stdbool.h>
#include <stddef.h>

typedef enum HandleKind { HANDLE_CONTEXT, HANDLE_MODULE, HANDLE_KERNEL, HANDLE_STREAM, HANDLE_EVENT } HandleKind;

/* Enter p as a live handle of kind (false: out of memory). */
bool handle_add(const void *p, HandleKind kind);
/* p is no longer a handle (before its memory is freed); unknown p is ignored. */
void handle_remove(const void *p);
/* The registry's table size in slots (tests: it follows the live handles, not all ever made). */
size_t handle_table_slots(void);
/* Is p a live handle of kind?  Never reads through p. */
bool handle_live(const void *p, HandleKind kind);

#endif
