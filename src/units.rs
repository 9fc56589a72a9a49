//! Sizes, durations and rates: parsing what users type and printing what papers print.
//!
//! Inside iosurvey everything is bytes and nanoseconds. Size suffixes are powers of two, as in
//! IOR ("1m" is 1 MiB); rates are printed both as MiB/s (2^20) and GB/s (10^9), always labelled.

use thiserror::Error;

/// One kibibyte.
pub const KIB: u64 = 1 << 10;
/// One mebibyte.
pub const MIB: u64 = 1 << 20;
/// One gibibyte.
pub const GIB: u64 = 1 << 30;
/// One tebibyte.
pub const TIB: u64 = 1 << 40;

/// A size string that could not be understood.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("invalid size '{text}': {why} (hint: {hint})", hint = SizeError::HINT)]
pub struct SizeError {
    /// What the user typed.
    pub text: String,
    /// Why it was refused.
    pub why: &'static str,
}

impl SizeError {
    /// What to give instead.
    pub const HINT: &'static str = "use a byte count such as 47008 or a number with k, m, g or t, e.g. 4k, 1m, 2g";
}

// The callers that say a size's error as text (a parameter of a larger value) keep `?`.
impl From<SizeError> for String {
    fn from(e: SizeError) -> String {
        e.to_string()
    }
}

/// Parses "47008", "4k", "1m", "2g", "1t" (also "4KiB", "1MiB", "4K") into bytes.
pub fn parse_size(text: &str) -> Result<u64, SizeError> {
    let err = |why| SizeError { text: text.to_string(), why };
    let t = text.trim();
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    if digits_end == 0 {
        return Err(err("it must start with a number"));
    }
    let number: u64 = t[..digits_end].parse().map_err(|_| err("the number is too large"))?;
    let suffix = t[digits_end..].to_ascii_lowercase();
    let scale = match suffix.as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => KIB,
        "m" | "mb" | "mib" => MIB,
        "g" | "gb" | "gib" => GIB,
        "t" | "tb" | "tib" => TIB,
        _ => return Err(err("unknown unit suffix")),
    };
    number.checked_mul(scale).ok_or_else(|| err("the size does not fit in 64 bits"))
}

/// Prints a byte count the short way IOR users read it: "1 MiB", "47008 B", "2 GiB", "1.5 GiB".
pub fn format_size(bytes: u64) -> String {
    const UNITS: [(u64, &str); 4] = [(TIB, "TiB"), (GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")];
    for (scale, name) in UNITS {
        if bytes >= scale {
            if bytes % scale == 0 {
                return format!("{} {name}", bytes / scale);
            }
            return format!("{:.2} {name}", bytes as f64 / scale as f64);
        }
    }
    format!("{bytes} B")
}

/// Bytes per second from a byte count and a duration in nanoseconds; `None` for an empty window.
pub fn rate(bytes: u64, nanos: u64) -> Option<f64> {
    (nanos > 0).then(|| bytes as f64 * 1e9 / nanos as f64)
}

/// Bytes per second as MiB/s (2^20 bytes).
pub fn mib_per_s(bytes_per_s: f64) -> f64 {
    bytes_per_s / MIB as f64
}

/// Bytes per second as GB/s (10^9 bytes), the unit most vendor papers use.
pub fn gb_per_s(bytes_per_s: f64) -> f64 {
    bytes_per_s / 1e9
}

/// "1234.5 MiB/s (1.29 GB/s)": both units, labelled.
pub fn format_rate(bytes_per_s: f64) -> String {
    format!("{:.1} MiB/s ({:.2} GB/s)", mib_per_s(bytes_per_s), gb_per_s(bytes_per_s))
}

/// Seconds as a float from nanoseconds, for printing only.
pub fn secs(nanos: u64) -> f64 {
    nanos as f64 / 1e9
}

/// Reads a size on the command line (clap's value parser): "1m", "47008".
pub fn size_arg(text: &str) -> Result<u64, SizeError> {
    parse_size(text)
}

/// The wall clock, Unix seconds (for records and manifests, never for timing).
pub fn now_unix() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs() as i64)
}

/// Parses a duration, "100us", "1.5ms", "2s", "500ns", into nanoseconds (under an hour).
pub fn parse_duration(text: &str) -> Result<u64, String> {
    duration(text, &UNITS[..4], (3.6e12, "an hour"))
}

/// Parses a long duration, as [`parse_duration`] and also in minutes and hours ("10m", "2h"),
/// into nanoseconds (under a week): a time budget.
pub fn parse_long_duration(text: &str) -> Result<u64, String> {
    duration(text, &UNITS, (7.0 * 24.0 * 3.6e12, "a week"))
}

/// Duration units and their nanoseconds.
const UNITS: [(&str, f64); 6] = [("ns", 1.0), ("us", 1e3), ("ms", 1e6), ("s", 1e9), ("m", 60e9), ("h", 3600e9)];

/// A number and one of `units`, in nanoseconds below `limit` (nanoseconds, said as).
fn duration(text: &str, units: &[(&str, f64)], (limit, said): (f64, &str)) -> Result<u64, String> {
    let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number.parse().map_err(|_| format!("'{text}' does not start with a number"))?;
    let Some((_, scale)) = units.iter().find(|(name, _)| *name == unit) else {
        let names: Vec<&str> = units.iter().map(|(name, _)| *name).collect();
        let (last, rest) = names.split_last().expect("units");
        return Err(format!("'{text}' needs a unit: {} or {last}", rest.join(", ")));
    };
    let nanos = value * scale;
    if !(nanos.is_finite() && nanos < limit) {
        return Err(format!("'{text}' is longer than {said}"));
    }
    Ok(nanos as u64)
}

