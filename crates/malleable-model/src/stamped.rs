//! A log line's time, as Slurm's daemons print it before the message
//! (`[2026-11-24T00:28:50.123] ...`, LogTimeFormat=iso8601_ms, read as UTC,
//! or rfc5424_ms with its offset): read here once for every program that
//! times what a log says (the evaluation, the benchmarks, the tests).

/// A line split into its time and its message.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Stamped<'a> {
    /// Milliseconds since the epoch.
    pub ms: i64,
    pub message: &'a str,
}

impl<'a> Stamped<'a> {
    /// `line` if it starts with a timestamp that reads; None otherwise.
    pub fn parse(line: &'a str) -> Option<Stamped<'a>> {
        let (stamp, message) = line.strip_prefix('[')?.split_once(']')?;
        let message = message.strip_prefix(' ').unwrap_or(message);
        Some(Stamped { ms: stamp_ms(stamp)?, message })
    }

    /// Seconds since the epoch.
    pub fn secs(&self) -> f64 {
        self.ms as f64 / 1000.0
    }
}

/// `2026-11-24T00:28:50.123` with an offset (`+01:00`, `-02:00`, `Z`) or
/// none (UTC), and with or without its fraction, in ms since the epoch.
fn stamp_ms(stamp: &str) -> Option<i64> {
    let (date, time) = stamp.split_once('T')?;
    let (clock, offset_min) = match time.find(['+', '-', 'Z']) {
        Some(i) => {
            let (clock, zone) = time.split_at(i);
            let offset = if zone == "Z" {
                0
            } else {
                let sign = if zone.starts_with('-') { -1 } else { 1 };
                let (h, m) = zone[1..].split_once(':').unwrap_or((&zone[1..], "0"));
                sign * (h.parse::<i64>().ok()? * 60 + m.parse::<i64>().ok()?)
            };
            (clock, offset)
        }
        None => (time, 0),
    };
    let mut d = date.split('-').map(|p| p.parse::<i64>().ok());
    let (y, mo, day) = (d.next()??, d.next()??, d.next()??);
    let (hms, frac) = clock.split_once('.').unwrap_or((clock, "0"));
    let mut t = hms.split(':').map(|p| p.parse::<i64>().ok());
    let (h, mi, s) = (t.next()??, t.next()??, t.next()??);
    if d.next().is_some() || t.next().is_some() {
        return None;
    }
    if !(1..=12).contains(&mo) || !(1..=31).contains(&day) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    if frac.is_empty() || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let ms: i64 = format!("{frac:0<3}").get(..3)?.parse().ok()?;
    let secs = days_from_civil(y, mo, day) * 86_400 + h * 3600 + mi * 60 + s - offset_min * 60;
    Some(secs * 1000 + ms)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(line: &str) -> Option<i64> {
        Stamped::parse(line).map(|s| s.ms)
    }

    #[test]
    fn times_read_with_and_without_an_offset_or_a_fraction() {
        assert_eq!(ms("[2026-11-24T00:00:10.123+00:00] x"), Some(1_795_478_410_123));
        assert_eq!(ms("[2026-11-24T01:30:10.123+01:30] x"), Some(1_795_478_410_123));
        assert_eq!(ms("[2026-11-23T22:00:10.123-02:00] x"), Some(1_795_478_410_123));
        assert_eq!(ms("[2026-11-24T00:00:10.5] x"), Some(1_795_478_410_500));
        assert_eq!(ms("[2026-11-24T00:00:10] x"), Some(1_795_478_410_000));
        assert_eq!(ms("[1970-01-01T00:00:00.000] x"), Some(0));
        assert_eq!(ms("[2024-02-29T00:00:00.000Z] x"), Some(1_709_164_800_000));
        let s = Stamped::parse("[2026-11-24T00:00:10.250] sched/malleable: agent started").unwrap();
        assert_eq!((s.secs(), s.message), (1_795_478_410.25, "sched/malleable: agent started"));
    }

    #[test]
    fn what_is_no_time_is_none() {
        for line in [
            "no stamp",
            "[2026-13-24T00:00:10.000] x",
            "[2026-11-24T24:00:10.000] x",
            "[2026-11-24 00:00:10.000] x",
            "[2026-11-24T00:00:10.x] x",
            "[2026-11-24T00:00:10:11.000] x",
            "[2026-11-24T00:00:10.000 x",
        ] {
            assert_eq!(ms(line), None, "{line}");
        }
    }
}
