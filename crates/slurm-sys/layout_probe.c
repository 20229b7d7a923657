/* Compiled by gcc, the compiler Debian built slurmctld with, so the layout
 * test can compare bindgen's (clang's) idea of the structs with gcc's. */
#include <stddef.h>
#include "wrapper.h"

#define PROBE(name, expr) const size_t name = (expr);
PROBE(malleable_probe_sizeof_job_record, sizeof(job_record_t))
PROBE(malleable_probe_offsetof_job_state, offsetof(job_record_t, job_state))
PROBE(malleable_probe_offsetof_job_details, offsetof(job_record_t, details))
PROBE(malleable_probe_offsetof_node_bitmap, offsetof(job_record_t, node_bitmap))
PROBE(malleable_probe_offsetof_spank_job_env, offsetof(job_record_t, spank_job_env))
PROBE(malleable_probe_offsetof_time_limit, offsetof(job_record_t, time_limit))
PROBE(malleable_probe_sizeof_job_details, sizeof(struct job_details))
PROBE(malleable_probe_offsetof_min_nodes, offsetof(struct job_details, min_nodes))
PROBE(malleable_probe_offsetof_exc_node_bitmap, offsetof(struct job_details, exc_node_bitmap))
PROBE(malleable_probe_sizeof_node_record, sizeof(node_record_t))
PROBE(malleable_probe_offsetof_node_state, offsetof(node_record_t, node_state))
PROBE(malleable_probe_sizeof_slurm_conf, sizeof(slurm_conf_t))
PROBE(malleable_probe_offsetof_sched_params, offsetof(slurm_conf_t, sched_params))
PROBE(malleable_probe_sizeof_slurmctld_config, sizeof(slurmctld_config_t))
