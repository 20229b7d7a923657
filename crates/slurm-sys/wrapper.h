/* What the daemon builds' bindings cover: the public API plus the internals
 * a scheduling plugin in slurmctld uses (locks, job and node records,
 * starting jobs) and, with MALLEABLE_STEPD, what a task plugin in slurmstepd
 * sees of its step, slurmstepd's configuration (`conf`: spool directory and
 * node name) and the stepd API that reaches the node's other steps. 24.11
 * moved the plugin interfaces' headers to src/interfaces and the step
 * manager's to src/stepmgr (docs/slurm-versions.md). */
#include "config.h"
#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "slurm/spank.h"
#include "src/common/bitstring.h"
#include "src/common/env.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/read_config.h"
#include "src/common/run_in_daemon.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(24, 11, 0)
#include "src/interfaces/select.h"
#include "src/interfaces/accounting_storage.h"
#include "src/slurmctld/proc_req.h"
#include "src/stepmgr/stepmgr.h"
#else
#include "src/common/select.h"
#include "src/common/slurm_accounting_storage.h"
#include "src/slurmctld/srun_comm.h"
#endif
#include "src/slurmctld/job_scheduler.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/node_scheduler.h"
#include "src/slurmctld/reservation.h"
#include "src/slurmctld/slurmctld.h"
#ifdef MALLEABLE_STEPD
#include "src/common/stepd_api.h"
#include "src/slurmd/slurmd/slurmd.h"
#include "src/slurmd/slurmstepd/slurmstepd_job.h"
#endif
