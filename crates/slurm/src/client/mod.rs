//! Slurm's client API, as a command or an application calls it (feature
//! `client`, public headers only): read one job's record, set a job's
//! comment, and submit a batch job from a request built here. The cluster
//! comes from SLURM_CONF as for any Slurm command; every call is an RPC to
//! slurmctld, authenticated by munge as the calling user.

use std::ffi::CString;

use slurm_sys as sys;

use crate::common::cstr::{c_text, cstr_to_string};

/// What a caller learns of one job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobRecord {
    pub id: u32,
    pub user_id: u32,
    /// Its base state, as `scontrol show job` names it (RUNNING, PENDING, ...).
    pub state: String,
    pub nodes: String,
    pub num_nodes: u32,
    pub batch_host: String,
    pub comment: String,
    pub system_comment: String,
}

/// The error of the last call, as Slurm says it.
fn last_error(what: &str) -> String {
    let code = crate::common::cstr::last_slurm_errno();
    format!("{what}: {} ({code})", crate::common::cstr::strerror(code))
}

/// A job state's name, as `scontrol show job` says it (its base state).
fn state_name(state: u32) -> String {
    const NAMES: [&str; 12] = [
        "PENDING",
        "RUNNING",
        "SUSPENDED",
        "COMPLETED",
        "CANCELLED",
        "FAILED",
        "TIMEOUT",
        "NODE_FAIL",
        "PREEMPTED",
        "BOOT_FAIL",
        "DEADLINE",
        "OUT_OF_MEMORY",
    ];
    let base = state & sys::JOB_STATE_BASE;
    NAMES.get(base as usize).map_or_else(|| format!("state {base}"), |n| n.to_string())
}

/// Set up Slurm's API in a command, once, before any other call here:
/// 24.11's calls fail ("No hash plugins loaded") without `slurm_init`;
/// 22.05 has it too and would otherwise do the same work lazily. Not in a
/// plugin: its daemon has done it (and slurm_init's failures are fatal).
pub fn init() {
    static INIT: std::sync::Once = std::sync::Once::new();
    // SAFETY: slurm_init(NULL) reads the default slurm.conf and loads the
    // client's plugins; Once keeps it to one call per process.
    INIT.call_once(|| unsafe { sys::slurm_init(std::ptr::null()) });
}

/// Read job `id`'s record.
pub fn load_job(id: u32) -> Result<JobRecord, String> {
    let mut resp: *mut sys::job_info_msg_t = std::ptr::null_mut();
    // SAFETY: slurm_load_job fills `resp` with a message we free below.
    let rc = unsafe { sys::job_ids::load_job(&mut resp, id, 0) };
    if rc != 0 || resp.is_null() {
        return Err(last_error(&format!("reading JobId={id}")));
    }
    // SAFETY: a message from slurm_load_job: record_count records in
    // job_array, every string NULL or NUL-terminated, all freed together
    // by slurm_free_job_info_msg after we copied what we need.
    unsafe {
        let msg = &*resp;
        let found = (0..msg.record_count as usize)
            .map(|i| &*msg.job_array.add(i))
            .find(|j| sys::job_ids::info_job_id(j) == id)
            .map(|j| JobRecord {
                id: sys::job_ids::info_job_id(j),
                user_id: j.user_id,
                state: state_name(j.job_state),
                nodes: cstr_to_string(j.nodes).unwrap_or_default(),
                num_nodes: j.num_nodes,
                batch_host: cstr_to_string(j.batch_host).unwrap_or_default(),
                comment: cstr_to_string(j.comment).unwrap_or_default(),
                system_comment: cstr_to_string(j.system_comment).unwrap_or_default(),
            });
        sys::slurm_free_job_info_msg(resp);
        found.ok_or_else(|| format!("reading JobId={id}: no such job in the reply"))
    }
}

/// The address Slurm reaches node `name` at (its NodeAddr): where the
/// other nodes reach it too.
pub fn node_address(name: &str) -> Result<String, String> {
    let text = c_text(name);
    let mut resp: *mut sys::node_info_msg_t = std::ptr::null_mut();
    // SAFETY: slurm_load_node_single fills `resp` with a message we free
    // below; the name is copied into the request.
    let rc = unsafe { sys::slurm_load_node_single(&mut resp, text.as_ptr().cast_mut(), 0) };
    if rc != 0 || resp.is_null() {
        return Err(last_error(&format!("reading node {name}")));
    }
    // SAFETY: a message from slurm_load_node_single: record_count records
    // in node_array, strings NULL or NUL-terminated, freed together after
    // we copied the one we need.
    unsafe {
        let msg = &*resp;
        let found = (0..msg.record_count as usize)
            .map(|i| &*msg.node_array.add(i))
            .find(|n| cstr_to_string(n.name).as_deref() == Some(name))
            .and_then(|n| cstr_to_string(n.node_addr));
        sys::slurm_free_node_info_msg(resp);
        found.ok_or_else(|| format!("reading node {name}: no address for it in the reply"))
    }
}

