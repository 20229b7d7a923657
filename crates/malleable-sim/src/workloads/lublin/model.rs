//! The Lublin-Feitelson model itself, as m_lublin99.c draws it: its parameters (the
//! program's "whole sample" and batch sets), its tables, and the state that draws one job
//! after another (arrivals on the daily cycle, sizes, run times, estimates).

use rand::Rng;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Gamma};

/// One job as the model draws it, before any machine model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LublinJob {
    /// Seconds from midnight of the first day.
    pub submit: u64,
    /// Processors.
    pub procs: u32,
    /// Seconds, at least 1.
    pub run_time: u64,
    /// The time limit, seconds, at least `run_time`.
    pub estimate: u64,
}

/// The model's parameters, named as in the paper and its program.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Params {
    /// `SerialProb`: the share of serial jobs.
    pub serial_prob: f64,
    /// `Pow2Prob`: the share of all jobs whose log2(size) is rounded to a whole number.
    pub pow2_prob: f64,
    /// `ULow`: log2 of the smallest parallel size (0.8: sizes of 2 are not too rare).
    pub u_low: f64,
    /// `UHi` - `UMed`: the program sets `UMed` 2.5 below `UHi` (1.5 to 3.5 allowed).
    pub u_med_below_hi: f64,
    /// `Uprob`: the probability of the first stage, [`ULow`, `UMed`].
    pub u_prob: f64,
    /// The hyper-gamma of ln(run time): gamma(`a1`, `b1`) with probability
    /// `pa` * size + `pb`, else gamma(`a2`, `b2`) (shape, scale).
    pub a1: f64,
    pub b1: f64,
    pub a2: f64,
    pub b2: f64,
    pub pa: f64,
    pub pb: f64,
    /// ln(gap) in rush hours is gamma(`aarr` * `arar`, `barr`); `ARAR` ("arrive rush/all
    /// ratio") widens the rush-hour shape to all hours of the day.
    pub aarr: f64,
    pub barr: f64,
    pub arar: f64,
    /// The daily cycle: gamma(`anum`, `bnum`) over the day's half-hours.
    pub anum: f64,
    pub bnum: f64,
}

/// The program's "whole sample" parameters (no batch/interactive split), which made
/// lublin_256.swf.gz. From m_lublin99.c (the Parallel Workloads Archive's program, as
/// mirrored with GridSim's port `WorkloadLublin99` carrying the same values).
pub const WHOLE_SAMPLE: Params = Params {
    serial_prob: 0.244,
    pow2_prob: 0.576,
    u_low: 0.8,
    u_med_below_hi: 2.5,
    u_prob: 0.86,
    a1: 4.2,
    b1: 0.94,
    a2: 312.0,
    b2: 0.03,
    pa: -0.0054,
    pb: 0.78,
    aarr: 10.2303,
    barr: 0.4871,
    arar: 1.0225,
    anum: 8.1737,
    bnum: 3.9631,
};

/// The program's batch-job parameters (its `*_BATCH` constants; `UMed` = 5 with `UHi` = 7
/// there, so 2 below `UHi`). Kept to show, in the tests, that they are not what made
/// lublin_256.swf.gz.
pub const BATCH: Params = Params {
    serial_prob: 0.2927,
    pow2_prob: 0.6686,
    u_low: 1.2,
    u_med_below_hi: 2.0,
    u_prob: 0.875,
    a1: 6.57,
    b1: 0.823,
    a2: 639.1,
    b2: 0.0156,
    pa: -0.003,
    pb: 0.6986,
    aarr: 6.0415,
    barr: 0.8531,
    arar: 1.0519,
    anum: 6.1271,
    bnum: 5.2740,
};

