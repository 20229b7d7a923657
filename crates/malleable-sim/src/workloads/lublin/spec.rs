//! The workload string `lublin:JOBS:NODES:CORES[:maxprocs=N][:rate=F]`, read and checked:
//! each error names the input, what was wrong and what is allowed.

/// `lublin:JOBS:NODES:CORES`, checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LublinSpec {
    pub jobs: usize,
    pub nodes: u32,
    /// Processors per node.
    pub cores: u32,
}

impl LublinSpec {
    /// The machine's processors (no overflow: [`parse_spec`] refuses that).
    pub fn procs(&self) -> u32 {
        self.nodes * self.cores
    }
}

impl std::fmt::Display for LublinSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "lublin:{}:{}:{}", self.jobs, self.nodes, self.cores)
    }
}

/// A whole `lublin:` workload string: the machine and job count, and the options after
/// them (`maxprocs=N`, `rate=F`), each at most once, in any order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LublinWorkload {
    pub spec: LublinSpec,
    /// `maxprocs=N`: the model draws sizes as it would for a machine of N processors
    /// (m_lublin99's `UHi` = log2(N), `UMed` = `UHi` - 2.5), placed on NODES x CORES; so no
    /// job asks more than N processors (ceil(N / CORES) nodes). None: the machine's own.
    pub max_procs: Option<u32>,
    /// `rate=F`: jobs arrive F times as often as the model has them (see [`generate_at`]).
    /// None: the model's rate.
    pub rate: Option<f64>,
}

impl From<LublinSpec> for LublinWorkload {
    fn from(spec: LublinSpec) -> LublinWorkload {
        LublinWorkload { spec, max_procs: None, rate: None }
    }
}

impl std::fmt::Display for LublinWorkload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.spec)?;
        if let Some(n) = self.max_procs {
            write!(f, ":maxprocs={n}")?;
        }
        if let Some(rate) = self.rate {
            write!(f, ":rate={rate}")?;
        }
        Ok(())
    }
}

/// What `lublin:` takes, for the errors.
const FORM: &str = "lublin:JOBS:NODES:CORES takes three whole numbers above 0 (jobs, nodes, \
                    processors per node), e.g. lublin:5000:1024:48, then optionally maxprocs=N (sizes \
                    drawn as for a machine of N processors, 1 <= N <= NODES x CORES) and rate=F (jobs \
                    arriving F times as often, F > 0), e.g. lublin:10000:1024:8:maxprocs=576:rate=14.5";

/// Read `--workload lublin:JOBS:NODES:CORES`, its options ignored (see [`parse`]); the error
/// names the input, what was wrong and what is allowed.
pub fn parse_spec(workload: &str) -> Result<LublinSpec, String> {
    parse(workload).map(|w| w.spec)
}

/// Read `--workload lublin:JOBS:NODES:CORES[:maxprocs=N][:rate=F]`; the error names the input,
/// what was wrong and what is allowed.
pub fn parse(workload: &str) -> Result<LublinWorkload, String> {
    let refuse = |why: String| format!("--workload '{workload}' not allowed: {FORM}; {why}");
    let fields: Vec<&str> = workload.strip_prefix("lublin:").unwrap_or(workload).split(':').collect();
    // The three numbers come first; the options, named, after them.
    let (numbers, options): (Vec<&str>, Vec<&str>) = fields.iter().partition(|f| !f.contains('='));
    let [jobs, nodes, cores] = numbers[..] else {
        return Err(refuse(format!("it has {} of them", numbers.len())));
    };
    if let Some(early) = fields[..3].iter().find(|f| f.contains('=')) {
        return Err(refuse(format!("'{early}' comes before the three numbers")));
    }
    let positive = |name: &str, text: &str| match text.parse::<u32>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(refuse(format!("{name} is '{text}'"))),
    };
    let (jobs, nodes, cores) = (positive("JOBS", jobs)?, positive("NODES", nodes)?, positive("CORES", cores)?);
    let Some(procs) = nodes.checked_mul(cores) else {
        return Err(refuse(format!("NODES x CORES is {}, above {}", nodes as u64 * cores as u64, u32::MAX)));
    };
    let mut w = LublinWorkload::from(LublinSpec { jobs: jobs as usize, nodes, cores });
    for option in options {
        let (key, value) = option.split_once('=').expect("an option has '='");
        match key {
            "maxprocs" if w.max_procs.is_some() => return Err(refuse("maxprocs is given twice".to_string())),
            "maxprocs" => match value.parse::<u32>() {
                Ok(n) if (1..=procs).contains(&n) => w.max_procs = Some(n),
                _ => return Err(refuse(format!("maxprocs is '{value}', not 1 to {procs}"))),
            },
            "rate" if w.rate.is_some() => return Err(refuse("rate is given twice".to_string())),
            "rate" => match value.parse::<f64>() {
                Ok(r) if r.is_finite() && r > 0.0 => w.rate = Some(r),
                _ => return Err(refuse(format!("rate is '{value}', not a number above 0"))),
            },
            _ => return Err(refuse(format!("'{option}' is no option (maxprocs=N, rate=F)"))),
        }
    }
    Ok(w)
}
