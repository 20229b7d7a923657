//! The Lublin-Feitelson workload model (`--workload lublin:JOBS:NODES:CORES[:maxprocs=N][:rate=F]`): any
//! number of rigid jobs for any machine, drawn from a seed. It stands in for the Cirne-model
//! workloads of the SD-Policy evaluation on W1 (1,024 nodes x 48 cores) and for RICC's
//! machine (1,024 nodes x 8 cores).
//!
//! # The model
//! U. Lublin and D. G. Feitelson, "The workload on parallel supercomputers: modeling the
//! characteristics of rigid jobs", JPDC 63(11), 2003 ("Lublin99"), as its program
//! m_lublin99.c in the Parallel Workloads Archive draws it. Sizes are processors:
//! - **size**: serial with probability `SerialProb`; otherwise log2(size) is a two-stage
//!   uniform, on [`ULow`, `UMed`] with probability `Uprob` and on [`UMed`, `UHi`] otherwise,
//!   `UHi` = log2(machine) and `UMed` = `UHi` - 2.5 (the program's advice, and its 4.5 for
//!   128 processors; lublin_256's size quartiles fit it). A share `Pow2Prob`
//!   of all jobs has that log2 rounded to a whole number: a power of two.
//! - **run time**: ln(run time) is hyper-gamma: gamma(`a1`, `b1`) with probability
//!   p = `pa` * size + `pb` (kept in [0, 1]), else gamma(`a2`, `b2`). The program takes p
//!   linear in the size itself, not in its log2, and lublin_256 confirms it: there, jobs of
//!   64 processors or more run a median e^9.2 s, which the log2 form would make e^4.5 s.
//!   Draws above ln = 12 (45 h) are drawn again.
//! - **arrivals**: ln(gap) is gamma(`aarr` * `ARAR`, `barr`) (draws above 13 drawn
//!   again), the gap counted in "rush-hour seconds"; the day's 48 half-hours each have a
//!   weight, gamma(`anum`, `bnum`)'s mass over that half-hour with the day read from
//!   half-hour 11 (`CYCLIC_DAY_START`) on, normalised to mean 1. A half-hour of weight w
//!   uses up w rush-hour seconds per second, so arrivals follow the daily cycle. Time 0 is
//!   midnight, and the first job comes one gap after it, as in the program.
//!
//! Times are whole seconds, truncated as the program's are; it adds each gap to a
//! whole-second clock, which so runs a little behind the cycle (see `Model::arrive`).
//!
//! # Parameters
//! The program's "whole sample" set ([`WHOLE_SAMPLE`]: its constants `SERIAL_PROB` ..
//! `ARAR`, used when its `INCLUDE_JOBS_TYPE` is 0), not the batch set ([`BATCH`]): the
//! reference output lublin_256.swf.gz (10,000 jobs on 256 processors) was made with it. All
//! its jobs have the type of that mode, its serial share (0.249) and its arrivals fit it,
//! and the tests show that the batch set does not (batch jobs are 29% serial).
//!
//! # Time limits
//! The model has none. Each job's estimate is its run time times U(1, 3) (Mu'alem and
//! Feitelson 2001's "f-model" with f = 2, as the `synthetic` workload uses), rounded up to
//! the next of a few round values (1, 2, 5, 10, 15, 20, 30, 45 min; 1, 1.5, 2, 3, 4, 5, 6,
//! 8, 10, 12, 16, 24, 36, 48 h): Tsafrir, Etsion and Feitelson 2005 ("Modeling user runtime
//! estimates") found that users pick from a few such popular values. The list and the
//! factor are this project's choice, not their fitted model. An estimate is never below its
//! run time: 48 h is above the model's longest run (e^12 s, 45.2 h).
//!
//! # The machine
//! [`generate`] gives [`LublinJob`]s on a machine of `NODES * CORES` processors. The
//! simulator does not model cores yet, so [`lublin`] turns each into a whole-node
//! [`JobSpec`] asking ceil(procs / CORES) nodes.
//!
//! # A site's shape: `maxprocs=N`, `rate=F`
//! On 1,024 x 8 the model's largest power of two is the whole machine, and some 150 jobs in
//! 10,000 ask all of it; RICC's own trace, which the SD-Policy paper ran, had none above
//! 72 nodes (576 processors). `lublin:JOBS:NODES:CORES:maxprocs=N` draws the sizes as the
//! program would for a machine of N processors (its `UHi` = log2(N), `UMed` = `UHi` - 2.5:
//! what its header asks of whoever runs it on another machine), so none is above N, and
//! places them on NODES x CORES. Smaller jobs offer a smaller load for the same arrivals
//! (the model's arrivals do not depend on the machine): `rate=F` has jobs arrive F times as
//! often, by dividing each rush-hour gap by F, so the day keeps its cycle (the program's
//! advice for another load is a shorter rush-hour gap). `lublin:10000:1024:8:maxprocs=576:rate=14.5`
//! offers on seeds 1 to 20 the load `lublin:10000:1024:8` does, within -6% to +3% a seed.
//! Neither option changes a workload without it.

