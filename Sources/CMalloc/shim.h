// glibc's allocator calls that Glibc does not hand to Swift: mallinfo2
// (INFO memory's used_memory, MEMORY DOCTOR) and malloc_trim (MEMORY PURGE).
#ifndef KVD_CMALLOC_SHIM_H
#define KVD_CMALLOC_SHIM_H
#include <malloc.h>
#endif
