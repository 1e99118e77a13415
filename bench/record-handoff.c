/* record-handoff.c: a C model of an invocation record's trip, without
 * Swift: one thread writes 112-byte records (14 words, an invocation of two
 * arguments) and hands their addresses through a ring to a second thread,
 * which reads three words of each and writes one (its run and release).
 * Two ways to get the next record's memory:
 *   malloc  malloc() on the writer, free() on the reader: glibc serves the
 *           writer blocks the reader's core just freed (what MainLoop does);
 *   reuse   the reader hands each record back, and the writer refills the
 *           one handed back half a ring (RING / 2 records) earlier.
 * Prints M records/s for ROUNDS rounds of each, alternating, on one line
 * per round. Nothing in MainLoop runs: Performance.md compares these rates
 * with the invocation's, measured in the same minutes.
 * usage: gcc -O2 -pthread bench/record-handoff.c -o record-handoff && ./record-handoff [ROUNDS] */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { RECORDS = 2000000, RING = 4096, WORDS = 14 };

static void *_Atomic ring[RING];
static void *handedBack[RING];
static _Alignas(64) _Atomic uint64_t written;
static _Alignas(64) _Atomic uint64_t consumed;
static int reuse;
static volatile uint64_t sink;

static uint64_t nowNs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void *reader(void *unused) {
  (void)unused;
  uint64_t head = 0, sum = 0;
  while (head < RECORDS) {
    uint64_t tail = atomic_load_explicit(&written, memory_order_acquire);
    for (; head < tail; head++) {
      uint64_t *record = atomic_load_explicit(&ring[head % RING], memory_order_relaxed);
      sum += record[0] + record[5] + record[10];
      record[1] = 0;
      if (reuse) handedBack[head % RING] = record;
      else free(record);
    }
    atomic_store_explicit(&consumed, head, memory_order_release);
  }
  sink = sum;
  return NULL;
}

static double round_(int withReuse) {
  reuse = withReuse;
  atomic_store(&written, 0);
  atomic_store(&consumed, 0);
  pthread_t thread;
  pthread_create(&thread, NULL, reader, NULL);
  uint64_t start = nowNs();
  for (uint64_t i = 0; i < RECORDS; i++) {
    while (i - atomic_load_explicit(&consumed, memory_order_acquire) >= RING / 2) {}
    uint64_t *record;
    if (reuse && i >= RING / 2) record = handedBack[(i - RING / 2) % RING];
    else record = malloc(WORDS * sizeof(uint64_t));
    for (int k = 0; k < WORDS; k++) record[k] = i + k;
    atomic_store_explicit(&ring[i % RING], record, memory_order_relaxed);
    atomic_store_explicit(&written, i + 1, memory_order_release);
  }
  pthread_join(thread, NULL);
  double rate = RECORDS * 1e3 / (double)(nowNs() - start);
  if (reuse) /* the last RING / 2 records handed back are still held */
    for (uint64_t i = RECORDS - RING / 2; i < RECORDS; i++) free(handedBack[i % RING]);
  return rate;
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 5;
  for (int r = 0; r < rounds; r++) {
    double viaMalloc = round_(0), viaReuse = round_(1);
    printf("round %d: malloc %.2f M/s, reuse %.2f M/s\n", r + 1, viaMalloc, viaReuse);
  }
  return 0;
}