/// The node names a hostlist expression stands for (`n[1-3],m1` is n1,
/// n2, n3, m1), as Slurm expands it.
pub fn hostnames(list: &str) -> Vec<String> {
    if list.is_empty() {
        return Vec::new();
    }
    let text = c_text(list);
    let mut names = Vec::new();
    // SAFETY: slurm_hostlist_create copies the string; each name shifted
    // out is malloc'd and ours to free; the list is destroyed once.
    unsafe {
        let hl = sys::slurm_hostlist_create(text.as_ptr());
        if hl.is_null() {
            return names;
        }
        loop {
            let name = sys::slurm_hostlist_shift(hl);
            if name.is_null() {
                break;
            }
            names.extend(cstr_to_string(name));
            libc::free(name.cast());
        }
        sys::slurm_hostlist_destroy(hl);
    }
    names
}

/// Set job `id`'s comment (its owner or an operator may).
pub fn set_comment(id: u32, comment: &str) -> Result<(), String> {
    let text = c_text(comment);
    // SAFETY: a zeroed job_desc_msg_t is what slurm_init_job_desc_msg
    // expects to initialise; the comment pointer is ours and outlives the
    // call, which only reads it.
    let rc = unsafe {
        let mut desc: sys::job_desc_msg_t = std::mem::zeroed();
        sys::slurm_init_job_desc_msg(&mut desc);
        sys::job_ids::set_desc_job_id(&mut desc, id);
        desc.comment = text.as_ptr().cast_mut();
        sys::slurm_update_job(&mut desc)
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(last_error(&format!("updating JobId={id}")))
    }
}

/// A batch job to submit, as a request built by hand (no sbatch, and no
/// SPANK plugin: its SPANK environment is whatever is given here).
#[derive(Clone, Debug, Default)]
pub struct BatchRequest {
    pub name: String,
    /// The script, starting with `#!`.
    pub script: String,
    pub nodes: u32,
    pub time_limit_minutes: u32,
    pub spank_env: Vec<String>,
}

/// Submit `req` as the calling user; its job id, or Slurm's refusal with
/// the job_submit plugins' message.
pub fn submit_batch(req: &BatchRequest) -> Result<u32, String> {
    let keep = |s: &str| c_text(s);
    let (name, script) = (keep(&req.name), keep(&req.script));
    let cwd = keep(&std::env::current_dir().map(|d| d.display().to_string()).unwrap_or_else(|_| "/".into()));
    let out = keep("/dev/null");
    let env: Vec<CString> = std::env::vars().map(|(k, v)| keep(&format!("{k}={v}"))).collect();
    let mut env_ptrs: Vec<*mut libc::c_char> = env.iter().map(|c| c.as_ptr().cast_mut()).collect();
    let spank: Vec<CString> = req.spank_env.iter().map(|s| keep(s)).collect();
    let mut spank_ptrs: Vec<*mut libc::c_char> = spank.iter().map(|c| c.as_ptr().cast_mut()).collect();
    let mut resp: *mut sys::submit_response_msg_t = std::ptr::null_mut();
    // SAFETY: as in set_comment; every pointer in `desc` is into a value of
    // ours that lives until after the call, which copies what it sends.
    // getuid/getgid cannot fail. The response is freed with its own function.
    unsafe {
        let mut desc: sys::job_desc_msg_t = std::mem::zeroed();
        sys::slurm_init_job_desc_msg(&mut desc);
        desc.name = name.as_ptr().cast_mut();
        desc.script = script.as_ptr().cast_mut();
        desc.min_nodes = req.nodes;
        desc.max_nodes = req.nodes;
        desc.time_limit = req.time_limit_minutes;
        desc.user_id = libc::getuid();
        desc.group_id = libc::getgid();
        desc.work_dir = cwd.as_ptr().cast_mut();
        desc.std_out = out.as_ptr().cast_mut();
        desc.environment = env_ptrs.as_mut_ptr();
        desc.env_size = env_ptrs.len() as u32;
        desc.spank_job_env = spank_ptrs.as_mut_ptr();
        desc.spank_job_env_size = spank_ptrs.len() as u32;
        let rc = sys::slurm_submit_batch_job(&mut desc, &mut resp);
        let user_msg = resp.as_ref().and_then(|r| cstr_to_string(r.job_submit_user_msg));
        let id = resp.as_ref().map(sys::job_ids::submitted_job_id);
        if !resp.is_null() {
            sys::slurm_free_submit_response_response_msg(resp);
        }
        match (rc, id) {
            (0, Some(id)) => Ok(id),
            _ => {
                let why = last_error("submitting the job");
                Err(match user_msg {
                    Some(m) => format!("{why}: {m}"),
                    None => why,
                })
            }
        }
    }
}
