#!/bin/bash
# expand.sh JOBID NODE : grow running job JOBID onto NODE by Slurm's documented procedure
J=$1; N=$2
H=$(salloc --no-shell -N1 -w $N --dependency=expand:$J -p batch 2>&1 | tee /dev/stderr | sed -n 's/.*Granted job allocation \([0-9]*\).*/\1/p')
echo "helper job: $H"
[ -n "$H" ] || exit 1
scontrol update jobid=$H NumNodes=0 && scontrol update jobid=$J NumNodes=ALL
scontrol show job $J | grep -E "NodeList|NumNodes"
