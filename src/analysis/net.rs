//! Network ceilings between nodes, and a run's storage figures as shares of them.

use super::document::mib;
use super::{Cell, Finding, Report, Table};
use crate::record::net::NetResult;
use crate::record::{imported_from, RunRecord};
use crate::units::{gb_per_s, mib_per_s};

/// The network ceilings of a run's nodes (their table) and its storage figures as shares of
/// the ceiling, when its target is reached over a network ([`crate::env::is_network_fs`]): the pattern its clients make (N-to-1 from several nodes, else 1-to-1), from senders among its hosts, the
/// highest such ceiling (so the share is not flattered), named in full.
pub fn against_ceiling(record: &RunRecord, ceilings: &[NetResult]) -> Report {
    // A local disk or a memory file system is reached over no network: no ceiling bounds it.
    // An imported run does not say its file system (empty): it may be reached over one.
    let fs = &record.env.fs_type;
    if !fs.is_empty() && !crate::env::is_network_fs(fs) {
        return Report::default();
    }
    let nodes = record.hosts.len();
    let pattern = if nodes > 1 { crate::net::Pattern::ManyToOne } else { crate::net::Pattern::OneToOne };
    let best = ceilings
        .iter()
        .filter(|c| c.pattern == pattern && !c.both_ways && !c.one_node)
        .filter(|c| c.senders.iter().all(|h| record.hosts.contains(h)))
        .filter_map(|c| Some((c, c.bandwidth?)))
        .max_by(|a, b| a.1.total_cmp(&b.1));
    // The ceilings' table stands beside a target reached over the network only.
    let table = net(ceilings);
    let Some((ceiling, limit)) = best else { return table };
    let findings = record
        .index()
        .headline
        .iter()
        .filter_map(|b| {
            let value = 100.0 * b.bandwidth? / limit;
            let mut receivers = ceiling.receivers.clone();
            receivers.dedup();
            Some(Finding {
                text: format!(
                    "{} reaches {value:.0}% of the {} {} ceiling of these nodes ({} stream{}, {} -> {}: {:.1} MiB/s)",
                    b.op,
                    crate::spec::variant_name(&ceiling.mode),
                    pattern.name(),
                    ceiling.streams,
                    if ceiling.streams == 1 { "" } else { "s" },
                    ceiling.senders.join(","),
                    receivers.join(","),
                    mib_per_s(limit)
                ),
                value,
                runs: record.id.into_iter().collect(),
                ..Default::default()
            })
        })
        .collect();
    table.and(Report { findings, ..Report::default() })
}

/// Network ceilings between nodes, a row per pattern.
pub fn net(results: &[NetResult]) -> Report {
    if results.is_empty() {
        return Report::default();
    }
    let mut t = Table::new(
        "network ceiling",
        &["mode", "pattern", "streams", "senders", "receivers", "message", "MiB/s", "min MiB/s", "max MiB/s", "GB/s"],
    );
    let hosts = |v: &[String]| {
        let mut h = v.to_vec();
        h.sort();
        h.dedup();
        h.join(",")
    };
    for n in results {
        let (min, max) = n.spread().unzip();
        let pattern = if n.both_ways && n.pattern != crate::net::Pattern::Bisection {
            format!("{} both ways", n.pattern.name())
        } else {
            n.pattern.name()
        };
        let mode = crate::spec::variant_name(&n.mode);
        let mode = match n.provenance.as_deref().and_then(imported_from) {
            Some(tool) => format!("{mode} (imported:{tool})"),
            None => mode,
        };
        t.rows.push(vec![
            Cell::text(mode),
            Cell::text(pattern),
            Cell::num(Some(n.streams as f64), 0),
            Cell::text(hosts(&n.senders)),
            Cell::text(hosts(&n.receivers)),
            Cell::text(crate::units::format_size(n.message)),
            mib(n.bandwidth),
            mib(min),
            mib(max),
            Cell::num(n.bandwidth.map(gb_per_s), 2),
        ]);
    }
    let mut report = Report { tables: vec![t], ..Report::default() };
    if results.iter().any(|n| n.one_node) {
        report.footer.push(
            "all endpoints are processes of one node: these figures are the node's own loopback and memory, not a network"
                .into(),
        );
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::fixtures;
    use crate::spec::Op;

    fn ceiling(mode: &str, pattern: &str, senders: &[&str], streams: usize, mib: f64) -> NetResult {
        serde_json::from_value(serde_json::json!({
            "mode": mode, "pattern": pattern, "streams": streams, "senders": senders,
            "receivers": vec!["srv"; senders.len()], "message": 1, "bytes": 1, "window_ns": 1,
            "bandwidth": mib * 1048576.0,
        }))
        .unwrap()
    }

    #[test]
    fn storage_figures_are_shares_of_the_highest_ceiling_of_their_nodes_and_pattern() {
        let mut r = fixtures::run(None);
        r.id = Some(4);
        r.env.fs_type = "lustre".into();
        r.hosts = vec!["n1".into(), "n2".into()];
        for p in &mut r.phases {
            let mib = if p.op == Op::Write { 500.0 } else { 1500.0 };
            p.figures.bandwidth = Some(mib * 1048576.0);
        }
        let ceilings = [
            ceiling("tcp", "N-to-1", &["n1", "n2"], 1, 1000.0),
            ceiling("tcp", "N-to-1", &["n1", "n2"], 4, 2000.0),
            ceiling("mpi", "1-to-1", &["n2"], 1, 9000.0),
            ceiling("tcp", "N-to-1", &["n1", "x9"], 4, 8000.0),
        ];
        let beside = against_ceiling(&r, &ceilings);
        assert_eq!(beside.tables.iter().map(|t| t.title.as_str()).collect::<Vec<_>>(), ["network ceiling"]);
        let found = beside.findings;
        let texts: Vec<&str> = found.iter().map(|f| f.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "write reaches 25% of the tcp N-to-1 ceiling of these nodes (4 streams, n1,n2 -> srv: 2000.0 MiB/s)",
                "read reaches 75% of the tcp N-to-1 ceiling of these nodes (4 streams, n1,n2 -> srv: 2000.0 MiB/s)",
            ],
            "the 1-to-1 figure is another pattern, the 8000 one comes from a node outside the run"
        );
        assert_eq!((found[0].value, found[0].runs.as_slice()), (25.0, &[4][..]));
        for local in ["ext4", "tmpfs", "xfs"] {
            let r = RunRecord { env: crate::env::Environment { fs_type: local.into(), ..r.env.clone() }, ..r.clone() };
            let beside = against_ceiling(&r, &ceilings);
            assert!(beside.findings.is_empty(), "{local} is reached over no network");
            assert!(beside.tables.is_empty() && beside.footer.is_empty(), "no ceiling's table beside {local}");
        }
        r.hosts.truncate(1);
        assert!(against_ceiling(&r, &ceilings).findings.is_empty(), "one node: no 1-to-1 from n1 was measured");
    }
}
