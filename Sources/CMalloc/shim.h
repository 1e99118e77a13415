// glibc's allocator calls that Glibc does not hand to Swift: mallinfo2
// (INFO memory's used_memory, MEMORY DOCTOR, through kvd_allocated_bytes)
// and malloc_trim (MEMORY PURGE).
#ifndef KVD_CMALLOC_SHIM_H
#define KVD_CMALLOC_SHIM_H
#include <malloc.h>
#include <stddef.h>

/* The bytes the allocator has handed out and not had back (Redis's
   used_memory). Under a sanitizer (kvd or its tests built with --sanitize)
   the sanitizer's allocator replaces glibc's, whose mallinfo2 then walks
   arenas nothing set up: a test under ThreadSanitizer crashed in it. The
   sanitizer's runtime defines the weak symbol below, and its count is used;
   otherwise it is null and glibc answers. */
extern size_t __sanitizer_get_current_allocated_bytes(void) __attribute__((weak));
/* kvd's executable (and the tests' process, which links its targets)
   counts its heap as it goes (CHeapAccounting): an answer in nanoseconds,
   where mallinfo2 walks every free block under the arenas' locks (41-44 ms
   on a heap of 500,000 keys after 500,000 deletions). Absent under a
   sanitizer and in kvd-allocations. */
extern size_t kvd_heap_allocated_bytes(void) __attribute__((weak));

static inline size_t kvd_allocated_bytes(void) {
    if (kvd_heap_allocated_bytes) return kvd_heap_allocated_bytes();
    if (__sanitizer_get_current_allocated_bytes) return __sanitizer_get_current_allocated_bytes();
    struct mallinfo2 stats = mallinfo2();
    return stats.uordblks + stats.hblkhd;
}
#endif
