//! What the parsers share: numbers and sizes as tools print them, dates, JSON fields with the
//! line they are on, CSV fields.

use super::Bad;
use serde_json::Value;

/// Seconds as whole nanoseconds (0 for what is not a time).
pub fn nanos(secs: f64) -> u64 {
    if secs.is_finite() && secs > 0.0 {
        // `as` saturates: a time past u64's range stays the largest.
        (secs * 1e9).round() as u64
    } else {
        0
    }
}

/// A figure: a finite number, not negative.
pub fn number(token: &str, line: usize, what: &str) -> Result<f64, Bad> {
    token
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| Bad::at(line, format!("{what}, found '{}'", shorten(token.trim()))))
}

/// A count: a whole number.
pub fn count(token: &str, line: usize, what: &str) -> Result<u64, Bad> {
    token.trim().parse::<u64>().map_err(|_| Bad::at(line, format!("{what}, found '{}'", shorten(token.trim()))))
}

/// At most 40 characters of what was found, for the one line of an error.
pub fn shorten(text: &str) -> String {
    let mut out: String = text.chars().take(40).collect();
    if text.chars().count() > 40 {
        out.push_str("...");
    }
    out
}

/// Seconds since the epoch of a civil date and time, read as UTC; none for what is no date.
pub fn civil_seconds(year: i64, month: u32, day: u32, (h, m, s): (u32, u32, u32)) -> Option<i64> {
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || h > 23 || m > 59 || s > 60 {
        return None;
    }
    if !(1970..=9999).contains(&year) {
        return None;
    }
    // Days from 1970-01-01 of a proleptic Gregorian date (the era arithmetic of civil calendars).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + h as i64 * 3600 + m as i64 * 60 + s as i64)
}

fn clock(text: &str) -> Option<(u32, u32, u32)> {
    let mut parts = text.split(':').map(|p| p.parse::<u32>().ok());
    let t = (parts.next()??, parts.next()??, parts.next().unwrap_or(Some(0))?);
    parts.next().is_none().then_some(t)
}

/// C's `ctime` form, as IOR and IOzone print it: "Tue Nov 24 23:04:07 2026".
pub fn ctime(text: &str) -> Option<i64> {
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let words: Vec<&str> = text.split_whitespace().collect();
    let [_, month, day, time, year] = words.as_slice() else { return None };
    let month = MONTHS.iter().position(|m| m == month)? as u32 + 1;
    civil_seconds(year.parse().ok()?, month, day.parse().ok()?, clock(time)?)
}

/// "2026-11-24T23:10:01" or "2026-11-20 09:14:03" (ISO 8601, a zone or fraction ignored).
pub fn iso(text: &str) -> Option<i64> {
    let text = text.trim();
    let (date, time) = text.split_once(['T', ' '])?;
    let mut d = date.split('-');
    let (y, m, day) = (d.next()?.parse().ok()?, d.next()?.parse().ok()?, d.next()?.parse().ok()?);
    let time: String = time.chars().take_while(|c| c.is_ascii_digit() || *c == ':').collect();
    civil_seconds(y, m, day, clock(&time)?)
}

/// "11/24/2026 23:04:15", as mdtest prints it.
pub fn month_day_year(text: &str) -> Option<i64> {
    let (date, time) = text.trim().split_once(' ')?;
    let mut d = date.split('/');
    let (m, day, y) = (d.next()?.parse().ok()?, d.next()?.parse().ok()?, d.next()?.parse().ok()?);
    civil_seconds(y, m, day, clock(time.trim())?)
}

/// A size as tools print one: "65536 bytes", "2 MiB", "1.50 GiB", or a number with a
/// suffix of powers of two ("64k", "4m", "1g": IOR's, fio's and IOzone's options).
pub fn size(text: &str) -> Option<u64> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let value: f64 = digits.parse().ok()?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" | "bytes" | "byte" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => return None,
    };
    let bytes = value * (1u64 << shift) as f64;
    (bytes.is_finite() && bytes < u64::MAX as f64).then(|| bytes.round() as u64)
}

/// A JSON document, with the lines of its fields for errors.
pub struct Json<'a> {
    text: &'a str,
    /// The parsed value.
    pub value: Value,
}

