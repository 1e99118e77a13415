// The C surface MainLoop needs: libevent's core and pthreads glue, plus the
// few Linux calls that Glibc does not hand to Swift in a usable shape.
#ifndef MAINLOOP_CLIBEVENT_SHIM_H
#define MAINLOOP_CLIBEVENT_SHIM_H

// libc first: event-config.h defines _GNU_SOURCE, which changes fd_set.
#include <sys/types.h>
#include <sys/time.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <malloc.h>  /* malloc_usable_size, for the tests of a record's size */
#include <pthread.h>
#include <time.h>
#include <semaphore.h>

#include <event2/event.h>
#include <event2/thread.h>

/// The kernel thread id of the caller. Unlike pthread_self(), which glibc
/// declares const, the compiler cannot reuse its value across suspensions.
static inline pid_t mainloop_gettid(void) { return (pid_t)syscall(SYS_gettid); }

/// Names the calling thread (at most 15 bytes are kept by the kernel).
static inline int mainloop_set_thread_name(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}

/// Adds 1 to an eventfd's counter, retrying on EINTR. Returns 0 or an errno.
/// EAGAIN (counter at its maximum) means the loop is already due to wake,
/// which is all a write is for, so it counts as success.
static inline int mainloop_eventfd_signal(int fd) {
    uint64_t one = 1;
    for (;;) {
        if (write(fd, &one, sizeof one) == (ssize_t)sizeof one) return 0;
        if (errno == EINTR) continue;
        return errno == EAGAIN ? 0 : errno;
    }
}

/// Resets an eventfd's counter to zero. Returns 0 or an errno (EAGAIN: it was zero).
static inline int mainloop_eventfd_drain(int fd) {
    uint64_t value;
    for (;;) {
        if (read(fd, &value, sizeof value) == (ssize_t)sizeof value) return 0;
        if (errno == EINTR) continue;
        return errno == EAGAIN ? 0 : errno;
    }
}

/// A non-blocking, close-on-exec timerfd on CLOCK_MONOTONIC, or -1 (errno set).
static inline int mainloop_timerfd_create(void) {
    return timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
}

/// Sets a timerfd to expire once, at `deadline_ns` on CLOCK_MONOTONIC (an
/// absolute time; one already past expires at once). 0 would disarm it, so
/// it is taken as 1. Returns 0 or an errno.
static inline int mainloop_timerfd_set(int fd, uint64_t deadline_ns) {
    if (deadline_ns == 0) deadline_ns = 1;
    struct itimerspec setting = {
        .it_interval = { 0, 0 },
        .it_value = { (time_t)(deadline_ns / 1000000000u), (long)(deadline_ns % 1000000000u) },
    };
    return timerfd_settime(fd, TFD_TIMER_ABSTIME, &setting, NULL) == 0 ? 0 : errno;
}

/// A mutex that spins briefly before sleeping: the mailbox's critical
/// sections are a few instructions long, so a contended lock is usually free
/// again before a futex round trip would have completed.
static inline int mainloop_mutex_init_adaptive(pthread_mutex_t *mutex) {
    pthread_mutexattr_t attr;
    int rc = pthread_mutexattr_init(&attr);
    if (rc) return rc;
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
    rc = pthread_mutex_init(mutex, &attr);
    pthread_mutexattr_destroy(&attr);
    return rc;
}

/// A condition variable whose timeouts run on CLOCK_MONOTONIC.
static inline int mainloop_cond_init_monotonic(pthread_cond_t *cond) {
    pthread_condattr_t attr;
    int rc = pthread_condattr_init(&attr);
    if (rc) return rc;
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    rc = pthread_cond_init(cond, &attr);
    pthread_condattr_destroy(&attr);
    return rc;
}

/// Waits on `cond` (`mutex` held) until signalled or until the
/// CLOCK_MONOTONIC deadline in nanoseconds (0: no deadline). 0 or ETIMEDOUT.
static inline int mainloop_cond_wait_until(pthread_cond_t *cond, pthread_mutex_t *mutex, uint64_t deadline_ns) {
    if (deadline_ns == 0) return pthread_cond_wait(cond, mutex);
    struct timespec ts = { .tv_sec = (time_t)(deadline_ns / 1000000000u),
                           .tv_nsec = (long)(deadline_ns % 1000000000u) };
    return pthread_cond_timedwait(cond, mutex, &ts);
}

/// A mutex and a condition variable in one allocation: what a latch with
/// several waiters (a loop's termination) sleeps on. Timeouts run on
/// CLOCK_MONOTONIC, so wall-clock changes cannot shorten or stretch a wait.
typedef struct {
    pthread_mutex_t mutex;
    pthread_cond_t cond;
} mainloop_parker;

static inline int mainloop_parker_init(mainloop_parker *p) {
    int rc = pthread_mutex_init(&p->mutex, NULL);
    return rc ? rc : mainloop_cond_init_monotonic(&p->cond);
}

static inline void mainloop_parker_destroy(mainloop_parker *p) {
    pthread_cond_destroy(&p->cond);
    pthread_mutex_destroy(&p->mutex);
}

/// Waits on the parker's condition (its mutex held) until woken or until the
/// CLOCK_MONOTONIC deadline in nanoseconds passes (0: no deadline).
/// Returns 0, or ETIMEDOUT.
static inline int mainloop_parker_wait(mainloop_parker *p, uint64_t deadline_ns) {
    return mainloop_cond_wait_until(&p->cond, &p->mutex, deadline_ns);
}

/// Takes one count from `sem`, sleeping until one is posted or until the
/// CLOCK_MONOTONIC deadline in nanoseconds (0: no deadline). Retries on EINTR.
/// Returns 0, or ETIMEDOUT.
static inline int mainloop_sem_wait_until(sem_t *sem, uint64_t deadline_ns) {
    struct timespec ts = { .tv_sec = (time_t)(deadline_ns / 1000000000u),
                           .tv_nsec = (long)(deadline_ns % 1000000000u) };
    for (;;) {
        int rc = deadline_ns == 0 ? sem_wait(sem) : sem_clockwait(sem, CLOCK_MONOTONIC, &ts);
        if (rc == 0) return 0;
        if (errno == EINTR) continue;
        return errno;
    }
}

static inline uint64_t mainloop_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Asks for the cache lines of the `bytes` bytes at `p` to be brought to
 * this core for writing, ahead of the writes (a hint: never faults). */
static inline void mainloop_prefetch_for_write(const void *p, unsigned long bytes) {
    const char *line = (const char *)((unsigned long)p & ~63ul);
    for (; line < (const char *)p + bytes; line += 64) __builtin_prefetch(line, 1, 3);
}

/* Sleeps `ns` nanoseconds on CLOCK_MONOTONIC (a watchdog's period). */
static inline void mainloop_sleep_ns(uint64_t ns) {
    struct timespec duration = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };
    while (clock_nanosleep(CLOCK_MONOTONIC, 0, &duration, &duration) == EINTR) {}
}

/// libdispatch's hooks for a run loop that drains the main queue (what
/// CoreFoundation uses): an eventfd that becomes readable when main-queue
/// work is pending, and the call that runs it. Exported by libdispatch.so;
/// declared here because no public header does.
extern int _dispatch_get_main_queue_handle_4CF(void);
extern void _dispatch_main_queue_callback_4CF(void *msg);

#endif