/// `TOO_MUCH_TIME`: ln(run time) above this (45 h) is drawn again.
const TOO_MUCH_TIME: f64 = 12.0;
/// `TOO_MUCH_ARRIVE_TIME`: ln(gap) above this (5 days) is drawn again.
const TOO_MUCH_ARRIVE_TIME: f64 = 13.0;
/// `BUCKETS`: the daily cycle's resolution, half-hours.
pub(super) const BUCKETS: usize = 48;
pub(super) const SECONDS_IN_BUCKET: f64 = 1800.0;
/// `CYCLIC_DAY_START`: the half-hour at which the cycle's gamma begins its day.
pub(super) const CYCLIC_DAY_START: usize = 11;

/// The time limits users pick from, seconds (see the module doc): whole minutes, so a
/// real Slurm takes them as they are.
pub(super) const POPULAR_ESTIMATES: [u64; 22] = [
    60,
    2 * 60,
    5 * 60,
    10 * 60,
    15 * 60,
    20 * 60,
    30 * 60,
    45 * 60,
    3_600,
    5_400,
    2 * 3_600,
    3 * 3_600,
    4 * 3_600,
    5 * 3_600,
    6 * 3_600,
    8 * 3_600,
    10 * 3_600,
    12 * 3_600,
    16 * 3_600,
    24 * 3_600,
    36 * 3_600,
    48 * 3_600,
];

/// The model's state while it draws jobs one after another.
pub(super) struct Model {
    p: Params,
    procs: u32,
    u_hi: f64,
    u_med: f64,
    run_short: Gamma<f64>,
    run_long: Gamma<f64>,
    gap: Gamma<f64>,
    weights: [f64; BUCKETS],
    /// Where the arrivals are: half-hours since time 0, and how much of the current one
    /// has passed (0 to 1).
    bucket: u64,
    passed: f64,
    /// That point in seconds, and the program's whole-second clock of submissions.
    at: f64,
    clock: u64,
    rng: ChaCha8Rng,
    /// Gaps are divided by this (1: the model's).
    rate: f64,
}

