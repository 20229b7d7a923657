//! The select plugin operations of each Slurm release (36 in 22.05, 31 in
//! 24.11, 12 in 25.11, 13 in 26.05), as one table per
//! release that the forwarding macros of `select` expand: `field =
//! symbol(arguments) -> result;` in `node_select_syms`' order.

/// Slurm 22.05's 36 (`node_select_syms` in
/// src/common/select.c, typed as `slurm_select_ops_t` in select.h), each as
/// `field = symbol(arguments) -> result;`. Pointers to Slurm's records are
/// passed through untouched, so they are `*mut c_void` here; C enums are
/// `c_int`-sized.
#[cfg(not(slurm_since_24_11))]
#[macro_export]
#[doc(hidden)]
macro_rules! __select_ops {
    ($callback:ident) => {
        $crate::$callback! {
            state_save = select_p_state_save(dir_name: *mut ::std::ffi::c_char) -> ::std::ffi::c_int;
            state_restore = select_p_state_restore(dir_name: *mut ::std::ffi::c_char) -> ::std::ffi::c_int;
            job_init = select_p_job_init(job_list: *mut ::std::ffi::c_void) -> ::std::ffi::c_int;
            node_init = select_p_node_init() -> ::std::ffi::c_int;
            job_test = select_p_job_test(
                job_ptr: *mut ::std::ffi::c_void,
                bitmap: *mut ::std::ffi::c_void,
                min_nodes: u32,
                max_nodes: u32,
                req_nodes: u32,
                mode: u16,
                preemptee_candidates: *mut ::std::ffi::c_void,
                preemptee_job_list: *mut *mut ::std::ffi::c_void,
                exc_core_bitmap: *mut ::std::ffi::c_void
            ) -> ::std::ffi::c_int;
            job_begin = select_p_job_begin(job_ptr: *mut ::std::ffi::c_void) -> ::std::ffi::c_int;
            job_ready = select_p_job_ready(job_ptr: *mut ::std::ffi::c_void) -> ::std::ffi::c_int;
            job_expand = select_p_job_expand(
                from_job_ptr: *mut ::std::ffi::c_void,
                to_job_ptr: *mut ::std::ffi::c_void
            ) -> ::std::ffi::c_int;
            job_resized = select_p_job_resized(
                job_ptr: *mut ::std::ffi::c_void,
                node_ptr: *mut ::std::ffi::c_void
            ) -> ::std::ffi::c_int;
            job_signal = select_p_job_signal(job_ptr: *mut ::std::ffi::c_void, signal: ::std::ffi::c_int)
                -> ::std::ffi::c_int;
            job_fini = select_p_job_fini(job_ptr: *mut ::std::ffi::c_void) -> ::std::ffi::c_int;
            job_suspend = select_p_job_suspend(job_ptr: *mut ::std::ffi::c_void, indf_susp: bool) -> ::std::ffi::c_int;
            job_resume = select_p_job_resume(job_ptr: *mut ::std::ffi::c_void, indf_susp: bool) -> ::std::ffi::c_int;
            step_pick_nodes = select_p_step_pick_nodes(
                job_ptr: *mut ::std::ffi::c_void,
                step_jobinfo: *mut ::std::ffi::c_void,
                node_count: u32,
                avail_nodes: *mut *mut ::std::ffi::c_void
            ) -> *mut ::std::ffi::c_void;
            step_start = select_p_step_start(step_ptr: *mut ::std::ffi::c_void) -> ::std::ffi::c_int;
            step_finish = select_p_step_finish(step_ptr: *mut ::std::ffi::c_void, killing_step: bool)
                -> ::std::ffi::c_int;
            nodeinfo_pack = select_p_select_nodeinfo_pack(
                nodeinfo: *mut ::std::ffi::c_void,
                buffer: *mut ::std::ffi::c_void,
                protocol_version: u16
            ) -> ::std::ffi::c_int;
            nodeinfo_unpack = select_p_select_nodeinfo_unpack(
                nodeinfo: *mut *mut ::std::ffi::c_void,
                buffer: *mut ::std::ffi::c_void,
                protocol_version: u16
            ) -> ::std::ffi::c_int;
            nodeinfo_alloc = select_p_select_nodeinfo_alloc() -> *mut ::std::ffi::c_void;
            nodeinfo_free = select_p_select_nodeinfo_free(nodeinfo: *mut ::std::ffi::c_void) -> ::std::ffi::c_int;
            nodeinfo_set_all = select_p_select_nodeinfo_set_all() -> ::std::ffi::c_int;
            nodeinfo_set = select_p_select_nodeinfo_set(job_ptr: *mut ::std::ffi::c_void) -> ::std::ffi::c_int;
            nodeinfo_get = select_p_select_nodeinfo_get(
                nodeinfo: *mut ::std::ffi::c_void,
                dinfo: ::std::ffi::c_uint,
                state: ::std::ffi::c_uint,
                data: *mut ::std::ffi::c_void
            ) -> ::std::ffi::c_int;
            jobinfo_alloc = select_p_select_jobinfo_alloc() -> *mut ::std::ffi::c_void;
            jobinfo_free = select_p_select_jobinfo_free(jobinfo: *mut ::std::ffi::c_void) -> ::std::ffi::c_int;
            jobinfo_set = select_p_select_jobinfo_set(
                jobinfo: *mut ::std::ffi::c_void,
                data_type: ::std::ffi::c_uint,
                data: *mut ::std::ffi::c_void
            ) -> ::std::ffi::c_int;
            jobinfo_get = select_p_select_jobinfo_get(
                jobinfo: *mut ::std::ffi::c_void,
                data_type: ::std::ffi::c_uint,
                data: *mut ::std::ffi::c_void
            ) -> ::std::ffi::c_int;
            jobinfo_copy = select_p_select_jobinfo_copy(jobinfo: *mut ::std::ffi::c_void) -> *mut ::std::ffi::c_void;
            jobinfo_pack = select_p_select_jobinfo_pack(
                jobinfo: *mut ::std::ffi::c_void,
                buffer: *mut ::std::ffi::c_void,
                protocol_version: u16
            ) -> ::std::ffi::c_int;
            jobinfo_unpack = select_p_select_jobinfo_unpack(
                jobinfo: *mut *mut ::std::ffi::c_void,
                buffer: *mut ::std::ffi::c_void,
                protocol_version: u16
            ) -> ::std::ffi::c_int;
            jobinfo_sprint = select_p_select_jobinfo_sprint(
                jobinfo: *mut ::std::ffi::c_void,
                buf: *mut ::std::ffi::c_char,
                size: usize,
                mode: ::std::ffi::c_int
            ) -> *mut ::std::ffi::c_char;
            jobinfo_xstrdup = select_p_select_jobinfo_xstrdup(jobinfo: *mut ::std::ffi::c_void, mode: ::std::ffi::c_int)
                -> *mut ::std::ffi::c_char;
            get_info_from_plugin = select_p_get_info_from_plugin(
                dinfo: ::std::ffi::c_uint,
                job_ptr: *mut ::std::ffi::c_void,
                data: *mut ::std::ffi::c_void
            ) -> ::std::ffi::c_int;
            update_node_config = select_p_update_node_config(index: ::std::ffi::c_int) -> ::std::ffi::c_int;
            reconfigure = select_p_reconfigure() -> ::std::ffi::c_int;
            resv_test = select_p_resv_test(
                resv_desc_ptr: *mut ::std::ffi::c_void,
                node_cnt: u32,
                avail_bitmap: *mut ::std::ffi::c_void,
                core_bitmap: *mut *mut ::std::ffi::c_void
            ) -> *mut ::std::ffi::c_void;
        }
    };
}

