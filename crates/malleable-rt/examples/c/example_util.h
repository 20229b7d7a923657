/*
 * example_util.h: what the C examples share beside the runtime: reading a
 * whole-number option, allocating or stopping, and sleeping the emulated
 * computation. Each example defines EXAMPLE_NAME before including it.
 */
#ifndef MALL_EXAMPLE_UTIL_H
#define MALL_EXAMPLE_UTIL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static void *alloc_or_die(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, EXAMPLE_NAME ": out of memory\n");
        exit(1);
    }
    return p;
}

/* The value of option `name`, a whole number from `min` to `max`. */
static unsigned long long parse_number(const char *name, const char *value, unsigned long long min,
                                       unsigned long long max)
{
    char *end;
    unsigned long long n;
    if (!value) {
        fprintf(stderr, EXAMPLE_NAME ": %s needs a value\n", name);
        exit(2);
    }
    errno = 0;
    n = strtoull(value, &end, 10);
    if (value[0] < '0' || value[0] > '9' || *end != '\0' || errno != 0 || n < min || n > max) {
        fprintf(stderr, EXAMPLE_NAME ": %s %s: expected a whole number from %llu to %llu\n", name, value, min,
                max);
        exit(2);
    }
    return n;
}

/* Sleep `us` microseconds, resumed when a signal interrupts it. */
static void sleep_us(unsigned long long us)
{
    struct timespec t;
    t.tv_sec = (time_t)(us / 1000000);
    t.tv_nsec = (long)(us % 1000000) * 1000;
    while (nanosleep(&t, &t) != 0 && errno == EINTR) {
    }
}

#endif /* MALL_EXAMPLE_UTIL_H */
