//! iperf3's JSON (`-J`) of a TCP test: one network figure, as iosurvey's own `net` measures
//! over TCP, stored in the same table. The receiver's count is the figure (bits per second
//! / 8); each interval's is a sample.

use super::text::{self, Json};
use super::{Bad, Imported};
use crate::record::net::{Mode, NetResult, Pattern};
use crate::record::IMPORTED;
use serde_json::Value;

/// Reads iperf3's JSON output.
pub fn parse(input: &str) -> Result<Imported, Bad> {
    let doc = Json::parse(input, "iperf3's JSON")?;
    let v = &doc.value;
    if let Some(error) = v.get("error").and_then(Value::as_str) {
        return Err(Bad::at(
            doc.line_of("error", 0),
            format!("a finished iperf3 test, found its error '{}'", text::shorten(error)),
        ));
    }
    let start = v.get("start").ok_or_else(|| Bad::at(1, "iperf3's \"start\""))?;
    let version = doc.text(start, "version", 0)?;
    let version = version.trim_start_matches("iperf").trim().to_string();
    let test = start.get("test_start").ok_or_else(|| Bad::at(doc.line_of("start", 0), "iperf3's \"test_start\""))?;
    let protocol = doc.text(test, "protocol", 0)?;
    if protocol != "TCP" {
        return Err(Bad::at(
            doc.line_of("protocol", 0),
            format!("a TCP test (iosurvey's network figures are TCP or MPI), found {}", text::shorten(&protocol)),
        ));
    }
    let streams = doc.number(test, "num_streams", 0)? as usize;
    let message = doc.number(test, "blksize", 0)? as u64;
    let reverse = test.get("reverse").and_then(Value::as_i64).unwrap_or(0) == 1;
    let started = start.get("timestamp").and_then(|t| t.get("timesecs")).and_then(Value::as_i64).unwrap_or(0);
    // "Linux HOST KERNEL ...": the host iperf3 ran on, the client.
    let client = start
        .get("system_info")
        .and_then(Value::as_str)
        .and_then(|s| s.split_whitespace().nth(1))
        .unwrap_or("client")
        .to_string();
    let server =
        start.get("connecting_to").and_then(|c| c.get("host")).and_then(Value::as_str).unwrap_or("server").to_string();
    let end =
        v.get("end").ok_or_else(|| Bad::at(input.lines().count().max(1), "iperf3's \"end\" (the file ends early)"))?;
    let received =
        end.get("sum_received").ok_or_else(|| Bad::at(doc.line_of("end", 0), "iperf3's \"sum_received\""))?;
    let bytes = doc.number(received, "bytes", 0)? as u64;
    let secs = doc.number(received, "seconds", 0)?;
    let bits = doc.number(received, "bits_per_second", 0)?;
    let samples = v
        .get("intervals")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|i| i.get("sum")?.get("bits_per_second")?.as_f64())
        .map(|b| b / 8.0)
        .collect();
    let (sender, receiver) = if reverse { (server, client) } else { (client, server) };
    let net = NetResult {
        mode: Mode::Tcp,
        pattern: Pattern::OneToOne,
        both_ways: test.get("bidir").and_then(Value::as_i64).unwrap_or(0) == 1,
        streams: streams.max(1),
        senders: vec![sender],
        receivers: vec![receiver],
        message,
        bytes,
        window_ns: text::nanos(secs),
        bandwidth: Some(bits / 8.0),
        samples,
        curve: Vec::new(),
        peak_in_flight: 0,
        one_node: false,
        zerocopy: None,
        provenance: Some(format!("{IMPORTED}iperf3 {version}")),
    };
    Ok(Imported { source: format!("iperf3 {version}"), net: vec![(started, net)], ..Imported::default() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tcp_test_is_a_network_figure_of_bytes_per_second() {
        let text = r#"{"start": {"version": "iperf 3.12", "system_info": "Linux here 6.1", "connecting_to": {"host": "there"},
            "timestamp": {"timesecs": 7}, "test_start": {"protocol": "TCP", "num_streams": 2, "blksize": 131072, "reverse": 1}},
            "intervals": [{"sum": {"bits_per_second": 80}}],
            "end": {"sum_received": {"bytes": 1000, "seconds": 2.0, "bits_per_second": 4000}}}"#;
        let got = parse(text).unwrap();
        let (started, n) = &got.net[0];
        assert_eq!((*started, n.streams, n.bandwidth, n.samples.as_slice()), (7, 2, Some(500.0), [10.0].as_slice()));
        assert_eq!((n.senders[0].as_str(), n.receivers[0].as_str()), ("there", "here"), "reverse: the server sends");
    }

    #[test]
    fn udp_and_a_cut_file_are_refused() {
        let udp = "{\"start\": {\"version\": \"iperf 3.12\", \"test_start\": {\n\"protocol\": \"UDP\"}}}";
        assert_eq!(parse(udp).unwrap_err().line, 2);
        assert!(parse("{\"start\": {").unwrap_err().expected.contains("ends early"));
    }
}
