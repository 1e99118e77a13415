/* pingpong.c: how fast this machine moves one cache line between two
 * threads, now. Two threads hand a counter back and forth through one
 * 64-byte-aligned atomic word; the main thread prints the round trips per
 * second (millions; a round trip is two handoffs, there and back) of
 * WINDOWS windows of 100 ms each, on one line.
 * Nothing else runs: a figure that changes between windows is the machine
 * (where the host put the two vCPUs, what else it runs), not a program.
 * usage: pingpong [WINDOWS]   (bench/moments.sh builds and runs it) */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static _Alignas(64) _Atomic long turn;
static _Alignas(64) _Atomic int stop;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Odd turns are this thread's. */
static void *other(void *unused) {
  (void)unused;
  long mine = 1;
  while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
    if (atomic_load_explicit(&turn, memory_order_acquire) == mine) {
      atomic_store_explicit(&turn, mine + 1, memory_order_release);
      mine += 2;
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  int windows = argc > 1 ? atoi(argv[1]) : 8;
  pthread_t thread;
  pthread_create(&thread, NULL, other, NULL);
  long mine = 0;
  for (int w = 0; w < windows; w++) {
    double t0 = now();
    long start = mine;
    while (now() - t0 < 0.1) {
      for (int k = 0; k < 1000; k++) {
        while (atomic_load_explicit(&turn, memory_order_acquire) != mine) {}
        atomic_store_explicit(&turn, mine + 1, memory_order_release);
        mine += 2;
      }
    }
    /* `mine` moves by 2 per round trip. */
    printf("%s%.2f", w ? " " : "", (mine - start) / 2 / (now() - t0) / 1e6);
  }
  printf("\n");
  atomic_store(&stop, 1);
  pthread_join(thread, NULL);
  return 0;
}
