// The allocator's own figures (glibc's mallinfo2), which Glibc does not
// hand to Swift: INFO memory's used_memory, MEMORY STATS and
// MEMORY MALLOC-STATS read them.
#ifndef KVD_CMALLOC_SHIM_H
#define KVD_CMALLOC_SHIM_H
#include <malloc.h>
#endif