mod model;
mod spec;

use model::Model;
#[cfg(test)]
use model::{daily_weights, BUCKETS, POPULAR_ESTIMATES};
pub use model::{LublinJob, Params, BATCH, WHOLE_SAMPLE};
pub use spec::{parse, parse_spec, LublinSpec, LublinWorkload};

use crate::workloads::workload::{make_malleable, JobSpec, Workload};

/// `jobs` jobs on a machine of `procs` processors with `params`, all drawn from `seed`.
pub fn generate(jobs: usize, procs: u32, params: &Params, seed: u64) -> Vec<LublinJob> {
    generate_at(jobs, procs, params, seed, 1.0)
}

/// [`generate`] with jobs arriving `rate` times as often: each gap, drawn in rush-hour
/// seconds, is divided by `rate` before the daily cycle spends it, so the day keeps its
/// 24 hours and its shape (the program's advice for another load: a shorter rush-hour
/// gap). The draws are [`generate`]'s, so at 1 the jobs are its to the second.
pub fn generate_at(jobs: usize, procs: u32, params: &Params, seed: u64, rate: f64) -> Vec<LublinJob> {
    let mut model = Model::new(procs.max(1), params, seed, rate);
    (0..jobs).map(|_| model.next_job()).collect()
}

/// The workload `lublin:JOBS:NODES:CORES`: [`generate`] on NODES x CORES processors with
/// [`WHOLE_SAMPLE`], each job a whole-node [`JobSpec`] (ceil(procs / CORES) nodes), the
/// chosen `malleable_fraction` malleable as for `synthetic` (min 1, max the machine, no
/// constraint). Submit times are multiplied by `arrival_scale` (`--arrival-scale`): the
/// model's arrival rate does not depend on the machine, so a big machine gets a light load
/// unless its arrivals are compressed, as SD-Policy's authors scaled theirs "to the
/// considered system size".
pub fn lublin(workload: impl Into<LublinWorkload>, malleable_fraction: f64, seed: u64, arrival_scale: f64) -> Workload {
    let workload = workload.into();
    let spec = workload.spec;
    let procs = workload.max_procs.unwrap_or(spec.procs());
    let jobs = generate_at(spec.jobs, procs, &WHOLE_SAMPLE, seed, workload.rate.unwrap_or(1.0));
    let mut specs: Vec<JobSpec> =
        jobs.iter().enumerate().map(|(i, job)| job_spec(i as u32 + 1, job, spec.cores)).collect();
    for j in &mut specs {
        j.submit *= arrival_scale;
    }
    make_malleable(&mut specs, malleable_fraction, seed, spec.nodes as usize);
    Workload {
        name: workload.to_string(),
        nodes: spec.nodes as usize,
        jobs: specs,
        power: None,
        cores: spec.cores,
        gpus: 0,
    }
}

