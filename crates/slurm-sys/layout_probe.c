/* Compiled by gcc, the compiler Debian built slurmctld with, so the layout
 * test can compare bindgen's (clang's) idea of the structs with gcc's. */
#include <stddef.h>
#include "wrapper.h"

#if SLURM_VERSION_NUMBER < SLURM_VERSION_NUM(24, 11, 0)
/* 24.11 named it; 22.05 had the struct only. */
typedef struct job_details job_details_t;
#endif

#define PROBE(name, expr) const size_t name = (expr);
PROBE(malleable_probe_sizeof_job_record, sizeof(job_record_t))
PROBE(malleable_probe_offsetof_job_state, offsetof(job_record_t, job_state))
PROBE(malleable_probe_offsetof_job_details, offsetof(job_record_t, details))
PROBE(malleable_probe_offsetof_node_bitmap, offsetof(job_record_t, node_bitmap))
PROBE(malleable_probe_offsetof_spank_job_env, offsetof(job_record_t, spank_job_env))
PROBE(malleable_probe_offsetof_time_limit, offsetof(job_record_t, time_limit))
PROBE(malleable_probe_sizeof_job_details, sizeof(job_details_t))
PROBE(malleable_probe_offsetof_min_nodes, offsetof(job_details_t, min_nodes))
PROBE(malleable_probe_offsetof_exc_node_bitmap, offsetof(job_details_t, exc_node_bitmap))
PROBE(malleable_probe_sizeof_node_record, sizeof(node_record_t))
PROBE(malleable_probe_offsetof_node_state, offsetof(node_record_t, node_state))
PROBE(malleable_probe_sizeof_slurm_conf, sizeof(slurm_conf_t))
PROBE(malleable_probe_offsetof_sched_params, offsetof(slurm_conf_t, sched_params))
PROBE(malleable_probe_sizeof_slurmctld_config, sizeof(slurmctld_config_t))
/* What a strategy placing cores reads: a job's allocation per node, its
 * GPU requests, whether it takes nodes whole, and a node's GRES. */
PROBE(malleable_probe_offsetof_job_resrcs, offsetof(job_record_t, job_resrcs))
PROBE(malleable_probe_offsetof_tres_per_node, offsetof(job_record_t, tres_per_node))
PROBE(malleable_probe_offsetof_tres_per_task, offsetof(job_record_t, tres_per_task))
PROBE(malleable_probe_sizeof_job_resources, sizeof(job_resources_t))
PROBE(malleable_probe_offsetof_res_cpus, offsetof(job_resources_t, cpus))
PROBE(malleable_probe_offsetof_res_nhosts, offsetof(job_resources_t, nhosts))
PROBE(malleable_probe_offsetof_res_node_bitmap, offsetof(job_resources_t, node_bitmap))
PROBE(malleable_probe_offsetof_whole_node, offsetof(job_details_t, whole_node))
PROBE(malleable_probe_offsetof_max_nodes, offsetof(job_details_t, max_nodes))
PROBE(malleable_probe_offsetof_node_gres, offsetof(node_record_t, gres))
PROBE(malleable_probe_offsetof_max_share, offsetof(part_record_t, max_share))

#ifdef MALLEABLE_STEPD
/* What task/drom reads of its step, of slurmstepd's configuration, and of
 * the step locations stepd_available lists. */
PROBE(malleable_probe_sizeof_stepd_step_rec, sizeof(stepd_step_rec_t))
PROBE(malleable_probe_offsetof_step_step_id, offsetof(stepd_step_rec_t, step_id))
PROBE(malleable_probe_offsetof_step_node_tasks, offsetof(stepd_step_rec_t, node_tasks))
PROBE(malleable_probe_offsetof_step_env, offsetof(stepd_step_rec_t, env))
PROBE(malleable_probe_offsetof_step_node_name, offsetof(stepd_step_rec_t, node_name))
PROBE(malleable_probe_offsetof_step_task, offsetof(stepd_step_rec_t, task))
PROBE(malleable_probe_sizeof_stepd_task_info, sizeof(stepd_step_task_info_t))
PROBE(malleable_probe_offsetof_task_id, offsetof(stepd_step_task_info_t, id))
PROBE(malleable_probe_offsetof_task_pid, offsetof(stepd_step_task_info_t, pid))
PROBE(malleable_probe_sizeof_slurmd_conf, sizeof(slurmd_conf_t))
PROBE(malleable_probe_offsetof_conf_node_name, offsetof(slurmd_conf_t, node_name))
PROBE(malleable_probe_offsetof_conf_spooldir, offsetof(slurmd_conf_t, spooldir))
PROBE(malleable_probe_sizeof_step_loc, sizeof(step_loc_t))
PROBE(malleable_probe_offsetof_step_loc_step_id, offsetof(step_loc_t, step_id))
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 11, 0)
/* 25.11 keeps a batch launch's job id in its step_id (from the credential). */
PROBE(malleable_probe_offsetof_batch_job_id, offsetof(batch_job_launch_msg_t, step_id))
#else
PROBE(malleable_probe_offsetof_batch_job_id, offsetof(batch_job_launch_msg_t, job_id))
#endif
PROBE(malleable_probe_offsetof_launch_step_id, offsetof(launch_tasks_request_msg_t, step_id))
#endif
