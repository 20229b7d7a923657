//! The `malleable-sim` binary end to end: `sweep` writes its CSVs and real
//! PNGs on a tiny configuration, and bad arguments are named with the values
//! allowed; a reader that goes away ends it quietly.

use std::path::Path;
use std::process::{Command, Output};

fn sim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_malleable-sim")).args(args).output().expect("run malleable-sim")
}

/// Width and height from a PNG's IHDR chunk, after checking the signature.
fn png_size(path: &Path) -> (u32, u32, usize) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{} is not a PNG", path.display());
    assert_eq!(&bytes[12..16], b"IHDR");
    let be = |i: usize| u32::from_be_bytes(bytes[i..i + 4].try_into().unwrap());
    (be(16), be(20), bytes.len())
}

#[test]
fn sweep_writes_csvs_and_pngs() {
    let out = std::env::temp_dir().join(format!("malleable-sim-sweep-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let o = sim(&[
        "sweep",
        "--fractions",
        "0.1,1.0",
        "--seeds",
        "1",
        "--strategies",
        "easy,mtct",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // stderr is a pipe here, so no progress bar may be drawn on it.
    assert!(o.stderr.is_empty(), "{}", String::from_utf8_lossy(&o.stderr));

    let rows = std::fs::read_to_string(out.join("sweep.csv")).unwrap();
    let rows: Vec<&str> = rows.lines().collect();
    assert!(rows[0].starts_with("fraction,seed,strategy,jobs,makespan_s,"));
    assert_eq!(rows.len(), 1 + 2 * 2, "{rows:?}");
    assert!(rows[1].starts_with("0.1,1,easy,230,"), "{}", rows[1]);
    assert!(rows[4].starts_with("1,1,mtct,230,"), "{}", rows[4]);
    let means = std::fs::read_to_string(out.join("sweep-means.csv")).unwrap();
    assert_eq!(means.lines().count(), 1 + 2 * 2);
    // With one seed the means are that seed's values.
    let field = |line: &str, i: usize| line.split(',').nth(i).unwrap().to_string();
    let first_mean = means.lines().nth(1).unwrap();
    assert_eq!(field(first_mean, 3), field(rows[1], 4), "makespan");

    for (name, w, h) in [
        ("fig3a-makespan.png", 900, 640),
        ("fig3b-utilization.png", 900, 640),
        ("fig3c-response.png", 900, 640),
        ("fig3d-wait.png", 900, 640),
        ("fig3.png", 1800, 1280),
    ] {
        let (pw, ph, len) = png_size(&out.join(name));
        assert_eq!((pw, ph), (w, h), "{name}");
        // Axes, text and lines: far more than an empty white image compresses to.
        assert!(len > 20_000, "{name}: only {len} bytes");
    }
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("mean_wait_s") && stdout.contains("wrote"), "{stdout}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn bad_arguments_name_the_argument_and_allowed_values() {
    for (args, needles) in [
        (
            &["sweep", "--strategies", "easy,sjf"][..],
            &["--strategies", "sjf", "fcfs, easy, conservative, mtct, fpsma, mtct-backfill"][..],
        ),
        (
            &["run", "--workload", "esp", "--strategy", "conservative[MaxJobTest=0]"],
            &["--strategy", "conservative: MaxJobTest=0 is not valid: expected a whole number from 1 to 1000000"],
        ),
        (
            &["compare", "--workload", "esp", "--strategies", "easy,mtct-backfill[Foo=1]"],
            &["--strategies", "mtct-backfill: unknown parameter 'Foo': it takes ExpandMtctLimit"],
        ),
        (&["sweep", "--seeds", "5..1"], &["--seeds", "1..5"]),
        (&["sweep", "--fractions", "0.1,1.5"], &["--fractions", "0.0 to 1.0"]),
        (&["sweep", "--workload", "lublin"], &["--workload", "esp | mpdata | swf:PATH"]),
        (&["sweep", "--app-model", "cubic"], &["--app-model", "linear"]),
        (&["run", "--workload", "synthetic:x", "--strategy", "easy"], &["synthetic:JOBS"]),
        (
            &["run", "--workload", "lublin:0:1024:48", "--strategy", "easy"],
            &["--workload 'lublin:0:1024:48' not allowed: lublin:JOBS:NODES:CORES takes", "JOBS is '0'"],
        ),
        (
            &["run", "--workload", "lublin:10:1024:48", "--nodes", "512", "--strategy", "easy"],
            &["--nodes 512 not allowed with --workload 'lublin:10:1024:48'"],
        ),
        (
            &["bench", "--workloads-dir", "/nonexistent-workloads"],
            &["--workloads-dir", "NASA-iPSC-1993-3.1-cln.swf.gz"],
        ),
    ] {
        let o = sim(args);
        assert!(!o.status.success(), "{args:?} succeeded");
        let err = String::from_utf8_lossy(&o.stderr);
        for n in needles {
            assert!(err.contains(n), "{args:?}: {n:?} not in: {err}");
        }
    }
}

#[test]
fn a_refused_sweep_leaves_no_output_folder() {
    let out = std::env::temp_dir().join(format!("sweep-refused-{}", std::process::id()));
    let o = sim(&["sweep", "--workload", "lublin", "--out", out.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(!out.exists(), "{} was made for a sweep that never ran", out.display());
}

#[test]
fn compare_runs_the_static_flavor_and_takes_medians_over_seeds() {
    let json = std::env::temp_dir().join(format!("malleable-sim-mpdata-{}.json", std::process::id()));
    let o = sim(&[
        "compare",
        "--workload",
        "mpdata",
        "--strategies",
        "static,natural",
        "--seeds",
        "1..3",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("median over seeds [1, 2, 3]"), "{stdout}");
    for row in ["large median_turnaround_s", "small median_wait_s", "resize_s", "natural_asked"] {
        assert!(stdout.contains(row), "{row} not in: {stdout}");
    }
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 2 * 3);
    // Static: every job rigid at its Max, so none resizes and a large job
    // runs 100 iterations of 4.19 s; natural resizes.
    let stat: Vec<&serde_json::Value> = results.iter().filter(|r| r["strategy"] == "static").collect();
    assert_eq!(stat.len(), 3);
    for r in &stat {
        assert_eq!(r["expands"], 0);
        let large = r["classes"].as_array().unwrap().iter().find(|c| c["class"] == "large").unwrap();
        assert!((large["median_run_s"].as_f64().unwrap() - 419.0).abs() < 1e-6, "{large}");
    }
    assert!(results.iter().any(|r| r["strategy"] == "natural" && r["expands"].as_u64().unwrap() > 0));
    let _ = std::fs::remove_file(&json);
}

/// A reader that goes away (`malleable-sim ... | head`) ends the program
/// quietly, with success, instead of a panic's backtrace.
#[test]
fn a_closed_stdout_ends_it_quietly() {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let o = Command::new(env!("CARGO_BIN_EXE_malleable-sim"))
        .arg("strategies")
        .stdout(writer)
        .output()
        .expect("run malleable-sim");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{:?}: {stderr}", o.status);
    assert!(stderr.is_empty(), "{stderr}");
}
