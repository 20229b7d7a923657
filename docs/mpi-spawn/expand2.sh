#!/bin/bash
# expand2.sh JOBID NODE : as Slurm's FAQ, the helper's update run from inside its salloc (no --no-shell)
J=$1; N=$2
salloc -N1 -w $N --dependency=expand:$J -p batch bash -c 'echo helper $SLURM_JOB_ID; scontrol update jobid=$SLURM_JOB_ID NumNodes=0; echo update-rc=$?'
scontrol update jobid=$J NumNodes=ALL; echo update-all-rc=$?
scontrol show job $J | grep -E " NodeList|NumNodes"