/// `job` as a whole-node job on nodes of `cores` processors, opted in to core sharing.
pub fn job_spec(id: u32, job: &LublinJob, cores: u32) -> JobSpec {
    let nodes = job.procs.div_ceil(cores.max(1));
    JobSpec {
        // Every job lets SD-Policy share its nodes' cores, as in the
        // paper's simulations; strategies that never share ignore it.
        share_cores: true,
        ..JobSpec::rigid(id, job.submit as f64, nodes, job.run_time as f64, job.estimate as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader};

    /// What the comparison with lublin_256 looks at, for any list of (submit, procs, run time).
    #[derive(Debug)]
    struct Figures {
        serial: f64,
        pow2_of_parallel: f64,
        /// Quartiles (25, 50, 75%) of log2(size) over the parallel jobs.
        log2_size: [f64; 3],
        /// Quartiles of ln(run time).
        ln_run: [f64; 3],
        /// Median ln(run time) of the jobs of 64 processors or more: where `pa` * size
        /// has made the long gamma nearly certain.
        ln_run_large: f64,
        mean_gap: f64,
        median_gap: f64,
        hour_share: [f64; 24],
    }

    fn quartiles(mut v: Vec<f64>) -> [f64; 3] {
        v.sort_by(f64::total_cmp);
        [0.25, 0.5, 0.75].map(|q| v[((v.len() - 1) as f64 * q).round() as usize])
    }

    fn figures(jobs: &[(u64, u32, u64)]) -> Figures {
        let n = jobs.len() as f64;
        let parallel: Vec<u32> = jobs.iter().map(|j| j.1).filter(|&p| p > 1).collect();
        let mut hour_share = [0.0; 24];
        for j in jobs {
            hour_share[(j.0 / 3600 % 24) as usize] += 1.0 / n;
        }
        Figures {
            serial: jobs.iter().filter(|j| j.1 == 1).count() as f64 / n,
            pow2_of_parallel: parallel.iter().filter(|p| p.is_power_of_two()).count() as f64 / parallel.len() as f64,
            log2_size: quartiles(parallel.iter().map(|&p| (p as f64).log2()).collect()),
            ln_run: quartiles(jobs.iter().map(|j| (j.2 as f64).ln()).collect()),
            ln_run_large: quartiles(jobs.iter().filter(|j| j.1 >= 64).map(|j| (j.2 as f64).ln()).collect())[1],
            mean_gap: (jobs[jobs.len() - 1].0 - jobs[0].0) as f64 / (n - 1.0),
            median_gap: quartiles(jobs.windows(2).map(|p| (p[1].0 - p[0].0) as f64).collect())[1],
            hour_share,
        }
    }

    /// The figures as named rows, each with the floor its tolerance never goes below:
    /// the quartiles of log2(size) sit on powers of two in every sample (their spread
    /// over seeds is 0), so they get a quarter of a doubling; the others small floors
    /// below their spread, in case a spread comes out near 0.
    fn rows(f: &Figures) -> Vec<(String, f64, f64)> {
        let mut rows = vec![
            ("serial share".to_string(), f.serial, 0.002),
            ("power-of-two share of parallel".to_string(), f.pow2_of_parallel, 0.002),
        ];
        for (q, (s, r)) in ["q1", "median", "q3"].iter().zip(f.log2_size.iter().zip(f.ln_run)) {
            rows.push((format!("log2(size) {q}, parallel jobs"), *s, 0.25));
            rows.push((format!("ln(run time) {q}"), r, 0.02));
        }
        rows.push(("ln(run time) median, size >= 64".to_string(), f.ln_run_large, 0.02));
        rows.push(("mean inter-arrival, s".to_string(), f.mean_gap, 5.0));
        rows.push(("median inter-arrival, s".to_string(), f.median_gap, 2.0));
        for (h, share) in f.hour_share.iter().enumerate() {
            rows.push((format!("share of arrivals, hour {h:02}"), *share, 0.001));
        }
        rows
    }

    /// lublin_256.swf.gz as (submit, procs, run time): the program's own output, kept in
    /// ../shared/workloads beside the checkout (as the NASA trace is).
    fn lublin_256() -> Vec<(u64, u32, u64)> {
        let path = crate::bench::default_workloads_dir().join("lublin_256.swf.gz");
        let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        BufReader::new(flate2::read::GzDecoder::new(file))
            .lines()
            .map(|l| l.expect("lublin_256.swf.gz reads"))
            .filter(|l| !l.starts_with(';') && !l.trim().is_empty())
            .map(|l| {
                let f: Vec<i64> = l.split_whitespace().take(5).map(|x| x.parse().expect("a whole number")).collect();
                (f[1] as u64, f[4] as u32, f[3] as u64)
            })
            .collect()
    }

    /// Our figures against the file's, as (name, file, our mean, our spread, tolerance, within).
    ///
    /// The file is one draw of 10,000 jobs from the program; ours are 20 draws (seeds
    /// 1..=20) of 10,000 jobs on the same 256 processors. If both come from the same
    /// model, file minus our mean has about our seed-to-seed spread (sd), so we allow 4 sd
    /// (above that by chance less than once in 10,000 for a normal figure) or the row's
    /// floor. A wrong parameter moves a figure by many sd: see the batch test.
    fn compare(params: &Params) -> Vec<(String, f64, f64, f64, f64, bool)> {
        let file = rows(&figures(&lublin_256()));
        let ours: Vec<Vec<(String, f64, f64)>> = (1..=20)
            .map(|seed| {
                let jobs = generate(10_000, 256, params, seed);
                rows(&figures(&jobs.iter().map(|j| (j.submit, j.procs, j.run_time)).collect::<Vec<_>>()))
            })
            .collect();
        file.iter()
            .enumerate()
            .map(|(i, (name, theirs, floor))| {
                let v: Vec<f64> = ours.iter().map(|r| r[i].1).collect();
                let mean = v.iter().sum::<f64>() / v.len() as f64;
                let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (v.len() - 1) as f64).sqrt();
                let tolerance = (4.0 * sd).max(*floor);
                (name.clone(), *theirs, mean, sd, tolerance, (theirs - mean).abs() <= tolerance)
            })
            .collect()
    }

    fn print(rows: &[(String, f64, f64, f64, f64, bool)]) {
        println!("{:<34} {:>10} {:>10} {:>9} {:>9}", "figure", "lublin_256", "ours", "sd", "allowed");
        for (name, theirs, mean, sd, tol, ok) in rows {
            println!("{name:<34} {theirs:>10.4} {mean:>10.4} {sd:>9.4} {tol:>9.4}{}", if *ok { "" } else { "  OUT" });
        }
    }

    #[test]
    fn ten_thousand_jobs_on_256_processors_match_the_programs_lublin_256() {
        let rows = compare(&WHOLE_SAMPLE);
        print(&rows);
        let out: Vec<&String> = rows.iter().filter(|r| !r.5).map(|r| &r.0).collect();
        assert!(out.is_empty(), "outside the tolerance: {out:?}");
    }

    #[test]
    fn the_batch_parameters_did_not_make_lublin_256() {
        // The same comparison has the power to tell parameter sets apart.
        let rows = compare(&BATCH);
        print(&rows);
        let out = |name: &str| !rows.iter().find(|r| r.0 == name).unwrap().5;
        assert!(out("serial share") && out("power-of-two share of parallel") && out("mean inter-arrival, s"));
    }

    #[test]
    fn the_daily_cycle_is_the_programs() {
        // The program's normalised weights (its incomplete-gamma cdf differences), for
        // half-hours 0, 9, 10 (the wrap from the tail to the cycle's start), 27 (the
        // peak, 13:30) and 47.
        let w = daily_weights(WHOLE_SAMPLE.anum, WHOLE_SAMPLE.bnum);
        for (b, program) in [(0, 0.507821), (9, 0.175754), (10, 0.164918), (27, 1.833114), (47, 0.563692)] {
            assert!((w[b] - program).abs() < 2e-6, "half-hour {b}: {} against {program}", w[b]);
        }
        let peak = (0..BUCKETS).max_by(|&a, &b| w[a].total_cmp(&w[b])).unwrap();
        assert_eq!(peak, 27);
    }

    #[test]
    fn a_seed_gives_one_workload_and_seeds_differ() {
        let a = generate(2_000, 49_152, &WHOLE_SAMPLE, 7);
        assert_eq!(a, generate(2_000, 49_152, &WHOLE_SAMPLE, 7));
        let b = generate(2_000, 49_152, &WHOLE_SAMPLE, 8);
        assert_ne!(a, b);
        // Not merely shifted: most jobs differ in size or run time.
        let same = a.iter().zip(&b).filter(|(x, y)| (x.procs, x.run_time) == (y.procs, y.run_time)).count();
        assert!(same < 400, "{same} of 2,000 jobs alike");
        // And the whole workload, malleable choice included.
        let spec = parse_spec("lublin:500:1024:8").unwrap();
        assert_eq!(lublin(spec, 0.5, 3, 1.0).jobs, lublin(spec, 0.5, 3, 1.0).jobs);
        assert_ne!(lublin(spec, 0.5, 3, 1.0).jobs, lublin(spec, 0.5, 4, 1.0).jobs);
    }

    #[test]
    fn an_arrival_scale_compresses_the_submissions_only() {
        let spec = parse_spec("lublin:300:1024:48").unwrap();
        let (plain, packed) = (lublin(spec, 0.3, 2, 1.0), lublin(spec, 0.3, 2, 0.25));
        for (a, b) in plain.jobs.iter().zip(&packed.jobs) {
            assert_eq!(b.submit, a.submit * 0.25);
            assert_eq!(JobSpec { submit: a.submit, ..b.clone() }, *a);
        }
    }

    #[test]
    fn sizes_fit_the_machine_and_estimates_cover_the_run() {
        // W1 (1,024 x 48: log2 not whole), RICC (1,024 x 8), lublin_256, and machines
        // smaller than the size model's range.
        for procs in [49_152, 8_192, 256, 12, 3, 1] {
            let jobs = generate(20_000, procs, &WHOLE_SAMPLE, 1);
            assert!(jobs.iter().all(|j| (1..=procs).contains(&j.procs)), "{procs} processors");
            assert!(jobs.iter().all(|j| j.run_time >= 1 && j.estimate >= j.run_time));
            assert!(jobs.iter().all(|j| POPULAR_ESTIMATES.contains(&j.estimate)));
            assert!(jobs.windows(2).all(|p| p[0].submit <= p[1].submit));
            if procs >= 256 {
                // The largest size is reached, and on W1 the powers of two stop at 32,768.
                let largest = jobs.iter().map(|j| j.procs).max().unwrap();
                assert!(largest > procs / 2, "{procs} processors: largest job {largest}");
            }
        }
        let w1 = generate(20_000, 49_152, &WHOLE_SAMPLE, 2);
        assert!(w1.iter().any(|j| j.procs == 32_768));
        assert!(!w1.iter().any(|j| j.procs.is_power_of_two() && j.procs > 32_768));
    }

    #[test]
    fn a_job_asks_whole_nodes_enough_for_its_processors() {
        let spec = parse_spec("lublin:3000:1024:48").unwrap();
        let w = lublin(spec, 0.25, 5, 1.0);
        let jobs = generate(3_000, 49_152, &WHOLE_SAMPLE, 5);
        assert_eq!((w.name.as_str(), w.nodes, w.jobs.len()), ("lublin:3000:1024:48", 1024, 3_000));
        for (spec, job) in w.jobs.iter().zip(&jobs) {
            assert_eq!(spec.nodes, job.procs.div_ceil(48));
            assert!(spec.nodes * 48 >= job.procs && (spec.nodes - 1) * 48 < job.procs);
            assert_eq!(
                (spec.submit, spec.run_time, spec.estimate),
                (job.submit as f64, job.run_time as f64, job.estimate as f64)
            );
        }
        // Serial jobs take a whole node, and the largest a 1,024-node job at most.
        assert!(w.jobs.iter().all(|j| (1..=1024).contains(&j.nodes)));
        assert_eq!(job_spec(1, &LublinJob { submit: 0, procs: 49, run_time: 1, estimate: 60 }, 48).nodes, 2);
        // Malleable as for synthetic: the chosen quarter, min 1, max the machine.
        let malleable: Vec<_> = w.jobs.iter().filter_map(|j| j.malleable).collect();
        assert_eq!(malleable.len(), 750);
        assert!(malleable.iter().all(|m| (m.min, m.max) == (1, 1024)));
    }

    #[test]
    fn bad_specs_are_refused_with_what_is_allowed() {
        assert_eq!(parse_spec("lublin:5000:1024:48"), Ok(LublinSpec { jobs: 5000, nodes: 1024, cores: 48 }));
        for (bad, why) in [
            ("lublin:0:1024:48", "JOBS is '0'"),
            ("lublin:5000:0:48", "NODES is '0'"),
            ("lublin:5000:1024:0", "CORES is '0'"),
            ("lublin:5000:1024:x", "CORES is 'x'"),
            ("lublin:-3:1024:48", "JOBS is '-3'"),
            ("lublin:5000:1024", "it has 2 of them"),
            ("lublin:5000:1024:48:2", "it has 4 of them"),
            ("lublin:", "it has 1 of them"),
            ("lublin:10:65536:65536", "NODES x CORES is 4294967296, above 4294967295"),
        ] {
            let e = parse_spec(bad).unwrap_err();
            assert!(e.starts_with(&format!("--workload '{bad}' not allowed: lublin:JOBS:NODES:CORES takes")), "{e}");
            assert!(e.ends_with(why), "{bad}: {e}");
        }
    }

    #[test]
    fn options_parse_in_any_order_and_name_the_workload() {
        let ricc = parse("lublin:10000:1024:8:maxprocs=576:rate=14.5").unwrap();
        let spec = LublinSpec { jobs: 10_000, nodes: 1024, cores: 8 };
        assert_eq!(ricc, LublinWorkload { spec, max_procs: Some(576), rate: Some(14.5) });
        assert_eq!(parse("lublin:10000:1024:8:rate=14.5:maxprocs=576"), Ok(ricc));
        assert_eq!(ricc.to_string(), "lublin:10000:1024:8:maxprocs=576:rate=14.5");
        assert_eq!(parse(&ricc.to_string()), Ok(ricc));
        // Each alone, the whole machine as the largest cap, and no options at all.
        assert_eq!(parse("lublin:10:4:8:maxprocs=32").unwrap().max_procs, Some(32));
        assert_eq!(parse("lublin:10:4:8:rate=2").unwrap().to_string(), "lublin:10:4:8:rate=2");
        assert_eq!(parse("lublin:5000:1024:48"), Ok(LublinWorkload::from(parse_spec("lublin:5000:1024:48").unwrap())));
        assert_eq!(parse_spec("lublin:10000:1024:8:maxprocs=576"), Ok(spec));
    }

    #[test]
    fn bad_options_are_refused_with_what_is_allowed() {
        for (bad, why) in [
            ("lublin:10000:1024:8:maxprocs=0", "maxprocs is '0', not 1 to 8192"),
            ("lublin:10000:1024:8:maxprocs=8193", "maxprocs is '8193', not 1 to 8192"),
            ("lublin:10000:1024:8:maxprocs=57.6", "maxprocs is '57.6', not 1 to 8192"),
            ("lublin:10000:1024:8:maxprocs=", "maxprocs is '', not 1 to 8192"),
            ("lublin:10000:1024:8:rate=0", "rate is '0', not a number above 0"),
            ("lublin:10000:1024:8:rate=-2", "rate is '-2', not a number above 0"),
            ("lublin:10000:1024:8:rate=inf", "rate is 'inf', not a number above 0"),
            ("lublin:10000:1024:8:rate=NaN", "rate is 'NaN', not a number above 0"),
            ("lublin:10000:1024:8:rate=fast", "rate is 'fast', not a number above 0"),
            ("lublin:10000:1024:8:maxprocs=576:maxprocs=72", "maxprocs is given twice"),
            ("lublin:10000:1024:8:rate=2:rate=2", "rate is given twice"),
            ("lublin:10000:1024:8:load=1", "'load=1' is no option (maxprocs=N, rate=F)"),
            ("lublin:10000:1024:8:576", "it has 4 of them"),
            ("lublin:maxprocs=576:10000:1024:8", "'maxprocs=576' comes before the three numbers"),
            ("lublin:10000:1024:maxprocs=576", "it has 2 of them"),
            ("lublin:10000:0:8:maxprocs=576", "NODES is '0'"),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.starts_with(&format!("--workload '{bad}' not allowed: lublin:JOBS:NODES:CORES takes")), "{e}");
            assert!(e.contains("then optionally maxprocs=N") && e.contains("and rate=F"), "{e}");
            assert!(e.ends_with(why), "{bad}: {e}");
        }
    }

    #[test]
    fn a_cap_draws_sizes_as_the_model_does_for_that_machine() {
        // RICC's shape: nothing above 576 processors (72 nodes of 8), and every job as
        // the model draws it for a 576-processor machine (UHi = log2 576), placed on
        // 1,024 x 8.
        let w = lublin(parse("lublin:20000:1024:8:maxprocs=576").unwrap(), 0.0, 3, 1.0);
        let model = generate(20_000, 576, &WHOLE_SAMPLE, 3);
        assert_eq!((w.name.as_str(), w.nodes), ("lublin:20000:1024:8:maxprocs=576", 1024));
        for (i, (spec, job)) in w.jobs.iter().zip(&model).enumerate() {
            assert_eq!(*spec, job_spec(i as u32 + 1, job, 8));
        }
        assert!(model.iter().all(|j| (1..=576).contains(&j.procs)));
        assert_eq!(w.jobs.iter().map(|j| j.nodes).max(), Some(72));
        // Not a truncation: no pile at the cap, the powers of two stop at 512 (the
        // largest that fits, as on W1's 49,152), and the second stage reaches past it.
        assert!(model.iter().filter(|j| j.procs == 576).count() < 50);
        assert!(
            model.iter().any(|j| j.procs == 512) && !model.iter().any(|j| j.procs.is_power_of_two() && j.procs > 512)
        );
        assert!(model.iter().any(|j| j.procs > 512 && j.procs < 576));
        // The uncapped machine's serial share, and a cap of 256 gives the sizes checked
        // against lublin_256 above (the model on 256 processors), whatever the nodes.
        let serial = model.iter().filter(|j| j.procs == 1).count() as f64 / 20_000.0;
        assert!((serial - WHOLE_SAMPLE.serial_prob).abs() < 0.01, "{serial}");
        let small = lublin(parse("lublin:5000:64:48:maxprocs=256").unwrap(), 0.0, 9, 1.0);
        let model = generate(5_000, 256, &WHOLE_SAMPLE, 9);
        assert!(small
            .jobs
            .iter()
            .zip(&model)
            .all(|(s, j)| s.nodes == j.procs.div_ceil(48) && s.run_time == j.run_time as f64));
        // The cap at the machine's size is no cap.
        let whole = lublin(parse("lublin:2000:1024:8:maxprocs=8192").unwrap(), 0.3, 4, 1.0);
        assert_eq!(whole.jobs, lublin(parse_spec("lublin:2000:1024:8").unwrap(), 0.3, 4, 1.0).jobs);
    }

    #[test]
    fn a_rate_shortens_the_gaps_and_keeps_the_jobs_and_the_day() {
        let plain = generate(10_000, 576, &WHOLE_SAMPLE, 6);
        assert_eq!(generate_at(10_000, 576, &WHOLE_SAMPLE, 6, 1.0), plain);
        let fast = generate_at(10_000, 576, &WHOLE_SAMPLE, 6, 14.5);
        // The same jobs, sooner: 14.5 times as many a day (within the whole-second
        // clock's lag, about half a second a job), with the same daily cycle.
        for (a, b) in plain.iter().zip(&fast) {
            assert_eq!((a.procs, a.run_time, a.estimate), (b.procs, b.run_time, b.estimate));
        }
        let span = |jobs: &[LublinJob]| (jobs[jobs.len() - 1].submit - jobs[0].submit) as f64;
        let speedup = span(&plain) / span(&fast);
        assert!((13.5..15.5).contains(&speedup), "{speedup}");
        let hours = |jobs: &[LublinJob]| {
            let mut share = [0.0_f64; 24];
            jobs.iter().for_each(|j| share[(j.submit / 3600 % 24) as usize] += 1e-4);
            share
        };
        let (a, b) = (hours(&plain), hours(&fast));
        // A week against 16 weeks: a seed's hours differ by noise (0.056 here), while a
        // compressed day (--arrival-scale) would spread the arrivals flat, 0.28 apart.
        let apart: f64 = a.iter().zip(&b).map(|(x, y)| (x - y).abs()).sum::<f64>() / 2.0;
        assert!(apart < 0.1, "hour shares {apart} apart: {a:?} against {b:?}");
        for share in [a, b] {
            let (day, night) = (share[9..17].iter().sum::<f64>(), share[0..6].iter().sum::<f64>());
            assert!(day > 0.5 && night < 0.1, "09:00-17:00 {day}, 00:00-06:00 {night}");
        }
        // In the workload: the name says it, and the offered load grows with it.
        let ricc = |rate: &str| lublin(parse(&format!("lublin:10000:1024:8:maxprocs=576{rate}")).unwrap(), 0.0, 6, 1.0);
        let (slow, quick) = (ricc(""), ricc(":rate=14.5"));
        assert_eq!(quick.name, "lublin:10000:1024:8:maxprocs=576:rate=14.5");
        let gain = quick.offered_load() / slow.offered_load();
        assert!((13.5..15.5).contains(&gain), "{gain}");
    }
}