/// A day as "YYYY-MM-DD" (UTC) to the unix time of its first second; the inverse of the
/// date part of [`format_time`].
pub fn parse_date(text: &str) -> Result<i64, String> {
    let bad = || format!("'{text}' is not a date: give YYYY-MM-DD");
    let parts: Vec<i64> = text.split('-').map(|p| p.parse().map_err(|_| bad())).collect::<Result<_, _>>()?;
    let [y, m, d] = parts[..] else { return Err(bad()) };
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return Err(bad());
    }
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    let unix = (era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468) * 86_400;
    // A day past its month's end (2026-02-30) comes back as another date.
    match format_time(unix).starts_with(text) {
        true => Ok(unix),
        false => Err(bad()),
    }
}

/// A duration for people: "42 s", "3m07s", "2h05m".
pub fn format_duration(secs: f64) -> String {
    if secs < 9.95 {
        return format!("{:.1} s", secs.max(0.0));
    }
    let s = secs.round() as u64;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

/// Unix seconds as a UTC date and time, "2026-11-23 08:14:05 UTC".
pub fn format_time(unix: i64) -> String {
    let (days, secs) = (unix.div_euclid(86_400), unix.rem_euclid(86_400));
    // Days since 1970-01-01 to a civil date, in 400-year eras starting on 1 March.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + (month <= 2) as i64;
    format!("{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC", secs / 3600, secs / 60 % 60, secs % 60)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_duration_reads_as_people_say_it() {
        assert_eq!(format_duration(0.5), "0.5 s");
        assert_eq!(format_duration(9.0), "9.0 s");
        assert_eq!(format_duration(42.4), "42 s");
        assert_eq!(format_duration(187.0), "3m07s");
        assert_eq!(format_duration(7500.0), "2h05m");
        assert_eq!(format_duration(-1.0), "0.0 s");
    }

    #[test]
    fn dates_parse_to_their_first_second_and_back() {
        assert_eq!(parse_date("1970-01-01"), Ok(0));
        assert_eq!(parse_date("2026-11-23"), Ok(1_795_392_000));
        assert_eq!(format_time(parse_date("2024-02-29").unwrap()), "2024-02-29 00:00:00 UTC");
        for bad in ["2026-02-30", "2026-13-01", "2026-11", "yesterday", "2026-11-23-1"] {
            assert!(parse_date(bad).is_err(), "{bad}");
        }
    }

    use super::*;

    #[test]
    fn parses_durations() {
        assert_eq!(parse_duration("100us"), Ok(100_000));
        assert_eq!(parse_duration("1.5ms"), Ok(1_500_000));
        assert_eq!(parse_duration("2s"), Ok(2_000_000_000));
        assert_eq!(parse_duration("0ns"), Ok(0));
        assert!(parse_duration("5").is_err());
        assert!(parse_duration("ms").is_err());
        assert!(parse_duration("2h").is_err());
        assert!(parse_duration("9999s").is_err());
        assert_eq!(parse_long_duration("2h"), Ok(7_200_000_000_000));
        assert_eq!(parse_long_duration("1.5m"), Ok(90_000_000_000));
        assert_eq!(parse_long_duration("10ms"), Ok(10_000_000));
        assert!(parse_long_duration("200h").is_err(), "over a week");
    }

    #[test]
    fn formats_unix_times_as_utc() {
        assert_eq!(format_time(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(format_time(951_782_400), "2000-02-29 00:00:00 UTC");
        assert_eq!(format_time(1_795_430_045), "2026-11-23 10:34:05 UTC");
        assert_eq!(format_time(-1), "1969-12-31 23:59:59 UTC");
    }

    #[test]
    fn parses_plain_and_suffixed_sizes() {
        assert_eq!(parse_size("47008"), Ok(47008));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("1m"), Ok(1 << 20));
        assert_eq!(parse_size("2g"), Ok(2 << 30));
        assert_eq!(parse_size("1t"), Ok(1 << 40));
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("8M"), Ok(8 << 20));
    }

    #[test]
    fn refuses_bad_sizes_with_a_reason() {
        assert_eq!(parse_size("1q").unwrap_err().why, "unknown unit suffix");
        assert_eq!(parse_size("m").unwrap_err().why, "it must start with a number");
        assert_eq!(parse_size("").unwrap_err().why, "it must start with a number");
        assert!(parse_size("99999999999t").is_err());
        let msg = parse_size("1q").unwrap_err().to_string();
        assert!(msg.contains("'1q'") && msg.contains("hint"), "{msg}");
    }

    #[test]
    fn formats_sizes_and_rates() {
        assert_eq!(format_size(47008), "45.91 KiB");
        assert_eq!(format_size(100), "100 B");
        assert_eq!(format_size(2 << 30), "2 GiB");
        assert_eq!(rate(1 << 20, 1_000_000_000), Some(1048576.0));
        assert_eq!(rate(5, 0), None);
        assert_eq!(mib_per_s(2.0 * MIB as f64), 2.0);
        assert_eq!(gb_per_s(3e9), 3.0);
        assert_eq!(format_rate(1e9), "953.7 MiB/s (1.00 GB/s)");
    }
}
