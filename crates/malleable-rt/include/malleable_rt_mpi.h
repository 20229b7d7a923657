/*
 * malleable_rt_mpi.h: helpers for an MPI application run by `mall-run --mpi
 * restart`, over malleable_rt.h's calls. Header only: include it after
 * <mpi.h>, link -lmalleable_rt and the MPI library.
 *
 * In restart mode all the ranks are one srun step. At a resize each rank
 * saves its block (mall_mpi_checkpoint_and_finish) and ends; the step
 * mall-run starts on the new nodes resumes (mall_mpi_resume) with each
 * rank's share of the saved blocks, in rank order, split in equal blocks.
 */
#ifndef MALLEABLE_RT_MPI_H
#define MALLEABLE_RT_MPI_H

#include <mpi.h>
#include <stdio.h>

#include "malleable_rt.h"

/*
 * The runtime's ranks are the MPI ranks of `comm` (mall-run numbers the
 * step's tasks as srun does): 0, or -1 with a reason in `why` (of `len`
 * bytes) when the application was not started by `mall-run --mpi restart`
 * or the two disagree.
 */
static inline int mall_mpi_check(mall_rt *rt, MPI_Comm comm, char *why, size_t len)
{
    int restarts = 0, rank, size;
    uint32_t mrank, msize;
    if (mall_restarts(rt, &restarts) != 0 || mall_rank(rt, &mrank) != 0 || mall_size(rt, &msize) != 0) {
        snprintf(why, len, "%s", mall_last_error());
        return -1;
    }
    if (!restarts) {
        snprintf(why, len, "an MPI application is run by mall-run --mpi restart");
        return -1;
    }
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if ((uint32_t)rank != mrank || (uint32_t)size != msize) {
        snprintf(why, len, "MPI rank %d of %d is the runtime's %u of %u: not one srun step of mall-run's", rank,
                 size, mrank, msize);
        return -1;
    }
    return 0;
}

/*
 * A step started for a resize (mall_init's *joining is not 0): this rank's
 * share of the checkpoint into *data (free it with mall_free), its number
 * of items into *count and the checkpoint's iteration into *iteration. The
 * adaptation is committed on this rank's side. 0, or -1 (mall_last_error).
 */
static inline int mall_mpi_resume(mall_rt *rt, size_t item_size, void **data, size_t *count,
                                  uint64_t *iteration)
{
    uint32_t rank, size;
    int leaving, restarted;
    if (mall_begin(rt, &rank, &size, &leaving) != 0)
        return -1;
    if (mall_redistribute(rt, NULL, item_size, 0, data, count) != 0)
        return -1;
    if (mall_restart_iteration(rt, iteration, &restarted) != 0)
        return -1;
    return mall_commit(rt);
}

/*
 * At a resize mall_probe announced: save this rank's `count` items of
 * `item_size` bytes at `iteration` (collective) and finish. The caller then
 * calls MPI_Finalize and exits 0. 0, or -1 (mall_last_error).
 */
static inline int mall_mpi_checkpoint_and_finish(mall_rt *rt, uint64_t iteration, const void *data,
                                                 size_t item_size, size_t count)
{
    if (mall_checkpoint(rt, iteration, data, item_size, count) != 0)
        return -1;
    return mall_finish(rt);
}

#endif /* MALLEABLE_RT_MPI_H */
