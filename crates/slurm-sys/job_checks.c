/* A waiting job's QOS and association as slurmctld's own schedulers check
 * them on each pass (_schedule in job_scheduler.c, and backfill.c). There
 * they are inline code, so there is no function to call; the fields and
 * locks are the association manager's, whose types are C's. */
#include "wrapper.h"
#include "src/common/assoc_mgr.h"

/* 1 when QOS are enforced and the job's QOS is no longer one its
 * association may use (taken from it after submission, say) and was not
 * set by an admin: stock then gives the job Reason InvalidQOS and passes it
 * by. 24.11 keeps the QOS as a pointer, 22.05 as an id. Takes the
 * association manager's read locks; needs slurmctld's job read lock. */
int malleable_job_qos_invalid(job_record_t *job_ptr, uint16_t enforce)
{
	assoc_mgr_lock_t locks = { .assoc = READ_LOCK, .qos = READ_LOCK };
	uint32_t qos_id;
	int invalid;

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(24, 11, 0)
	if (!job_ptr->qos_ptr)
		return 0;
#else
	if (!job_ptr->qos_id)
		return 0;
#endif
	if (!(enforce & ACCOUNTING_ENFORCE_QOS) || job_ptr->limit_set.qos)
		return 0;
	assoc_mgr_lock(&locks);
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(24, 11, 0)
	qos_id = job_ptr->qos_ptr->id;
#else
	qos_id = job_ptr->qos_id;
#endif
	invalid = job_ptr->assoc_ptr &&
		  ((qos_id >= g_qos_count) || !job_ptr->assoc_ptr->usage ||
		   !job_ptr->assoc_ptr->usage->valid_qos ||
		   !bit_test(job_ptr->assoc_ptr->usage->valid_qos, qos_id));
	assoc_mgr_unlock(&locks);
	return invalid;
}

/* 1 when the job's association is no longer valid (its account or user
 * removed or disabled after submission): stock gives it Reason
 * InvalidAccount. db_conn is slurmctld's acct_db_conn. */
int malleable_job_assoc_invalid(job_record_t *job_ptr, void *db_conn,
				uint16_t enforce)
{
	/* Without ACCOUNTING_ENFORCE_ASSOCS the function says success once the
	 * association list exists, after taking the association manager's
	 * lock: asked of every waiting job at every pass, it is answered here
	 * without the lock (the same answer; a list not yet made is left to
	 * the function, which makes it or fails as it would). */
	if (!(enforce & ACCOUNTING_ENFORCE_ASSOCS) && assoc_mgr_assoc_list)
		return 0;
	return assoc_mgr_validate_assoc_id(db_conn, job_ptr->assoc_id,
					   enforce) != SLURM_SUCCESS;
}
