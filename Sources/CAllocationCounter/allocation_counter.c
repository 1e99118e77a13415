// Interposes the allocation entry points of glibc in this executable: each
// forwards to glibc's own implementation (__libc_*), counting calls while a
// measurement is on. Off, the cost is one relaxed load per allocation.
#define _GNU_SOURCE
#include "allocation_counter.h"
#include <errno.h>
#include <stddef.h>
#include <stdatomic.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static atomic_bool counting;
static atomic_uint_fast64_t allocations;

static inline void count(void) {
    if (atomic_load_explicit(&counting, memory_order_relaxed))
        atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
}

void allocation_counter_start(void) {
    atomic_store(&allocations, 0);
    atomic_store(&counting, 1);
}

uint64_t allocation_counter_stop(void) {
    atomic_store(&counting, 0);
    return atomic_load(&allocations);
}

void *malloc(size_t size) { count(); return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { count(); return __libc_calloc(n, size); }
void *realloc(void *p, size_t size) { count(); return __libc_realloc(p, size); }
void free(void *p) { __libc_free(p); }
void *memalign(size_t alignment, size_t size) { count(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { count(); return __libc_memalign(alignment, size); }
int posix_memalign(void **out, size_t alignment, size_t size) {
    count();
    void *p = __libc_memalign(alignment, size);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}
