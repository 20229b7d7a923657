/*
 * mall_stencil.c: a malleable C application for mall-run, the C twin of
 * crates/mall-example. It smooths a line of cells (each becomes the mean
 * of itself and its two neighbours, 0 beyond the ends) for a number of
 * iterations, spread in equal blocks over its workers. Each iteration it
 * probes for a resize, exchanges the block edges with the neighbouring
 * workers and computes; on a resize it moves its cells to the new set of
 * workers and goes on. Rank 0 gathers the line at the end and prints its
 * checksum, which --serial computes in one process for comparison.
 *
 * Computation is emulated: each iteration also sleeps --unit-us
 * microseconds per cell the worker holds, as a node of its own would
 * spend computing, so the job runs faster on more nodes.
 *
 *   mall-run -- mall-stencil-c --cells 4096 --iterations 300 --unit-us 50
 *   mall-stencil-c --serial --cells 4096 --iterations 300
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "malleable_rt.h"

#define EXAMPLE_NAME "mall-stencil-c"
#include "example_util.h"

#define REPORT_EVERY 10

struct options {
    unsigned long long cells, iterations, unit_us;
    int serial;
};

/* A worker's part of the line. */
struct block {
    double *cells;
    size_t count;
};

/* Stop on a failed runtime call, saying why. */
static void check(int rc)
{
    if (rc != 0) {
        fprintf(stderr, "mall-stencil-c: %s\n", mall_last_error());
        exit(1);
    }
}

static struct options parse_options(int argc, char **argv)
{
    struct options o = {4096, 200, 50, 0};
    int i;
    for (i = 1; i < argc; i++) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--cells") == 0) {
            o.cells = parse_number("--cells", value, 1, 1ULL << 32);
            i++;
        } else if (strcmp(argv[i], "--iterations") == 0) {
            o.iterations = parse_number("--iterations", value, 0, 1ULL << 40);
            i++;
        } else if (strcmp(argv[i], "--unit-us") == 0) {
            o.unit_us = parse_number("--unit-us", value, 0, 1000000);
            i++;
        } else if (strcmp(argv[i], "--serial") == 0) {
            o.serial = 1;
        } else {
            fprintf(stderr, "mall-stencil-c: unknown option '%s'\n"
                    "usage: mall-stencil-c [--cells N] [--iterations N] [--unit-us N] [--serial]\n",
                    argv[i]);
            exit(2);
        }
    }
    return o;
}

/* The line's start: a saw-tooth, so smoothing has work to do. */
static double initial(size_t i)
{
    return (double)(i % 17);
}

/* One smoothing step of `cells` in place, given the cells just left and
   right of it (0 beyond the ends of the line). */
static void smooth(double *cells, size_t count, double left, double right)
{
    double before = left;
    size_t i;
    for (i = 0; i < count; i++) {
        double self = cells[i];
        double after = i + 1 < count ? cells[i + 1] : right;
        cells[i] = (before + self + after) / 3.0;
        before = self;
    }
}

/* The sum of the cells, in order. */
static double checksum(const double *cells, size_t count)
{
    double sum = 0.0;
    size_t i;
    for (i = 0; i < count; i++)
        sum += cells[i];
    return sum;
}

static void print_done(const struct options *o, double sum, unsigned workers)
{
    printf("mall-stencil-c: done iterations=%llu cells=%llu checksum=%.17e workers=%u\n",
           o->iterations, o->cells, sum, workers);
}

static int serial(const struct options *o)
{
    size_t n = (size_t)o->cells, i;
    double *line = alloc_or_die(n * sizeof(double));
    unsigned long long it;
    for (i = 0; i < n; i++)
        line[i] = initial(i);
    for (it = 0; it < o->iterations; it++)
        smooth(line, n, 0.0, 0.0);
    print_done(o, checksum(line, n), 1);
    free(line);
    return 0;
}

/* This worker's first cell and count, in equal blocks (the first ones one
   more when it does not divide), as mall_redistribute splits them. */
static void block_of(size_t cells, unsigned rank, unsigned size, size_t *first, size_t *count)
{
    size_t base = cells / size, extra = cells % size;
    *first = rank * base + (rank < extra ? rank : extra);
    *count = base + (rank < extra ? 1 : 0);
}

/* The one double worker `from` sent. */
static double recv_double(mall_rt *rt, unsigned from)
{
    void *msg;
    size_t len;
    double x;
    check(mall_recv(rt, from, &msg, &len));
    if (len != sizeof x) {
        fprintf(stderr, "mall-stencil-c: %zu bytes from worker %u, not one double\n", len, from);
        exit(1);
    }
    memcpy(&x, msg, sizeof x);
    mall_free(msg);
    return x;
}

/* Carry out the adaptation under way: begin, move the cells, commit.
   Returns 1 when this worker leaves (it has then finished). */
static int adapt(mall_rt *rt, struct block *b)
{
    uint32_t rank, size;
    int leaving;
    void *moved;
    size_t count;
    check(mall_begin(rt, &rank, &size, &leaving));
    check(mall_redistribute(rt, b->cells, sizeof(double), b->count, &moved, &count));
    /* What the runtime hands out goes back with mall_free; the block
       itself stays ours (malloc and free). */
    free(b->cells);
    b->cells = alloc_or_die(count * sizeof(double));
    memcpy(b->cells, moved, count * sizeof(double));
    b->count = count;
    mall_free(moved);
    if (leaving) {
        check(mall_finish(rt));
        return 1;
    }
    check(mall_commit(rt));
    return 0;
}