/// Slurm 24.11's 31 (src/interfaces/select.c): 22.05's less job_signal,
/// jobinfo_sprint, jobinfo_xstrdup, update_node_config and resv_test, and
/// job_test given a will_run_data_t (its core bitmap became a resv_exc_t).
#[cfg(all(slurm_since_24_11, not(slurm_since_25_11)))]
#[macro_export]
#[doc(hidden)]
macro_rules! __select_ops {
    ($callback:ident) => {
        $crate::$callback! {
            state_save = select_p_state_save(dir_name: *mut ::std::ffi::c_char) -> ::std::ffi::c_int;
            state_restore = select_p_state_restore(dir_name: *mut ::std::ffi::c_char) -> ::std::ffi::c_int;
            job_init = select_p_job_init(job_list: *mut ::std::ffi::c_void) -> ::std::ffi::c_int;
            node_init = select_p_node_init() -> ::std::ffi::c_int;
            job_test = select_p_job_test(
                job_ptr: *mut ::std::ffi::c_void,
                bitmap: *mut ::std::ffi::c_void,
                min_nodes: u32,
                max_nodes: u32,
                req_nodes: u32,
                mode: u16,
                preemptee_candidates: *mut ::std::ffi::c_void,
                preemptee_job_list: *mut *mut ::std::ffi::c_void,
                resv_exc_ptr: *mut ::std::ffi::c_void,
                will_run_ptr: *mut ::std::ffi::c_void
            ) -> ::std::ffi::c_int;
            job_begin = select_p_job_begin(job_ptr: *mut ::std::ffi::c_void) -> ::std::ffi::c_int;
            job_ready = select_p_job_ready(job_ptr: *mut ::std::ffi::c_void) -> ::std::ffi::c_int;
            job_expand = select_p_job_expand(
                from_job_ptr: *mut ::std::ffi::c_void,
                to_job_ptr: *mut ::std::ffi::c_void
            ) -> ::std::ffi::c_int;
            job_resized = select_p_job_resized(
                job_ptr: *mut ::std::ffi::c_void,
                node_ptr: *mut ::std::ffi::c_void
            ) -> ::std::ffi::c_int;
            job_fini = select_p_job_fini(job_ptr: *mut ::std::ffi::c_void) -> ::std::ffi::c_int;
            job_suspend = select_p_job_suspend(job_ptr: *mut ::std::ffi::c_void, indf_susp: bool) -> ::std::ffi::c_int;
            job_resume = select_p_job_resume(job_ptr: *mut ::std::ffi::c_void, indf_susp: bool) -> ::std::ffi::c_int;
            step_pick_nodes = select_p_step_pick_nodes(
                job_ptr: *mut ::std::ffi::c_void,
                step_jobinfo: *mut ::std::ffi::c_void,
                node_count: u32,
                avail_nodes: *mut *mut ::std::ffi::c_void
            ) -> *mut ::std::ffi::c_void;
            step_start = select_p_step_start(step_ptr: *mut ::std::ffi::c_void) -> ::std::ffi::c_int;
            step_finish = select_p_step_finish(step_ptr: *mut ::std::ffi::c_void, killing_step: bool)
                -> ::std::ffi::c_int;
            nodeinfo_pack = select_p_select_nodeinfo_pack(
                nodeinfo: *mut ::std::ffi::c_void,
                buffer: *mut ::std::ffi::c_void,
                protocol_version: u16
            ) -> ::std::ffi::c_int;
            nodeinfo_unpack = select_p_select_nodeinfo_unpack(
                nodeinfo: *mut *mut ::std::ffi::c_void,
                buffer: *mut ::std::ffi::c_void,
                protocol_version: u16
            ) -> ::std::ffi::c_int;
            nodeinfo_alloc = select_p_select_nodeinfo_alloc() -> *mut ::std::ffi::c_void;
            nodeinfo_free = select_p_select_nodeinfo_free(nodeinfo: *mut ::std::ffi::c_void) -> ::std::ffi::c_int;
            nodeinfo_set_all = select_p_select_nodeinfo_set_all() -> ::std::ffi::c_int;
            nodeinfo_set = select_p_select_nodeinfo_set(job_ptr: *mut ::std::ffi::c_void) -> ::std::ffi::c_int;
            nodeinfo_get = select_p_select_nodeinfo_get(
                nodeinfo: *mut ::std::ffi::c_void,
                dinfo: ::std::ffi::c_uint,
                state: ::std::ffi::c_uint,
                data: *mut ::std::ffi::c_void
            ) -> ::std::ffi::c_int;
            jobinfo_alloc = select_p_select_jobinfo_alloc() -> *mut ::std::ffi::c_void;
            jobinfo_free = select_p_select_jobinfo_free(jobinfo: *mut ::std::ffi::c_void) -> ::std::ffi::c_int;
            jobinfo_set = select_p_select_jobinfo_set(
                jobinfo: *mut ::std::ffi::c_void,
                data_type: ::std::ffi::c_uint,
                data: *mut ::std::ffi::c_void
            ) -> ::std::ffi::c_int;
            jobinfo_get = select_p_select_jobinfo_get(
                jobinfo: *mut ::std::ffi::c_void,
                data_type: ::std::ffi::c_uint,
                data: *mut ::std::ffi::c_void
            ) -> ::std::ffi::c_int;
            jobinfo_copy = select_p_select_jobinfo_copy(jobinfo: *mut ::std::ffi::c_void) -> *mut ::std::ffi::c_void;
            jobinfo_pack = select_p_select_jobinfo_pack(
                jobinfo: *mut ::std::ffi::c_void,
                buffer: *mut ::std::ffi::c_void,
                protocol_version: u16
            ) -> ::std::ffi::c_int;
            jobinfo_unpack = select_p_select_jobinfo_unpack(
                jobinfo: *mut *mut ::std::ffi::c_void,
                buffer: *mut ::std::ffi::c_void,
                protocol_version: u16
            ) -> ::std::ffi::c_int;
            get_info_from_plugin = select_p_get_info_from_plugin(
                dinfo: ::std::ffi::c_uint,
                job_ptr: *mut ::std::ffi::c_void,
                data: *mut ::std::ffi::c_void
            ) -> ::std::ffi::c_int;
            reconfigure = select_p_reconfigure() -> ::std::ffi::c_int;
        }
    };
}

