#!/usr/bin/env python3
"""mall_jacobi_mpi4py.py: the MPI Jacobi of mall_jacobi_mpi.c in Python, with mpi4py.

Run by `mall-run --mpi restart --mpi-plugin pmix` (Debian's mpi4py is built
with Open MPI). The grid, its start and each step are the C example's, so
its checksum equals `mall-jacobi-openmpi --serial` with the same options, to
the last bit; at a resize every rank checkpoints its rows and ends, and the
ranks of the step started again resume from the checkpoint.

  mall-run --mpi restart --mpi-plugin pmix -- mall_jacobi_mpi4py.py --rows 64 --cols 16 --iterations 100
"""

import argparse
import os
import sys
import time
from array import array

import malleable_rt as mall

REPORT_EVERY = 10


def options():
    p = argparse.ArgumentParser(prog="mall_jacobi_mpi4py.py")
    p.add_argument("--rows", type=int, default=64)
    p.add_argument("--cols", type=int, default=16)
    p.add_argument("--iterations", type=int, default=100)
    p.add_argument("--unit-us", type=int, default=0, help="emulated time per row held, each iteration")
    p.add_argument("--checkpoint-every", type=int, default=0,
                   help="save the rows with mall-run every this many iterations (0: never), to start again "
                        "from if a node is lost")
    o = p.parse_args()
    if o.rows < 3 or o.cols < 3 or o.iterations < 0 or o.unit_us < 0 or o.checkpoint_every < 0:
        p.error("--rows and --cols are 3 or more, --iterations, --unit-us and --checkpoint-every 0 or more")
    return o


def initial(row, col):
    return 100.0 if row == 0 else float((row * 31 + col * 17) % 23)


def block_of(rows, rank, size):
    base, extra = divmod(rows, size)
    return rank * base + min(rank, extra), base + (1 if rank < extra else 0)


def relax(old, first, rows, cols):
    """One step of the rows old[1:-1] (old[0] and old[-1] are the ghost rows)."""
    new = [old[0]]
    for r in range(1, len(old) - 1):
        up, here, down = old[r - 1], old[r], old[r + 1]
        g = first + r - 1
        if g == 0 or g == rows - 1:
            new.append(array("d", here))
            continue
        out = array("d", here)
        for c in range(1, cols - 1):
            out[c] = 0.25 * (up[c] + down[c] + here[c - 1] + here[c + 1])
        new.append(out)
    new.append(old[-1])
    return new


def main():
    o = options()
    from mpi4py import MPI  # after the options: --help needs no MPI

    comm = MPI.COMM_WORLD
    rt = mall.Runtime()
    if not rt.restarts() or rt.rank() != comm.Get_rank() or rt.size() != comm.Get_size():
        sys.exit("mall_jacobi_mpi4py.py: run it by mall-run --mpi restart (its ranks are the runtime's)")
    rank, size = comm.Get_rank(), comm.Get_size()
    if o.rows < size:
        sys.exit(f"mall_jacobi_mpi4py.py: --rows {o.rows} is fewer than the {size} ranks")
    first, count = block_of(o.rows, rank, size)
    row_bytes = o.cols * 8
    if rt.joining:
        rt.begin()
        saved = rt.redistribute(b"", row_bytes)
        iteration = rt.restart_iteration()
        rt.commit()
        mine = [array("d", saved[i * row_bytes:(i + 1) * row_bytes]) for i in range(len(saved) // row_bytes)]
        if len(mine) != count:
            sys.exit(f"mall_jacobi_mpi4py.py: rank {rank} resumed with {len(mine)} rows, not {count}")
        if rank == 0:
            print(f"mall-jacobi-mpi4py: resumed at iteration {iteration} on {size} ranks", flush=True)
    else:
        iteration = 0
        mine = [array("d", (initial(first + r, c) for c in range(o.cols))) for r in range(count)]
        if rank == 0:
            print(f"mall-jacobi-mpi4py: started on {size} ranks", flush=True)
        # The starting rows are the first checkpoint: a node lost before the
        # first period costs the work done, not the run.
        if o.checkpoint_every:
            rt.checkpoint(0, b"".join(r.tobytes() for r in mine), row_bytes)
    up = rank - 1 if rank > 0 else MPI.PROC_NULL
    down = rank + 1 if rank + 1 < size else MPI.PROC_NULL
    zero = array("d", [0.0] * o.cols)
    since_report = 0
    while iteration < o.iterations:
        action, new_size = rt.probe()
        if action != mall.NONE:
            if rank == 0:
                what = "expand" if action == mall.EXPAND else "shrink"
                print(f"mall-jacobi-mpi4py: iteration {iteration}: {what} to {new_size} ranks, restarting", flush=True)
            rt.checkpoint(iteration, b"".join(r.tobytes() for r in mine), row_bytes)
            rt.finish()
            return 0
        below = comm.sendrecv(mine[0], dest=up, source=down, sendtag=0, recvtag=0)
        above = comm.sendrecv(mine[-1], dest=down, source=up, sendtag=1, recvtag=1)
        grid = relax([above or zero] + mine + [below or zero], first, o.rows, o.cols)
        mine = grid[1:-1]
        time.sleep(o.unit_us * count / 1e6)
        iteration += 1
        # A lost node then costs at most --checkpoint-every iterations.
        if o.checkpoint_every and iteration % o.checkpoint_every == 0 and iteration < o.iterations:
            rt.checkpoint(iteration, b"".join(r.tobytes() for r in mine), row_bytes)
        since_report += 1
        if since_report >= REPORT_EVERY:
            rt.report_measured(since_report)
            since_report = 0
    rows = comm.gather(mine, root=0)
    if rank == 0:
        total = 0.0
        for part in rows:
            for row in part:
                for x in row:
                    total += x
        print(f"mall-jacobi-mpi4py: done iterations={o.iterations} cells={o.rows * o.cols} "
              f"checksum={total:.17e} ranks={size}", flush=True)
    rt.finish()
    return 0


if __name__ == "__main__":
    sys.exit(main())
