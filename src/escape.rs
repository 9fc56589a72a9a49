//! Text from users or the machine (labels, host names, target paths, notes, error messages)
//! made inert for where it goes: a terminal, a spreadsheet, a Markdown renderer. iosurvey
//! runs as root on shared machines, so a directory name or a label is someone else's input.
//! Used at every boundary where such text leaves: the report's exporters, the matrix's CSV,
//! and each line the binary, the janitor and a broken team say on stderr. The rules are
//! docs/safety.md's; HTML has its own escaping in the report room.

use std::borrow::Cow;
use std::fmt::Write;

/// `text` as it may be printed on a terminal, on one line: every control character shown as
/// its escape (`\n`, `\t`, `\r`, `\x1b`, `\x7f`, `\u{9b}`), all else as it is. Controls are
/// Unicode's (`char::is_control`): C0, where ESC starts the sequences that clear a screen or
/// set a title and a newline breaks a one-line error; DEL; and C1, which some terminals obey
/// as one-character ESC sequences (U+009B is CSI).
///
/// Backslashes are left as they are, so the function is idempotent: output already made
/// visible (a text report inside an error line) is not escaped twice.
pub fn visible(text: &str) -> Cow<'_, str> {
    if !text.chars().any(char::is_control) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_ascii_control() => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// The controls serde_json leaves raw in a string: DEL and C1.
fn raw_in_json(c: char) -> bool {
    c == '\x7f' || ('\u{80}'..='\u{9f}').contains(&c)
}

/// JSON text with no raw control character: serde_json escapes C0 controls inside strings,
/// but passes DEL and the C1 controls through as they are; here they become `\u007f` and
/// `\u0080`..`\u009f`, the same data to any JSON reader. Outside strings JSON has only
/// ASCII punctuation and blanks, so every such character is inside a string.
pub fn json(text: String) -> String {
    if !text.chars().any(raw_in_json) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if raw_in_json(c) {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}

/// What a spreadsheet reads as the start of a formula (OWASP's list for CSV injection).
const FORMULA_STARTS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// Whether a field would be taken for a formula: it begins like one and is not data. A
/// number (a negative rate, "-0.5") is data and stays a number; so is a lone "-", iosurvey's
/// mark for "none", which no spreadsheet evaluates.
fn reads_as_formula(text: &str) -> bool {
    text.starts_with(FORMULA_STARTS) && text != "-" && text.parse::<f64>().is_err()
}

/// One CSV field: its control characters made visible (a CSV is read on terminals too, and a
/// line break or ESC in a host name is no data anyone wants in a cell; the store and the JSON
/// keep the text exact), quoted when it holds a comma or quote (RFC 4180), and, when a
/// spreadsheet would take it for a formula, prefixed with a single quote and quoted (OWASP),
/// so that it opens as the text it is. The formula test is on the text as given, so a TAB or
/// CR first is caught before it is made visible.
pub fn csv_field(text: &str) -> Cow<'_, str> {
    let formula = reads_as_formula(text);
    let shown = visible(text);
    if !formula && !shown.contains([',', '"']) {
        return shown;
    }
    let quote = if formula { "'" } else { "" };
    Cow::Owned(format!("\"{quote}{}\"", shown.replace('"', "\"\"")))
}

/// What Markdown (CommonMark, GitHub's tables) would read as markup or raw HTML: tags and
/// entities, links and images, code, emphasis, headings, table cells.
const MARKDOWN_SPECIALS: [char; 12] = ['\\', '`', '*', '_', '[', ']', '<', '>', '&', '#', '|', '~'];