/// Slurm 25.11's 12 (25.05 took out state save and restore, job_init, the
/// step operations and the node and job info ones: src/interfaces/select.c),
/// after the `plugin_id` every select plugin exports.
#[cfg(all(slurm_since_25_11, not(slurm_since_26_05)))]
#[macro_export]
#[doc(hidden)]
macro_rules! __select_ops {
    ($callback:ident) => {
        $crate::$callback! {
            node_init = select_p_node_init() -> ::std::ffi::c_int;
            job_test = select_p_job_test(
                job_ptr: *mut ::std::ffi::c_void,
                bitmap: *mut ::std::ffi::c_void,
                min_nodes: u32,
                max_nodes: u32,
                req_nodes: u32,
                mode: u16,
                preemptee_candidates: *mut ::std::ffi::c_void,
                preemptee_job_list: *mut *mut ::std::ffi::c_void,
                resv_exc_ptr: *mut ::std::ffi::c_void,
                will_run_ptr: *mut ::std::ffi::c_void
            ) -> ::std::ffi::c_int;
            job_begin = select_p_job_begin(job_ptr: *mut ::std::ffi::c_void) -> ::std::ffi::c_int;
            job_ready = select_p_job_ready(job_ptr: *mut ::std::ffi::c_void) -> ::std::ffi::c_int;
            job_expand = select_p_job_expand(
                from_job_ptr: *mut ::std::ffi::c_void,
                to_job_ptr: *mut ::std::ffi::c_void
            ) -> ::std::ffi::c_int;
            job_resized = select_p_job_resized(
                job_ptr: *mut ::std::ffi::c_void,
                node_ptr: *mut ::std::ffi::c_void
            ) -> ::std::ffi::c_int;
            job_fini = select_p_job_fini(job_ptr: *mut ::std::ffi::c_void) -> ::std::ffi::c_int;
            job_suspend = select_p_job_suspend(job_ptr: *mut ::std::ffi::c_void, indf_susp: bool) -> ::std::ffi::c_int;
            job_resume = select_p_job_resume(job_ptr: *mut ::std::ffi::c_void, indf_susp: bool) -> ::std::ffi::c_int;
            nodeinfo_set_all = select_p_select_nodeinfo_set_all() -> ::std::ffi::c_int;
            nodeinfo_set = select_p_select_nodeinfo_set(job_ptr: *mut ::std::ffi::c_void) -> ::std::ffi::c_int;
            reconfigure = select_p_reconfigure() -> ::std::ffi::c_int;
        }
    };
}

