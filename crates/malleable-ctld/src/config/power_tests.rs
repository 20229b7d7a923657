//! The power keys of malleable.conf, read through Config as the plugin reads
//! its file: each key, its default in force, and a bad value refused naming
//! the key, the value and the rule (power.rs parses them).

use super::power::*;
use super::tests::{cet, power, power_err};
use super::Config;
use malleable_model::{Corridor, CorridorSchedule, JobPower};

#[test]
fn power_keys_are_read_and_displayed_for_the_log() {
    let c = power("Strategy=power\nPowerCorridor=1700-2500\nIdleNodeWatts=60.5\nDefaultJobWatts=150-190\n");
    let schedule = c.power.corridor.clone().unwrap();
    assert_eq!(schedule, CorridorSchedule::constant(Corridor::new(1700.0, 2500.0).unwrap()));
    assert_eq!(c.power.idle_node(), 60.5);
    assert_eq!((c.power.default_job().low(), c.power.default_job().high()), (150.0, 190.0));
    assert_eq!(
        c.to_string(),
        "Strategy=power SchedulerTick=10 PowerCorridor=1700-2500 IdleNodeWatts=60.5 DefaultJobWatts=150-190"
    );
    assert_eq!(Config::parse_in(&c.to_string().replace(' ', "\n"), cet()).unwrap(), c);
    // A fixed per-job draw is one number.
    let c = power("Strategy=power-running-only\nPowerCorridor=0-300\nDefaultJobWatts=250");
    assert_eq!(c.power.default_job(), JobPower::fixed(250.0));
    assert!(c.to_string().ends_with("DefaultJobWatts=250"), "{c}");
    // Without power keys the line is as before.
    assert_eq!(power("Strategy=fcfs").to_string(), "Strategy=fcfs SchedulerTick=10");
}

#[test]
fn power_defaults_are_the_papers_figures_and_shown_in_force() {
    let c = power("Strategy=power\nPowerCorridor=0-300");
    assert_eq!(c.power.idle_node(), DEFAULT_IDLE_NODE_WATTS);
    assert_eq!(DEFAULT_IDLE_NODE_WATTS, 71.0);
    assert_eq!((c.power.default_job().low(), c.power.default_job().high()), (170.0, 250.0));
    assert_eq!(
        c.to_string(),
        "Strategy=power SchedulerTick=10 PowerCorridor=0-300 IdleNodeWatts=71 DefaultJobWatts=170-250"
    );
    let state = c.power.state_at(0).unwrap();
    assert_eq!(state.corridor, Corridor::new(0.0, 300.0).unwrap());
    assert_eq!((state.idle_node, state.measured_draw), (71.0, None));
    assert!(Config::default().power.state_at(0).is_none());
}

#[test]
fn bad_corridors_name_the_key_the_value_and_the_rule() {
    for (bad, why) in [
        ("300-200", "LOW must be below HIGH"),
        ("300-300", "LOW must be below HIGH"),
        ("-5-100", "LOW must not be negative"),
        ("abc-100", "LOW 'abc' is not a number"),
        ("100-lots", "HIGH 'lots' is not a number"),
        ("300", "is not LOW-HIGH"),
        ("0-inf", "finite"),
        ("", "is not LOW-HIGH"),
    ] {
        let e = power_err(&format!("Strategy=power\nPowerCorridor={bad}"));
        assert!(e.starts_with(&format!("line 2: PowerCorridor={bad} is not valid (")), "{bad}: {e}");
        assert!(e.contains(why), "{bad}: {e}");
        assert!(e.contains("expected LOW-HIGH in watts with 0 <= LOW < HIGH"), "{bad}: {e}");
    }
}

#[test]
fn bad_idle_and_job_watts_name_the_key_the_value_and_the_rule() {
    for (bad, why) in
        [("-1", "negative"), ("lots", "not a number"), ("NaN", "not a finite number"), ("", "not a number")]
    {
        let e = power_err(&format!("IdleNodeWatts={bad}"));
        assert!(e.starts_with(&format!("line 1: IdleNodeWatts={bad} is not valid (")), "{bad}: {e}");
        assert!(e.contains(why) && e.contains("expected a number of watts >= 0"), "{bad}: {e}");
    }
    assert_eq!(power("IdleNodeWatts=0").power.idle_node(), 0.0);
    for (bad, why) in [
        ("-250", "negative"),
        ("250-170", "MIN 250 is above MAX 170"),
        ("-5-100", "negative"),
        ("100-", "not a number"),
        ("many", "not a number"),
        ("inf", "finite"),
    ] {
        let e = power_err(&format!("Strategy=easy\nDefaultJobWatts={bad}"));
        assert!(e.starts_with(&format!("line 2: DefaultJobWatts={bad} is not valid (")), "{bad}: {e}");
        assert!(e.contains(why) && e.contains("W or MIN-MAX with 0 <= MIN <= MAX"), "{bad}: {e}");
    }
    assert_eq!(power("DefaultJobWatts=200-200").power.default_job(), JobPower::fixed(200.0));
}