/// `text` as Markdown that renders as that text: control characters made visible (a line
/// break would end a table row), and each character Markdown would read as markup escaped
/// with a backslash, so `<script>`, `<img onerror=...>` and `[a](b)` come out as written.
pub fn markdown(text: &str) -> String {
    let shown = visible(text);
    let mut out = String::with_capacity(shown.len() + 8);
    for c in shown.chars() {
        if MARKDOWN_SPECIALS.contains(&c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visible_shows_every_control_and_leaves_the_rest() {
        assert_eq!(visible("/scratch/ok dir/é"), "/scratch/ok dir/é");
        assert!(matches!(visible("plain"), Cow::Borrowed(_)), "nothing to escape, nothing copied");
        assert_eq!(visible("a\x1b]0;owned\x07b"), "a\\x1b]0;owned\\x07b");
        assert_eq!(visible("\x1b[2J"), "\\x1b[2J");
        assert_eq!(visible("one\ntwo\r\tthree"), "one\\ntwo\\r\\tthree");
        assert_eq!(visible("del\x7f nul\0"), "del\\x7f nul\\x00");
        assert_eq!(visible("csi\u{9b}2J \u{80}\u{9f}"), "csi\\u{9b}2J \\u{80}\\u{9f}");
        // Just outside the control ranges: printable.
        assert_eq!(visible("\u{a0}~"), "\u{a0}~");
    }

    #[test]
    fn visible_is_idempotent_so_nested_output_is_escaped_once() {
        for text in ["a\x1bb\nc\u{9b}", "back\\slash", "\\x1b"] {
            assert_eq!(visible(&visible(text)), visible(text));
        }
        assert!(!visible("x\x1b\n\u{85}").chars().any(char::is_control));
    }

    #[test]
    fn csv_fields_that_start_a_formula_open_as_text() {
        for bad in ["=1+1", "+cmd", "-2+3+cmd|' /C calc'!A0", "@SUM(A1)", "\tx", "\r=x", "=HYPERLINK(\"http://x\")"] {
            let field = csv_field(bad);
            assert!(field.starts_with("\"'"), "{bad:?} -> {field}");
            assert!(field.ends_with('"'), "{bad:?} -> {field}");
        }
        assert_eq!(csv_field("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
    }

    #[test]
    fn csv_numbers_and_plain_text_stay_as_they_are() {
        for data in ["-1.5", "-3", "+4", "-0", "1e-3", "-", "node1", "/scratch/x", "write=1 MiB/s", ""] {
            assert_eq!(csv_field(data), data);
        }
        assert_eq!(csv_field("a, \"b\""), "\"a, \"\"b\"\"\"");
        assert_eq!(csv_field("two\nlines\x1b"), "two\\nlines\\x1b");
        assert_eq!(csv_field("\tx"), "\"'\\tx\"");
    }

    #[test]
    fn json_keeps_the_data_and_no_raw_control() {
        let text = serde_json::to_string(&"esc\x1b csi\u{9b} del\x7f é").unwrap();
        assert!(text.contains("\u{9b}"), "serde_json passes C1 through: {text:?}");
        let safe = json(text);
        assert_eq!(safe, r#""esc\u001b csi\u009b del\u007f é""#);
        assert_eq!(serde_json::from_str::<String>(&safe).unwrap(), "esc\x1b csi\u{9b} del\x7f é");
    }

    #[test]
    fn markdown_keeps_html_links_and_markup_as_text() {
        assert_eq!(markdown("<script>alert(1)</script>"), "\\<script\\>alert(1)\\</script\\>");
        assert_eq!(markdown("<img src=x onerror=alert(1)>"), "\\<img src=x onerror=alert(1)\\>");
        assert_eq!(markdown("![x](http://evil/t.png)"), "!\\[x\\](http://evil/t.png)");
        assert_eq!(markdown("[click](javascript:alert(1))"), "\\[click\\](javascript:alert(1))");
        assert_eq!(
            markdown("a|b `c` *d* _e_ &lt; #f ~g~ \\"),
            "a\\|b \\`c\\` \\*d\\* \\_e\\_ \\&lt; \\#f \\~g\\~ \\\\"
        );
        assert_eq!(markdown("row\nbreak\x1b"), "row\\\\nbreak\\\\x1b");
        assert_eq!(markdown("file-per-task 1 MiB, 4 tasks"), "file-per-task 1 MiB, 4 tasks");
    }
}