/* Rank 0's iteration, which every worker learns right after each
   adaptation (a joining worker knows none of its own). */
static unsigned long long agree_on_iteration(mall_rt *rt, unsigned long long mine)
{
    uint32_t rank;
    double v, sum;
    check(mall_rank(rt, &rank));
    v = rank == 0 ? (double)mine : 0.0;
    check(mall_allreduce_sum(rt, &v, &sum, 1));
    return (unsigned long long)sum;
}

static int malleable(const struct options *o)
{
    mall_rt *rt;
    uint64_t joining;
    uint32_t rank, size;
    struct block b = {NULL, 0};
    unsigned long long iteration = 0;
    unsigned since_report = 0;
    const char *node = getenv("SLURMD_NODENAME");
    int probed;
    node = node ? node : "";

    check(mall_init(&rt, &joining));
    check(mall_rank(rt, &rank));
    check(mall_size(rt, &size));
    /* A joining worker enters the loop where the others are: just after
       the probe that started the adaptation. */
    probed = joining != 0;
    if (joining) {
        printf("mall-stencil-c: worker joining on %s\n", node);
        if (adapt(rt, &b)) {
            fprintf(stderr, "mall-stencil-c: a joining worker was told to leave\n");
            return 1;
        }
    } else {
        size_t first, i;
        if (o->cells < size) {
            fprintf(stderr, "mall-stencil-c: --cells %llu is fewer than the %u workers\n", o->cells, size);
            return 1;
        }
        block_of((size_t)o->cells, rank, size, &first, &b.count);
        b.cells = alloc_or_die(b.count * sizeof(double));
        for (i = 0; i < b.count; i++)
            b.cells[i] = initial(first + i);
        printf("mall-stencil-c: worker %u of %u on %s\n", rank, size, node);
    }
    iteration = agree_on_iteration(rt, iteration);

    while (iteration < o->iterations) {
        double left = 0.0, right = 0.0;
        if (!probed) {
            int action;
            uint32_t new_size;
            check(mall_probe(rt, &action, &new_size));
            if (action != MALL_NONE) {
                check(mall_rank(rt, &rank));
                if (rank == 0)
                    printf("mall-stencil-c: iteration %llu: %s to %u workers\n", iteration,
                           action == MALL_EXPAND ? "expand" : "shrink", new_size);
                if (adapt(rt, &b)) {
                    printf("mall-stencil-c: worker leaving %s\n", node);
                    free(b.cells);
                    return 0;
                }
                iteration = agree_on_iteration(rt, iteration);
                since_report = 0;
                if (b.count == 0) {
                    check(mall_size(rt, &size));
                    fprintf(stderr, "mall-stencil-c: --cells %llu is fewer than the %u workers\n",
                            o->cells, size);
                    return 1;
                }
            }
        }
        probed = 0;

        /* The block's edges to the neighbours, theirs back. */
        check(mall_rank(rt, &rank));
        check(mall_size(rt, &size));
        if (rank > 0)
            check(mall_send(rt, rank - 1, &b.cells[0], sizeof(double)));
        if (rank + 1 < size)
            check(mall_send(rt, rank + 1, &b.cells[b.count - 1], sizeof(double)));
        if (rank > 0)
            left = recv_double(rt, rank - 1);
        if (rank + 1 < size)
            right = recv_double(rt, rank + 1);
        smooth(b.cells, b.count, left, right);
        sleep_us(o->unit_us * b.count);
        iteration++;
        if (++since_report >= REPORT_EVERY) {
            check(mall_report_measured(rt, since_report));
            since_report = 0;
        }
    }

    /* Rank 0 gathers the line, in rank order, and prints its checksum. */
    check(mall_rank(rt, &rank));
    check(mall_size(rt, &size));
    if (rank == 0) {
        double *line = alloc_or_die((size_t)o->cells * sizeof(double));
        size_t have = b.count;
        uint32_t r;
        memcpy(line, b.cells, b.count * sizeof(double));
        for (r = 1; r < size; r++) {
            void *msg;
            size_t len;
            check(mall_recv(rt, r, &msg, &len));
            if (len % sizeof(double) != 0 || have + len / sizeof(double) > o->cells) {
                fprintf(stderr, "mall-stencil-c: worker %u sent %zu bytes, not its block\n", r, len);
                return 1;
            }
            memcpy(line + have, msg, len);
            have += len / sizeof(double);
            mall_free(msg);
        }
        if (have != o->cells) {
            fprintf(stderr, "mall-stencil-c: gathered %zu cells of %llu\n", have, o->cells);
            return 1;
        }
        print_done(o, checksum(line, have), size);
        free(line);
    } else {
        check(mall_send(rt, 0, b.cells, b.count * sizeof(double)));
    }
    free(b.cells);
    check(mall_finish(rt));
    return 0;
}

int main(int argc, char **argv)
{
    struct options o = parse_options(argc, argv);
    /* Line by line, so that the job's output follows the run. */
    setvbuf(stdout, NULL, _IOLBF, 0);
    return o.serial ? serial(&o) : malleable(&o);
}
