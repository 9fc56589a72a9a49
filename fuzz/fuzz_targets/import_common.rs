//! What every importer's target checks: any bytes as text, given to the tool's parser, never
//! panic; what a parser accepts is marked as imported, labels without overflow and has no
//! figure below zero or NaN.

use iosurvey::import::{parse, Tool};

pub fn check(tool: Tool, data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(got) = parse(tool, text) else { return };
    for r in &got.runs {
        assert!(r.provenance.starts_with("imported:"), "{}", r.provenance);
        // What every list shows of it: its sizes must not overflow.
        let _ = (r.workload.label(), r.workload.key(), r.workload.bytes_per_phase());
        for p in &r.phases {
            for v in [p.figures.bandwidth, p.figures.iops].into_iter().flatten() {
                assert!(v.is_finite() && v >= 0.0, "{v}");
            }
        }
    }
    if let Some(m) = &got.matrix {
        assert!(m.provenance.as_deref().is_some_and(|p| p.starts_with("imported:")));
        assert!(m.cells.iter().all(|c| c.rate().is_some_and(|r| r.is_finite() && r >= 0.0)));
    }
    for (_, n) in &got.net {
        assert!(n.provenance.is_some() && n.bandwidth.is_some_and(|b| b.is_finite() && b >= 0.0));
    }
}
