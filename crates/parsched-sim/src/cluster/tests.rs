use super::*;
use parsched_core::policy::cosched::{CoschedScheme, Scheme};

fn cfg(scheme: CoschedScheme, workload: u32, scale: f64) -> ClusterConfig {
    ClusterConfig {
        scheme,
        workload,
        scale,
        ..ClusterConfig::default()
    }
}

#[test]
fn a_small_workload_runs_under_every_scheme() {
    let mut schemes: Vec<CoschedScheme> = Scheme::ALL
        .iter()
        .map(|&s| CoschedScheme::Dynamic(s))
        .collect();
    schemes.extend([CoschedScheme::Gang, CoschedScheme::Fcfs]);
    for s in schemes {
        let r = run_once(
            &cfg(s, 3, 0.02),
            1,
            &ClusterOptions {
                audit: true,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(r.audit_failures, 0, "{s}");
        assert_eq!(r.order_violations, 0, "{s}");
        assert_eq!(r.messages, r.messages_received, "{s}");
        assert!(r.completion_time > 0.0);
    }
}
