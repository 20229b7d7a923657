/*
 * mall_jacobi_mpi.c: a malleable MPI application for `mall-run --mpi
 * restart`: 2-D Jacobi relaxation of a grid of --rows x --cols cells (the
 * border fixed, the top row hot), its rows spread in equal blocks over the
 * MPI ranks, which trade their edge rows with MPI_Sendrecv each iteration.
 * At each iteration's start the ranks probe for a resize; at one, every
 * rank checkpoints its rows and ends, and mall-run starts the step again on
 * the new nodes, whose ranks resume from the checkpoint. Rank 0 gathers the
 * grid at the end and prints its checksum, which --serial computes in one
 * process, without MPI, for comparison: every cell is computed with the
 * same operations in the same order, so they are equal to the last bit.
 *
 * With --checkpoint-every N the ranks also save their rows with mall-run
 * every N iterations: if the job loses a node, mall-run starts the step
 * again on the nodes left, from the last of those checkpoints.
 *
 * Computation is emulated as in mall_stencil.c: --unit-us of sleep per row
 * a rank holds, each iteration.
 *
 *   mall-run --mpi restart --mpi-plugin pmix -- mall-jacobi-openmpi --rows 256 --iterations 200
 *   mall-jacobi-openmpi --serial --rows 256 --iterations 200
 */
#define _POSIX_C_SOURCE 200809L /* nanosleep */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>

#include "malleable_rt_mpi.h"

#define EXAMPLE_NAME "mall-jacobi-mpi"
#include "example_util.h"

#define REPORT_EVERY 10

struct options {
    unsigned long long rows, cols, iterations, unit_us, checkpoint_every;
    int serial;
};

/* Stop on a failed runtime call, saying why; the other ranks end with the
   step (srun --kill-on-bad-exit). */
static void check(int rc)
{
    if (rc != 0) {
        fprintf(stderr, "mall-jacobi-mpi: %s\n", mall_last_error());
        exit(1);
    }
}

static struct options parse_options(int argc, char **argv)
{
    struct options o = {256, 64, 200, 20, 0, 0};
    int i;
    for (i = 1; i < argc; i++) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--rows") == 0) {
            o.rows = parse_number("--rows", value, 3, 1ULL << 24);
            i++;
        } else if (strcmp(argv[i], "--cols") == 0) {
            o.cols = parse_number("--cols", value, 3, 1ULL << 24);
            i++;
        } else if (strcmp(argv[i], "--iterations") == 0) {
            o.iterations = parse_number("--iterations", value, 0, 1ULL << 40);
            i++;
        } else if (strcmp(argv[i], "--unit-us") == 0) {
            o.unit_us = parse_number("--unit-us", value, 0, 1000000);
            i++;
        } else if (strcmp(argv[i], "--checkpoint-every") == 0) {
            o.checkpoint_every = parse_number("--checkpoint-every", value, 0, 1ULL << 40);
            i++;
        } else if (strcmp(argv[i], "--serial") == 0) {
            o.serial = 1;
        } else {
            fprintf(stderr,
                    "mall-jacobi-mpi: unknown option '%s'\n"
                    "usage: mall-jacobi-mpi [--rows N] [--cols N] [--iterations N] [--unit-us N] "
                    "[--checkpoint-every N] [--serial]\n",
                    argv[i]);
            exit(2);
        }
    }
    return o;
}

/* The grid's start: the top row hot, a saw-tooth inside so every cell has
   work to do. */
static double initial(size_t row, size_t col)
{
    return row == 0 ? 100.0 : (double)((row * 31 + col * 17) % 23);
}

/* One Jacobi step of `count` rows starting at global row `first`, from
   `old` (count + 2 rows: a ghost row above and below) into `new` (same
   layout); the grid's border keeps its values. */
static void relax(const double *old, double *new, size_t first, size_t count, size_t rows, size_t cols)
{
    size_t r, c;
    for (r = 1; r <= count; r++) {
        size_t global = first + r - 1;
        const double *up = old + (r - 1) * cols, *here = old + r * cols, *down = old + (r + 1) * cols;
        double *out = new + r * cols;
        if (global == 0 || global == rows - 1) {
            memcpy(out, here, cols * sizeof(double));
            continue;
        }
        out[0] = here[0];
        out[cols - 1] = here[cols - 1];
        for (c = 1; c + 1 < cols; c++)
            out[c] = 0.25 * (up[c] + down[c] + here[c - 1] + here[c + 1]);
    }
}

static double checksum(const double *cells, size_t n)
{
    double sum = 0.0;
    size_t i;
    for (i = 0; i < n; i++)
        sum += cells[i];
    return sum;
}

static void print_done(const struct options *o, double sum, int ranks)
{
    printf("mall-jacobi-mpi: done iterations=%llu cells=%llu checksum=%.17e ranks=%d\n", o->iterations,
           o->rows * o->cols, sum, ranks);
}

static int serial(const struct options *o)
{
    size_t rows = (size_t)o->rows, cols = (size_t)o->cols, r, c;
    /* With a ghost row above and below, as a rank holding every row. */
    double *a = alloc_or_die((rows + 2) * cols * sizeof(double));
    double *b = alloc_or_die((rows + 2) * cols * sizeof(double));
    unsigned long long it;
    for (r = 0; r < rows; r++)
        for (c = 0; c < cols; c++)
            a[(r + 1) * cols + c] = initial(r, c);
    for (it = 0; it < o->iterations; it++) {
        double *t;
        relax(a, b, 0, rows, rows, cols);
        t = a, a = b, b = t;
    }
    print_done(o, checksum(a + cols, rows * cols), 1);
    free(a);
    free(b);
    return 0;
}

