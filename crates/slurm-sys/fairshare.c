/* Taking back fair-share usage that priority/multifactor counts twice for a
 * resized job (slurm::ctld::fairshare says when and how much). In C because
 * the usage lives in `long double`s, which Rust cannot do arithmetic on.
 * The sums mirror _apply_new_usage in priority_multifactor.c, negated. */
#include <dlfcn.h>
#include <math.h>
#include "wrapper.h"
#include "src/common/assoc_mgr.h"

/* TRES_ARRAY_ENERGY of slurmctld.h: no usage is counted for it. */
static int _skip(uint32_t i)
{
	return i == TRES_ARRAY_ENERGY;
}

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(24, 11, 0)
/* 24.11's multifactor also counts a QOS's running TRES-seconds per account
 * and per user. The functions that find those counts are slurmctld's, not
 * libslurmfull's: looked up at run time, so that this library loads outside
 * slurmctld too (the symbol check). */
typedef slurmdb_used_limits_t *(*acct_used_fn)(list_t **, char *);
typedef slurmdb_used_limits_t *(*user_used_fn)(list_t **, uint32_t);

static void _run_secs_take_back(uint64_t *run, const uint64_t *tres,
				uint32_t tres_cnt, uint64_t run_secs)
{
	uint32_t i;

	for (i = 0; i < tres_cnt; i++) {
		if (_skip(i) || !tres[i] || tres[i] == NO_CONSUME_VAL64)
			continue;
		if (run[i] >= run_secs * tres[i])
			run[i] -= run_secs * tres[i];
		else
			run[i] = 0;
	}
}

static void _qos_used_limits_take_back(slurmdb_qos_rec_t *qos,
				       job_record_t *job, const uint64_t *tres,
				       uint32_t tres_cnt, uint64_t run_secs)
{
	static acct_used_fn acct_used;
	static user_used_fn user_used;
	slurmdb_used_limits_t *used;

	if (!acct_used)
		acct_used = (acct_used_fn) dlsym(
			RTLD_DEFAULT, "acct_policy_get_acct_used_limits");
	if (!user_used)
		user_used = (user_used_fn) dlsym(
			RTLD_DEFAULT, "acct_policy_get_user_used_limits");
	if (!acct_used || !user_used || !job->assoc_ptr)
		return;
	if ((used = acct_used(&qos->usage->acct_limit_list,
			      job->assoc_ptr->acct)) && used->tres_run_secs)
		_run_secs_take_back(used->tres_run_secs, tres, tres_cnt,
				    run_secs);
	if ((used = user_used(&qos->usage->user_limit_list, job->user_id)) &&
	    used->tres_run_secs)
		_run_secs_take_back(used->tres_run_secs, tres, tres_cnt,
				    run_secs);
}
#endif

/* One QOS's or association's usage (their structs differ, their fields
 * agree): `wall` seconds of the allocation taken back. */
static void _usage_take_back(double *grp_used_wall, long double *usage_raw,
			     long double *usage_tres_raw,
			     uint64_t *grp_used_tres_run_secs,
			     uint32_t usage_tres_cnt, double wall,
			     double billable, const uint64_t *tres,
			     uint32_t tres_cnt, uint64_t run_secs)
{
	uint32_t i;

	*grp_used_wall -= wall;
	*usage_raw -= (long double) wall * billable;
	for (i = 0; i < tres_cnt && i < usage_tres_cnt; i++) {
		if (_skip(i) || !tres[i] || tres[i] == NO_CONSUME_VAL64)
			continue;
		usage_tres_raw[i] -= (long double) wall * (long double) tres[i];
		if (grp_used_tres_run_secs[i] >= run_secs * tres[i])
			grp_used_tres_run_secs[i] -= run_secs * tres[i];
		else
			grp_used_tres_run_secs[i] = 0;
	}
}

static void _qos_take_back(slurmdb_qos_rec_t *qos, job_record_t *job,
			   double wall_decay,
			   double wall_nodecay, double billable,
			   const uint64_t *tres, uint32_t tres_cnt,
			   uint64_t run_secs)
{
	slurmdb_qos_usage_t *u;

	if (!qos || !(u = qos->usage))
		return;
	_usage_take_back(&u->grp_used_wall, &u->usage_raw, u->usage_tres_raw,
			 u->grp_used_tres_run_secs, u->tres_cnt,
			 (qos->flags & QOS_FLAG_NO_DECAY) ? wall_nodecay :
							    wall_decay,
			 billable, tres, tres_cnt, run_secs);
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(24, 11, 0)
	_qos_used_limits_take_back(qos, job, tres, tres_cnt, run_secs);
#else
	(void) job;
#endif
}

/* Take back from the job's QOS, its partition's QOS (when another) and its
 * association up to the root what `seconds` of an allocation of `tres`
 * (billable `billable`) added, decayed by `decay_factor` per second as the
 * decay pass does: the usage, each TRES's usage, and `run_secs` seconds per
 * TRES unit from the running TRES-seconds GrpTRESRunMins is checked
 * against. Slurm counts the TRES parts only with
 * AccountingStorageEnforce=limits, the only case where it counts a resized
 * job twice, so the only one this is called in. The QOS's UsageFactor
 * scales all of it, as it scaled the counting. The caller holds slurmctld's
 * job write lock; the association manager's locks are taken here. */
void malleable_fairshare_take_back(job_record_t *job, double seconds,
				   double decay_factor, double billable,
				   const uint64_t *tres, uint32_t tres_cnt,
				   uint64_t run_secs)
{
	assoc_mgr_lock_t locks = { .assoc = WRITE_LOCK, .qos = WRITE_LOCK,
				   .tres = READ_LOCK };
	slurmdb_qos_rec_t *qos = job->qos_ptr, *part_qos = NULL;
	slurmdb_assoc_rec_t *assoc;
	double wall_decay = seconds * pow(decay_factor, seconds);
	double wall_nodecay = seconds;

	if (seconds <= 0)
		return;
	assoc_mgr_lock(&locks);
	if (qos && qos->usage_factor >= 0) {
		wall_decay *= qos->usage_factor;
		wall_nodecay *= qos->usage_factor;
		run_secs = (uint64_t) ((double) run_secs * qos->usage_factor);
	}
	if (job->part_ptr && job->part_ptr->qos_ptr != qos)
		part_qos = job->part_ptr->qos_ptr;
	_qos_take_back(qos, job, wall_decay, wall_nodecay, billable, tres,
		       tres_cnt, run_secs);
	_qos_take_back(part_qos, job, wall_decay, wall_nodecay, billable, tres,
		       tres_cnt, run_secs);
	for (assoc = job->assoc_ptr; assoc && assoc->usage;
	     assoc = assoc->usage->parent_assoc_ptr) {
		slurmdb_assoc_usage_t *u = assoc->usage;
		_usage_take_back(&u->grp_used_wall, &u->usage_raw,
				 u->usage_tres_raw, u->grp_used_tres_run_secs,
				 u->tres_cnt, wall_decay, billable, tres,
				 tres_cnt, run_secs);
	}
	assoc_mgr_unlock(&locks);
}
