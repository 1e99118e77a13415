// heap_accounting.h: the bytes kvd's heap holds, counted as they are
// allocated and freed (heap_accounting.c), for INFO's used_memory.
#ifndef KVD_HEAP_ACCOUNTING_H
#define KVD_HEAP_ACCOUNTING_H
#include <stddef.h>

/* The usable bytes of every block malloc and its kin handed out and free
   has not had back, summed over the counters (a few hundred nanoseconds);
   not defined under a sanitizer, which counts its own. */
size_t kvd_heap_allocated_bytes(void);

#endif