/* The first row and the number of rows of `rank` of `size`, in equal
   blocks (the first ones one more when it does not divide), as the
   runtime splits a checkpoint. */
static void block_of(size_t rows, int rank, int size, size_t *first, size_t *count)
{
    size_t base = rows / (size_t)size, extra = rows % (size_t)size, k = (size_t)rank;
    *first = k * base + (k < extra ? k : extra);
    *count = base + (k < extra ? 1 : 0);
}

static int malleable(const struct options *o)
{
    mall_rt *rt;
    uint64_t joining, iteration = 0;
    size_t rows = (size_t)o->rows, cols = (size_t)o->cols, first, count, row_bytes = cols * sizeof(double);
    int rank, size, since_report = 0;
    double *a, *b;
    char why[256];
    const char *node = getenv("SLURMD_NODENAME");
    node = node ? node : "";

    MPI_Init(NULL, NULL);
    check(mall_init(&rt, &joining));
    if (mall_mpi_check(rt, MPI_COMM_WORLD, why, sizeof why) != 0) {
        fprintf(stderr, "mall-jacobi-mpi: %s\n", why);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rows < (size_t)size) {
        fprintf(stderr, "mall-jacobi-mpi: --rows %zu is fewer than the %d ranks\n", rows, size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    block_of(rows, rank, size, &first, &count);
    a = alloc_or_die((count + 2) * row_bytes);
    b = alloc_or_die((count + 2) * row_bytes);
    if (joining) {
        void *saved;
        size_t got;
        check(mall_mpi_resume(rt, row_bytes, &saved, &got, &iteration));
        if (got != count) {
            fprintf(stderr, "mall-jacobi-mpi: rank %d resumed with %zu rows, not its %zu\n", rank, got, count);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        memcpy(a + cols, saved, count * row_bytes);
        mall_free(saved);
        if (rank == 0)
            printf("mall-jacobi-mpi: resumed at iteration %llu on %d ranks\n", (unsigned long long)iteration,
                   size);
    } else {
        size_t r, c;
        for (r = 0; r < count; r++)
            for (c = 0; c < cols; c++)
                a[(r + 1) * cols + c] = initial(first + r, c);
        if (rank == 0)
            printf("mall-jacobi-mpi: started on %d ranks\n", size);
        /* The starting rows are the first checkpoint: a node lost before
           the first period costs the work done, not the run. */
        if (o->checkpoint_every)
            check(mall_checkpoint(rt, 0, a + cols, row_bytes, count));
    }
    printf("mall-jacobi-mpi: rank %d of %d on %s holds rows %zu to %zu\n", rank, size, node, first,
           first + count - 1);

    while (iteration < o->iterations) {
        int action, up = rank > 0 ? rank - 1 : MPI_PROC_NULL, down = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
        uint32_t new_size;
        double *t;
        check(mall_probe(rt, &action, &new_size));
        if (action != MALL_NONE) {
            if (rank == 0)
                printf("mall-jacobi-mpi: iteration %llu: %s to %u ranks, restarting\n",
                       (unsigned long long)iteration, action == MALL_EXPAND ? "expand" : "shrink", new_size);
            check(mall_mpi_checkpoint_and_finish(rt, iteration, a + cols, row_bytes, count));
            free(a);
            free(b);
            MPI_Finalize();
            return 0;
        }
        /* Edge rows to the neighbours, theirs into the ghost rows. */
        MPI_Sendrecv(a + cols, (int)cols, MPI_DOUBLE, up, 0, a + (count + 1) * cols, (int)cols, MPI_DOUBLE, down, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(a + count * cols, (int)cols, MPI_DOUBLE, down, 1, a, (int)cols, MPI_DOUBLE, up, 1,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        relax(a, b, first, count, rows, cols);
        t = a, a = b, b = t;
        sleep_us(o->unit_us * count);
        iteration++;
        /* Saved with mall-run every --checkpoint-every iterations: a lost
           node then costs at most that many, the step starting again on
           the nodes left from here. */
        if (o->checkpoint_every && iteration % o->checkpoint_every == 0 && iteration < o->iterations)
            check(mall_checkpoint(rt, iteration, a + cols, row_bytes, count));
        if (++since_report >= REPORT_EVERY) {
            check(mall_report_measured(rt, (uint32_t)since_report));
            since_report = 0;
        }
    }

    /* Rank 0 gathers the rows, in rank order, and prints the checksum. */
    {
        int *counts = NULL, *displs = NULL, r;
        double *grid = NULL;
        if (rank == 0) {
            counts = alloc_or_die((size_t)size * sizeof(int));
            displs = alloc_or_die((size_t)size * sizeof(int));
            grid = alloc_or_die(rows * row_bytes);
            for (r = 0; r < size; r++) {
                size_t f, n;
                block_of(rows, r, size, &f, &n);
                counts[r] = (int)(n * cols);
                displs[r] = (int)(f * cols);
            }
        }
        MPI_Gatherv(a + cols, (int)(count * cols), MPI_DOUBLE, grid, counts, displs, MPI_DOUBLE, 0,
                    MPI_COMM_WORLD);
        if (rank == 0) {
            print_done(o, checksum(grid, rows * cols), size);
            free(grid);
            free(counts);
            free(displs);
        }
    }
    free(a);
    free(b);
    check(mall_finish(rt));
    MPI_Finalize();
    return 0;
}

int main(int argc, char **argv)
{
    struct options o = parse_options(argc, argv);
    setvbuf(stdout, NULL, _IOLBF, 0);
    return o.serial ? serial(&o) : malleable(&o);
}
