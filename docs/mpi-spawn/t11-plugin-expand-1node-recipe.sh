#!/bin/bash
#SBATCH --min-nodes-invasive=1 --max-nodes-invasive=2 -N1 -o t11-%j.out
# the plugin grows the job (mall-run + mall-example keep the job "runtime=on"); meanwhile an Open MPI
# job of 1 rank (1-node job: the grow is the DVM's first srun, so PRRTE 3.0.8's stale daemon_vpid_start is not hit) waits; once Slurm says the job holds a 3rd node, the ranks spawn onto it with add-host
# plm_slurm_args --exclude=<batch host>: PRRTE 3.0.8 gives srun no --nodelist when the new daemons are as many as the nodes it first read, so srun would put the daemon on the batch host; --bind-to none: the prted step has 1 CPU
# PATH=$HOME/spx/wrap:...: PRRTE finds srun by PATH; the wrapper unsets the stale SLURM_JOB_NODELIST & co.
cd $HOME/spx
echo "job $SLURM_JOB_ID nodes $SLURM_JOB_NODELIST tasks/node $SLURM_TASKS_PER_NODE"
mall-run -- mall-example --iterations 100000 --unit-us 5 > mall-$SLURM_JOB_ID.log 2>&1 &
rm -f go-$SLURM_JOB_ID
export SPAWN_WAIT_FILE=$HOME/spx/go-$SLURM_JOB_ID
first="$(scontrol show hostnames $SLURM_JOB_NODELIST | tr '\n' ' ')"
PATH=$HOME/spx/wrap:$PATH mpirun -np 1 --bind-to none --prtemca plm_slurm_args "--exclude=$(hostname)" --display-allocation -x SPAWN_WAIT_FILE --prtemca plm_base_verbose 5 --prtemca ras_base_verbose 5 \
   ${PLMARGS} ./spawn-ompi 2 > mpi-$SLURM_JOB_ID.log 2>&1 &
MPI=$!
for i in $(seq 1 90); do
  nl=$(scontrol show job $SLURM_JOB_ID | sed -n 's/^ *NodeList=\(.*\)/\1/p')
  all="$(scontrol show hostnames $nl | tr '\n' ' ')"
  if [ "$all" != "$first" ]; then
     new=$(comm -13 <(echo $first | tr ' ' '\n' | sort) <(echo $all | tr ' ' '\n' | sort) | head -1)
     echo "$(date +%T) job now on $nl; new node $new"
     # optional: what srun from the batch step says about the new node
     srun --overlap --nodes=1 --nodelist=$new --ntasks=1 hostname 2>&1 | sed 's/^/srun-check(batch env): /'
     env -u SLURM_JOB_NODELIST -u SLURM_NODELIST -u SLURM_NNODES -u SLURM_JOB_NUM_NODES -u SLURM_TASKS_PER_NODE -u SLURM_JOB_CPUS_PER_NODE -u SLURM_NTASKS -u SLURM_NPROCS \
       srun --overlap --nodes=1 --nodelist=$new --ntasks=1 hostname 2>&1 | sed 's/^/srun-check(env unset): /'
     printf "add-host=$new:2\nbind_to=none\n" > go-$SLURM_JOB_ID
     break
  fi
  sleep 1
done
wait $MPI; echo "mpirun rc=$?"
grep -a "PARENT\|CHILD\|srun\|error\|launching on" mpi-$SLURM_JOB_ID.log | cut -c1-300
kill %1 2>/dev/null; scancel $SLURM_JOB_ID
