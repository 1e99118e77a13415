// heap_accounting.c: Redis's used_memory, counted as allocations happen,
// as Redis's zmalloc counts (though of the whole process's heap, Lua's
// and the libraries' too, as mallinfo2 reported, where zmalloc counts
// Redis's own calls): the executable interposes glibc's allocation entry
// points, each forwarding to glibc's own (__libc_*) and adding or taking
// away the block's usable size. glibc's mallinfo2, which answered before,
// walks every free block of every arena under the arena's lock: 41-44 ms
// for an INFO on a heap of 500,000 keys after 500,000 deletions, the core
// loop stalled all along, and any client (a monitor polling INFO) could
// ask for it.
//
// The counts are spread over 64 counters, each on a line of its own, a
// thread's chosen by a hash of its thread pointer: threads mostly add to
// lines of their own, so an allocation costs an atomic add that rarely
// takes a line from another core. A block freed by another thread than
// the one that allocated it is taken off that thread's counter; only the
// sum means anything, and it is exact whenever no allocation is under
// way. The thread pointer is valid from the first call that reaches
// these functions (glibc switches to them after setting it up).
//
// The usable size is read from the block's glibc header, as glibc's own
// malloc_usable_size computes it, not by calling malloc_usable_size: an
// allocator preloaded by the operator (LD_PRELOAD) would answer that call
// for blocks it never made. Its malloc and free are not used either: the
// executable's definitions come first, and they are glibc's.
//
// Under a sanitizer, whose runtime has its own malloc and its own count,
// nothing is interposed (heap_accounting.h's function is then absent,
// and CMalloc's shim asks the sanitizer).
#define _GNU_SOURCE
#include "heap_accounting.h"
#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdint.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define KVD_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define KVD_SANITIZED 1
#endif

#ifndef KVD_SANITIZED

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);
extern void __libc_free(void *);

enum { counters = 64 };

static struct {
    _Atomic int64_t bytes;
    char line[128 - sizeof(int64_t)];
} counted[counters] __attribute__((aligned(128)));

static inline _Atomic int64_t *counter(void) {
    // Threads' pointers lie megabytes apart at the same page offset: a
    // multiplicative hash spreads them over the counters.
    uint64_t thread = (uint64_t)(uintptr_t)__builtin_thread_pointer();
    return &counted[(thread * 0x9E3779B97F4A7C15u) >> 58].bytes;
}

// glibc's musable(): the chunk's size field precedes the block; its low
// three bits are flags (2: the chunk is mapped on its own), and a chunk
// keeps 8 bytes of its size for its header, 16 when mapped.
static inline int64_t usable(void *block) {
    size_t field = ((size_t *)block)[-1];
    size_t size = field & ~(size_t)7;
    return (int64_t)((field & 2) ? size - 2 * sizeof(size_t) : size - sizeof(size_t));
}

static inline void *added(void *block) {
    if (block) atomic_fetch_add_explicit(counter(), usable(block), memory_order_relaxed);
    return block;
}

static inline void taken(void *block) {
    if (block) atomic_fetch_sub_explicit(counter(), usable(block), memory_order_relaxed);
}

size_t kvd_heap_allocated_bytes(void) {
    int64_t sum = 0;
    for (int i = 0; i < counters; i++) sum += atomic_load_explicit(&counted[i].bytes, memory_order_relaxed);
    return sum > 0 ? (size_t)sum : 0;
}

void *malloc(size_t size) { return added(__libc_malloc(size)); }
void *calloc(size_t count, size_t size) { return added(__libc_calloc(count, size)); }
void free(void *block) {
    taken(block);
    __libc_free(block);
}
void *realloc(void *block, size_t size) {
    // The old block's size leaves the count before glibc may free it; if
    // glibc fails, the block is still the caller's and is counted again.
    taken(block);
    void *moved = __libc_realloc(block, size);
    if (moved) return added(moved);
    if (size != 0) added(block);
    return NULL;
}
void *reallocarray(void *block, size_t count, size_t size) {
    size_t total;
    if (__builtin_mul_overflow(count, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(block, total);
}
void *memalign(size_t alignment, size_t size) { return added(__libc_memalign(alignment, size)); }
void *aligned_alloc(size_t alignment, size_t size) { return added(__libc_memalign(alignment, size)); }
void *valloc(size_t size) { return added(__libc_valloc(size)); }
void *pvalloc(size_t size) { return added(__libc_pvalloc(size)); }
int posix_memalign(void **out, size_t alignment, size_t size) {
    if (alignment == 0 || alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
    void *block = __libc_memalign(alignment, size);
    if (!block) return ENOMEM;
    *out = added(block);
    return 0;
}

#endif
