/* heap.c - the device heap: malloc and free called by kernels (CUDA's device-side malloc, which
 * new/delete and thrust's sequential algorithms use).
 *
 * 1. One region of EMU_HEAP_BYTES (8 MiB, CUDA's default cudaLimitMallocHeapSize) in device memory,
 *    made the first time a module that calls malloc or free is launched (emu_heap_ready, before the
 *    launch's worker threads start, under the device's lock) and kept until the memory is destroyed.
 *    It is a module-owned allocation, so dev_free cannot free it.
 * 2. Blocks on several host threads take pieces of it under its mutex: first fit over a table of
 *    segments sorted by offset, sizes rounded up to 16 bytes (so every pointer is 16-byte aligned),
 *    neighbours merged when freed.  Pieces are not zeroed (nor are they on the GPU).
 * 3. Out of heap, malloc returns NULL, as on the GPU; free(NULL) does nothing; free of an address
 *    malloc did not give (or gave and was freed) is an error the launch stops with.
 * Memcheck sees the region as one allocation: an access past a piece but inside the heap is not
 * reported. */
#include "emu/emu.h"
#include "emu/exec.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct HeapSeg {
    uint64_t off, size;
    bool used;
} HeapSeg;

struct EmuHeap {
    pthread_mutex_t lock;
    uint64_t base, size;
    HeapSeg *seg; /* sorted by off, covering [0, size) */
    uint32_t n, cap;
};

bool emu_heap_ready(EmuMem *m) {
    if (m->heap) return true;
    EmuHeap *h = calloc(1, sizeof *h);
    if (!h || !(h->seg = malloc(16 * sizeof *h->seg))) {
        free(h);
        return false;
    }
    if (!emu_mem_alloc(m, EMU_HEAP_BYTES, true, &h->base)) {
        free(h->seg);
        free(h);
        return false;
    }
    h->size = EMU_HEAP_BYTES;
    h->cap = 16;
    h->seg[h->n++] = (HeapSeg){0, EMU_HEAP_BYTES, false};
    pthread_mutex_init(&h->lock, NULL);
    m->heap = h;
    return true;
}

void emu_heap_destroy(EmuMem *m) {
    EmuHeap *h = m->heap;
    if (!h) return;
    pthread_mutex_destroy(&h->lock);
    free(h->seg);
    free(h);
    m->heap = NULL; /* the region itself is one of m's allocations */
}

uint64_t emu_heap_malloc(EmuMem *m, uint64_t size) {
    EmuHeap *h = m->heap;
    if (!h || size == 0 || size > h->size) return 0;
    size = (size + 15) & ~15ull;
    uint64_t addr = 0;
    pthread_mutex_lock(&h->lock);
    for (uint32_t i = 0; i < h->n; i++) {
        HeapSeg *s = &h->seg[i];
        if (s->used || s->size < size) continue;
        if (s->size > size) { /* split: the rest stays free after it */
            if (h->n == h->cap) {
                HeapSeg *ns = realloc(h->seg, 2 * h->cap * sizeof *ns);
                if (!ns) break; /* out of host memory: as out of heap */
                h->seg = ns, h->cap *= 2;
                s = &h->seg[i];
            }
            memmove(&h->seg[i + 2], &h->seg[i + 1], (h->n - i - 1) * sizeof *h->seg);
            h->seg[i + 1] = (HeapSeg){s->off + size, s->size - size, false};
            h->n++;
            s->size = size;
        }
        s->used = true;
        addr = h->base + s->off;
        break;
    }
    pthread_mutex_unlock(&h->lock);
    return addr;
}

bool emu_heap_free(EmuMem *m, uint64_t addr) {
    EmuHeap *h = m->heap;
    if (!addr) return true;
    if (!h || addr < h->base || addr >= h->base + h->size) return false;
    uint64_t off = addr - h->base;
    bool ok = false;
    pthread_mutex_lock(&h->lock);
    uint32_t lo = 0, hi = h->n;
    while (lo < hi) { /* the segment starting at off */
        uint32_t mid = (lo + hi) / 2;
        if (h->seg[mid].off < off) lo = mid + 1;
        else hi = mid;
    }
    if (lo < h->n && h->seg[lo].off == off && h->seg[lo].used) {
        ok = true;
        h->seg[lo].used = false;
        if (lo + 1 < h->n && !h->seg[lo + 1].used) { /* merge with the next */
            h->seg[lo].size += h->seg[lo + 1].size;
            memmove(&h->seg[lo + 1], &h->seg[lo + 2], (h->n - lo - 2) * sizeof *h->seg);
            h->n--;
        }
        if (lo > 0 && !h->seg[lo - 1].used) { /* and with the previous */
            h->seg[lo - 1].size += h->seg[lo].size;
            memmove(&h->seg[lo], &h->seg[lo + 1], (h->n - lo - 1) * sizeof *h->seg);
            h->n--;
        }
    }
    pthread_mutex_unlock(&h->lock);
    return ok;
}
