// Counts heap allocations made while counting is switched on, so the
// benchmark can report allocations per post. Linked into mainloop-bench only.
#ifndef ALLOCATION_COUNTER_H
#define ALLOCATION_COUNTER_H
#include <stdint.h>

/// Starts counting from zero.
void allocation_counter_start(void);
/// Stops counting and returns the number of allocations seen since start.
uint64_t allocation_counter_stop(void);

#endif