/// Slurm 26.05's 13: 25.11's and, after job_resized, job_mem_reduce (a
/// running job's memory lowered, Dynamic Memory Resizing), which returns
/// nothing.
#[cfg(slurm_since_26_05)]
#[macro_export]
#[doc(hidden)]
macro_rules! __select_ops {
    ($callback:ident) => {
        $crate::$callback! {
            node_init = select_p_node_init() -> ::std::ffi::c_int;
            job_test = select_p_job_test(
                job_ptr: *mut ::std::ffi::c_void,
                bitmap: *mut ::std::ffi::c_void,
                min_nodes: u32,
                max_nodes: u32,
                req_nodes: u32,
                mode: u16,
                preemptee_candidates: *mut ::std::ffi::c_void,
                preemptee_job_list: *mut *mut ::std::ffi::c_void,
                resv_exc_ptr: *mut ::std::ffi::c_void,
                will_run_ptr: *mut ::std::ffi::c_void
            ) -> ::std::ffi::c_int;
            job_begin = select_p_job_begin(job_ptr: *mut ::std::ffi::c_void) -> ::std::ffi::c_int;
            job_ready = select_p_job_ready(job_ptr: *mut ::std::ffi::c_void) -> ::std::ffi::c_int;
            job_expand = select_p_job_expand(
                from_job_ptr: *mut ::std::ffi::c_void,
                to_job_ptr: *mut ::std::ffi::c_void
            ) -> ::std::ffi::c_int;
            job_resized = select_p_job_resized(
                job_ptr: *mut ::std::ffi::c_void,
                node_ptr: *mut ::std::ffi::c_void
            ) -> ::std::ffi::c_int;
            job_mem_reduce = select_p_job_mem_reduce(job_ptr: *mut ::std::ffi::c_void) -> ();
            job_fini = select_p_job_fini(job_ptr: *mut ::std::ffi::c_void) -> ::std::ffi::c_int;
            job_suspend = select_p_job_suspend(job_ptr: *mut ::std::ffi::c_void, indf_susp: bool) -> ::std::ffi::c_int;
            job_resume = select_p_job_resume(job_ptr: *mut ::std::ffi::c_void, indf_susp: bool) -> ::std::ffi::c_int;
            nodeinfo_set_all = select_p_select_nodeinfo_set_all() -> ::std::ffi::c_int;
            nodeinfo_set = select_p_select_nodeinfo_set(job_ptr: *mut ::std::ffi::c_void) -> ::std::ffi::c_int;
            reconfigure = select_p_reconfigure() -> ::std::ffi::c_int;
        }
    };
}