#[test]
fn schedule_times_are_local_and_the_corridor_changes_at_them() {
    // 18:00 CEST (UTC+2) in June and 18:00 CET (UTC+1) in December.
    let c = power(
        "Strategy=power\nPowerCorridor=1700-2500\n\
         PowerCorridorSchedule=2026-12-01T18:00@2500-3500, 2026-06-01T18:00:30@1000-1700\n",
    );
    let june = 1_780_272_000 + 18 * 3600 - 2 * 3600 + 30; // 2026-06-01T16:00:30Z
    let december = 1_796_083_200 + 18 * 3600 - 3600; // 2026-12-01T17:00:00Z
    let s = c.power.corridor.clone().unwrap();
    assert_eq!(s.changes.iter().map(|&(t, _)| t).collect::<Vec<_>>(), vec![june, december]);
    assert_eq!(s.at(june - 1), Corridor::new(1700.0, 2500.0).unwrap());
    assert_eq!(s.at(june), Corridor::new(1000.0, 1700.0).unwrap());
    assert_eq!(s.at(december), Corridor::new(2500.0, 3500.0).unwrap());
    assert_eq!(c.power.state_at(december + 5).unwrap().corridor, Corridor::new(2500.0, 3500.0).unwrap());
    // Said in the order they take effect, seconds written out.
    assert_eq!(
        c.to_string(),
        "Strategy=power SchedulerTick=10 PowerCorridor=1700-2500 \
         PowerCorridorSchedule=2026-06-01T18:00:30@1000-1700,2026-12-01T18:00:00@2500-3500 \
         IdleNodeWatts=71 DefaultJobWatts=170-250"
    );
    // The line reads back as the same settings (the defaults now given).
    let again = Config::parse_in(&c.to_string().replace(' ', "\n"), cet()).unwrap();
    assert_eq!((again.to_string(), again.power.corridor), (c.to_string(), c.power.corridor.clone()));
    // 02:30 on the last Sunday of March does not exist in CET: it is
    // moved forward by the hour skipped, 01:30Z.
    let c = power("PowerCorridor=0-1\nPowerCorridorSchedule=2026-03-29T02:30@1-2");
    assert_eq!(c.power.corridor.unwrap().changes[0].0, 1_774_747_800);
    // An empty schedule is no changes.
    let c = power("PowerCorridor=0-1\nPowerCorridorSchedule=");
    assert!(c.power.corridor.unwrap().changes.is_empty());
}

#[test]
fn bad_schedules_name_the_key_the_entry_and_the_format() {
    for (bad, why) in [
        ("2026-06-01 18:00@1000-1700", "is not YYYY-MM-DDTHH:MM[:SS]"),
        ("2026-13-01T18:00@1000-1700", "is not YYYY-MM-DDTHH:MM[:SS]"),
        ("now+1hour@1000-1700", "is not YYYY-MM-DDTHH:MM[:SS]"),
        ("2026-06-01T18:00", "is not WHEN@LOW-HIGH"),
        ("2026-06-01T18:00@1700-1000", "LOW must be below HIGH"),
        ("2026-06-01T18:00@-1-1000", "LOW must not be negative"),
    ] {
        let e = power_err(&format!("PowerCorridor=0-1\nPowerCorridorSchedule=2026-05-01T00:00@0-5,{bad}"));
        assert!(e.starts_with(&format!("line 2: PowerCorridorSchedule: '{bad}' is not valid (")), "{bad}: {e}");
        assert!(e.contains(why), "{bad}: {e}");
        assert!(e.contains("WHEN in slurmctld's local time as YYYY-MM-DDTHH:MM[:SS]"), "{bad}: {e}");
    }
    let e = power_err("PowerCorridor=0-1\nPowerCorridorSchedule=2026-05-01T00:00@0-5,2026-05-01T00:00:00@0-9");
    assert!(e.contains("another change, '2026-05-01T00:00:00@0-5', is at the same time"), "{e}");
    let e = power_err("Strategy=easy\nPowerCorridorSchedule=2026-05-01T00:00@0-5");
    assert!(e.starts_with("line 2: PowerCorridorSchedule= needs PowerCorridor=LOW-HIGH too"), "{e}");
    // Without a known local zone, a schedule cannot be read; a file
    // without one does not care.
    let e = Config::parse_in("PowerCorridor=0-1\nPowerCorridorSchedule=2026-05-01T00:00@0-5", Err("no TZ".into()))
        .unwrap_err();
    assert!(e.contains("cannot tell slurmctld's local time zone: no TZ"), "{e}");
    assert!(Config::parse_in("PowerCorridor=0-1", Err("no TZ".into())).is_ok());
}

#[test]
fn power_keys_with_another_strategy_are_kept_but_said_unused() {
    let c = power("Strategy=easy\nPowerCorridor=0-300\nDefaultJobWatts=250");
    let note = c.unused_notes().remove(0);
    assert_eq!(
        note,
        "PowerCorridor, DefaultJobWatts set but unused: Strategy=easy does not use power settings, \
         only power and power-running-only do"
    );
    assert!(c.power_in_use().is_none());
    assert!(c.to_string().contains("PowerCorridor=0-300"), "{c}");
    let c = power("Strategy=power\nPowerCorridor=0-300");
    assert!(c.unused_notes().is_empty() && c.power_in_use().is_some());
    assert!(power("Strategy=mtct").unused_notes().is_empty());
    // IdleNodeWatts alone with another strategy shows in the log line.
    assert_eq!(power("IdleNodeWatts=80").to_string(), "Strategy=easy SchedulerTick=10 IdleNodeWatts=80");
}