impl Model {
    pub(super) fn new(procs: u32, p: &Params, seed: u64, rate: f64) -> Model {
        let gamma = |shape: f64, scale: f64| Gamma::new(shape, scale).expect("the model's gammas are valid");
        let u_hi = (procs as f64).log2();
        Model {
            p: *p,
            procs,
            u_hi,
            // On a machine so small that UHi - 2.5 falls below ULow (under 10 processors),
            // the first stage shrinks to ULow; sizes are clamped to the machine anyway.
            u_med: (u_hi - p.u_med_below_hi).max(p.u_low),
            run_short: gamma(p.a1, p.b1),
            run_long: gamma(p.a2, p.b2),
            gap: gamma(p.aarr * p.arar, p.barr),
            weights: daily_weights(p.anum, p.bnum),
            bucket: 0,
            passed: 0.0,
            at: 0.0,
            clock: 0,
            // Its own stream, apart from the malleable choice's (seeded from the same seed).
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0x6c75_626c_696e_3939),
            rate,
        }
    }

    pub(super) fn next_job(&mut self) -> LublinJob {
        let submit = self.arrive();
        let procs = self.size();
        let run_time = self.run_time(procs);
        let estimate = self.estimate(run_time);
        LublinJob { submit, procs, run_time, estimate }
    }

    /// The next submission, whole seconds since midnight of day 0.
    fn arrive(&mut self) -> u64 {
        let ln_gap = loop {
            let g = self.gap.sample(&mut self.rng);
            if g <= TOO_MUCH_ARRIVE_TIME {
                break g;
            }
        };
        // The gap in rush-hour seconds, as a number of full-weight half-hours ("points").
        let mut points = ln_gap.exp() / self.rate / SECONDS_IN_BUCKET;
        loop {
            let w = self.weights[(self.bucket % BUCKETS as u64) as usize];
            let left = (1.0 - self.passed) * w;
            if points <= left {
                self.passed += points / w;
                break;
            }
            points -= left;
            self.bucket += 1;
            self.passed = 0.0;
        }
        // The program adds each gap to a whole-second clock and truncates, so its clock
        // falls behind the cycle's by about half a second a job (some 80 minutes over
        // 10,000 jobs). Kept: lublin_256 shows it (without it, that file's share of
        // arrivals from 05:00 to 06:00 lies 6 sd above ours).
        let at = (self.bucket as f64 + self.passed) * SECONDS_IN_BUCKET;
        self.clock = (self.clock as f64 + (at - self.at)) as u64;
        self.at = at;
        self.clock
    }

    /// Processors, 1 to the machine.
    fn size(&mut self) -> u32 {
        let p = &self.p;
        let u: f64 = self.rng.gen();
        if u <= p.serial_prob {
            return 1;
        }
        let (lo, hi) = if self.rng.gen::<f64>() <= p.u_prob { (p.u_low, self.u_med) } else { (self.u_med, self.u_hi) };
        let mut log2_size = lo + self.rng.gen::<f64>() * (hi - lo);
        if u <= p.serial_prob + p.pow2_prob {
            log2_size = log2_size.round();
            // Where log2(machine) is not whole (48 cores a node), rounding up could pass
            // the machine: the power of two below it is the largest that fits.
            if log2_size > self.u_hi {
                log2_size = self.u_hi.floor();
            }
        }
        (log2_size.exp2().round() as u32).clamp(1, self.procs)
    }

    /// Seconds, at least 1 (e^x for x >= 0, truncated).
    fn run_time(&mut self, procs: u32) -> u64 {
        let p = &self.p;
        let short = (p.pa * procs as f64 + p.pb).clamp(0.0, 1.0);
        let ln_run = loop {
            let g = if self.rng.gen::<f64>() <= short {
                self.run_short.sample(&mut self.rng)
            } else {
                self.run_long.sample(&mut self.rng)
            };
            if g <= TOO_MUCH_TIME {
                break g;
            }
        };
        (ln_run.exp() as u64).max(1)
    }

    /// The time limit: see the module doc.
    fn estimate(&mut self, run_time: u64) -> u64 {
        let wanted = run_time as f64 * self.rng.gen_range(1.0..3.0);
        let popular = POPULAR_ESTIMATES.iter().copied().find(|&v| v as f64 >= wanted);
        popular.unwrap_or(POPULAR_ESTIMATES[POPULAR_ESTIMATES.len() - 1]).max(run_time)
    }
}

/// Each half-hour's weight in the daily cycle, mean 1: gamma(`anum`, `bnum`)'s mass over
/// [i - 0.5, i + 0.5], where half-hour `b` of the day is at i = b + 1 on the gamma's axis
/// read from `CYCLIC_DAY_START` on, wrapped into [11, 59) (so half-hours 0..9 take i =
/// 49..58, the evening's tail, after midnight).
pub(super) fn daily_weights(anum: f64, bnum: f64) -> [f64; BUCKETS] {
    // The density without its constant 1/(Gamma(anum) bnum^anum), which the normalisation
    // to mean 1 cancels: so no incomplete gamma function is needed, only a quadrature.
    let density = |x: f64| ((anum - 1.0) * x.ln() - x / bnum).exp();
    let mut weights = [0.0; BUCKETS];
    for (b, w) in weights.iter_mut().enumerate() {
        let i = ((b + 1 + BUCKETS - CYCLIC_DAY_START) % BUCKETS + CYCLIC_DAY_START) as f64;
        *w = simpson(density, i - 0.5, i + 0.5);
    }
    let mean = weights.iter().sum::<f64>() / BUCKETS as f64;
    weights.map(|w| w / mean)
}

/// Composite Simpson's rule on 64 panels: the density is smooth, so this is exact to
/// about 1e-10 relative on a unit interval.
fn simpson(f: impl Fn(f64) -> f64, a: f64, b: f64) -> f64 {
    const PANELS: usize = 64;
    let h = (b - a) / PANELS as f64;
    let inner: f64 = (1..PANELS).map(|k| f(a + k as f64 * h) * if k % 2 == 1 { 4.0 } else { 2.0 }).sum();
    (f(a) + inner + f(b)) * h / 3.0
}