impl<'a> Json<'a> {
    /// Parses `text`, or says at which line it stops being JSON.
    pub fn parse(text: &'a str, what: &str) -> Result<Json<'a>, Bad> {
        match serde_json::from_str::<Value>(text) {
            Ok(value) => Ok(Json { text, value }),
            Err(e) => {
                let why = match e.classify() {
                    serde_json::error::Category::Eof => "the file ends early".to_string(),
                    _ => {
                        let s = e.to_string();
                        s.split(" at line").next().unwrap_or(&s).to_string()
                    }
                };
                Err(Bad::at(e.line().max(1), format!("{what} ({why})")))
            }
        }
    }

    /// The line of the `nth` (0-based) place the text names `key`, or of the first, or 1.
    pub fn line_of(&self, key: &str, nth: usize) -> usize {
        let quoted = format!("\"{key}\"");
        let mut at = self.text.match_indices(&quoted).map(|(i, _)| i);
        let first = at.next();
        let place = if nth == 0 { first } else { at.nth(nth - 1).or(first) };
        place.map_or(1, |i| self.text.as_bytes()[..i].iter().filter(|&&b| b == b'\n').count() + 1)
    }

    /// The line of every place the text names `key`, in order, found in one pass.
    pub fn lines_of(&self, key: &str) -> Vec<usize> {
        let quoted = format!("\"{key}\"");
        let (mut line, mut seen) = (1, 0);
        let bytes = self.text.as_bytes();
        self.text
            .match_indices(&quoted)
            .map(|(i, _)| {
                line += bytes[seen..i].iter().filter(|&&b| b == b'\n').count();
                seen = i;
                line
            })
            .collect()
    }

    /// `obj[key]` as a number (a number or a numeric string, as elbencho writes them); `nth`
    /// says which place naming the key is meant, for the line of an error.
    pub fn number(&self, obj: &Value, key: &str, nth: usize) -> Result<f64, Bad> {
        let found = obj.get(key);
        let v = match found {
            Some(Value::Number(n)) => n.as_f64(),
            Some(Value::String(s)) => s.trim().parse::<f64>().ok(),
            _ => None,
        };
        v.filter(|v| v.is_finite() && *v >= 0.0).ok_or_else(|| {
            let seen = found.map_or("nothing".to_string(), |v| format!("'{}'", shorten(&v.to_string())));
            Bad::at(self.line_of(key, nth), format!("a number for \"{key}\", found {seen}"))
        })
    }

    /// `obj[key]` as text (a string, or a number's text).
    pub fn text(&self, obj: &Value, key: &str, nth: usize) -> Result<String, Bad> {
        match obj.get(key) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(Value::Number(n)) => Ok(n.to_string()),
            other => {
                let seen = other.map_or("nothing".to_string(), |v| format!("'{}'", shorten(&v.to_string())));
                Err(Bad::at(self.line_of(key, nth), format!("text for \"{key}\", found {seen}")))
            }
        }
    }
}

/// A JSON value as a parameter's text: a string bare, anything else as JSON.
pub fn param_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The fields of one CSV line (RFC 4180 quotes), or none when a quote is left open.
pub fn csv_fields(line: &str) -> Option<Vec<String>> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', true) => quoted = false,
            ('"', false) if field.is_empty() => quoted = true,
            (',', false) => fields.push(std::mem::take(&mut field)),
            (c, _) => field.push(c),
        }
    }
    fields.push(field);
    (!quoted).then_some(fields)
}

/// The value after `key` in a command line's words (`-n 200`, `'-n' '200'`), quotes removed.
pub fn option_value(words: &[String], key: &str) -> Option<String> {
    words.iter().position(|w| w == key).and_then(|i| words.get(i + 1)).cloned()
}

/// A command line's words, shell quotes removed (mdtest quotes each one).
pub fn words(command: &str) -> Vec<String> {
    command.split_whitespace().map(|w| w.trim_matches(['\'', '"']).to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_read_as_utc() {
        assert_eq!(civil_seconds(1970, 1, 1, (0, 0, 0)), Some(0));
        assert_eq!(civil_seconds(2000, 3, 1, (0, 0, 0)), Some(951_868_800));
        assert_eq!(ctime("Tue Nov 24 23:04:07 2026"), civil_seconds(2026, 11, 24, (23, 4, 7)));
        assert_eq!(iso("2026-11-24T23:10:01"), civil_seconds(2026, 11, 24, (23, 10, 1)));
        assert_eq!(iso("2026-11-20 09:14:03"), civil_seconds(2026, 11, 20, (9, 14, 3)));
        assert_eq!(month_day_year("11/24/2026 23:04:15"), civil_seconds(2026, 11, 24, (23, 4, 15)));
        for bad in ["", "Tue Nov 99 23:04:07 2026", "Tue Foo 24 23:04:07 2026", "Tue Nov 24 23:04 x"] {
            assert_eq!(ctime(bad), None, "{bad}");
        }
        assert_eq!(iso("2026-13-01T00:00:00"), None);
        assert_eq!(month_day_year("1/1/99999999999999999999 1:1:1"), None);
    }

    #[test]
    fn sizes_are_powers_of_two() {
        assert_eq!(size("65536 bytes"), Some(65536));
        assert_eq!(size("2 MiB"), Some(2 << 20));
        assert_eq!(size("1.5 GiB"), Some(3 << 29));
        assert_eq!(size("64k"), Some(65536));
        assert_eq!(size("4m"), Some(4 << 20));
        assert_eq!(size("1e999"), None);
        assert_eq!(size("12 parsecs"), None);
        assert_eq!(size("99999999999999999999t"), None);
    }

    #[test]
    fn csv_fields_keep_quoted_commas() {
        assert_eq!(csv_fields("a,\"b,c\",\"d\"\"e\"").unwrap(), ["a", "b,c", "d\"e"]);
        assert_eq!(csv_fields("a,,"), Some(vec!["a".into(), String::new(), String::new()]));
        assert_eq!(csv_fields("a,\"open"), None);
    }

    #[test]
    fn json_errors_name_the_line_of_the_field() {
        let text = "{\n \"a\": 1,\n \"b\": \"x\"\n}";
        let doc = Json::parse(text, "JSON").unwrap();
        assert_eq!(doc.number(&doc.value, "a", 0), Ok(1.0));
        let bad = doc.number(&doc.value, "b", 0).unwrap_err();
        assert_eq!(bad.line, 3);
        assert!(bad.expected.contains("a number for \"b\""), "{}", bad.expected);
        assert_eq!(doc.number(&doc.value, "zz", 0).unwrap_err().line, 1);
        assert_eq!(Json::parse("[{\"a\": 1},\n\n{\"a\": 2}]", "x").unwrap().lines_of("a"), [1, 3]);
        let cut = Json::parse("{\n \"a\": [1,\n", "IOR's JSON").err().unwrap();
        assert!(cut.expected.contains("ends early"), "{}", cut.expected);
    }
}
