//! Small text helpers shared by the files, sessions and preview views: fitting
//! text into a number of terminal columns, human byte sizes (`1.5 KiB`), times
//! and countdowns measured against a `now` the caller passes (views never read
//! the clock, so snapshots are stable).

use chrono::{DateTime, FixedOffset, Utc};
use ratatui::text::Span;

/// The mark put where text was cut.
pub const ELLIPSIS: char = '…';

/// Columns `text` takes on screen.
pub fn columns(text: &str) -> usize {
    Span::raw(text).width()
}

fn char_columns(c: char) -> usize {
    let mut buf = [0u8; 4];
    columns(c.encode_utf8(&mut buf))
}

/// `text` cut to at most `width` columns, ending in `…` when it was cut.
pub fn truncate(text: &str, width: usize) -> String {
    if columns(text) <= width {
        return text.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = char_columns(c);
        if used + w > width - 1 {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push(ELLIPSIS);
    out
}

/// `text` cut or padded with spaces to exactly `width` columns, left-aligned.
pub fn pad(text: &str, width: usize) -> String {
    let mut out = truncate(text, width);
    let used = columns(&out);
    out.extend(std::iter::repeat_n(' ', width.saturating_sub(used)));
    out
}

/// `text` cut or padded with spaces to exactly `width` columns, right-aligned.
pub fn pad_left(text: &str, width: usize) -> String {
    let cut = truncate(text, width);
    let used = columns(&cut);
    let mut out: String = std::iter::repeat_n(' ', width.saturating_sub(used)).collect();
    out.push_str(&cut);
    out
}

/// An untrusted one-line name (a remote file name, an identifier, a label) as
/// safe text: line breaks, tabs and carriage returns (which could make
/// `evil\rreport.csv` look like `report.csv`) become `�`, then every escape
/// sequence and other control character goes ([`crate::tui::widgets::sanitize::plain`]).
pub fn one_line(raw: &str) -> String {
    crate::tui::widgets::sanitize::plain(&raw.replace(['\r', '\n', '\t'], "\u{fffd}"))
}

/// How a list's columns fit `total` columns: the first (flexible) column gets
/// what is left, at least `flex_min`; the `fixed` columns, most important first,
/// are kept while they fit (one space between columns). Returns the flexible
/// width and, per fixed column, whether it is shown.
pub fn layout(total: usize, flex_min: usize, fixed: &[usize]) -> (usize, Vec<bool>) {
    let mut used = flex_min;
    let shown: Vec<bool> = fixed
        .iter()
        .map(|&w| {
            let fits = used + 1 + w <= total;
            if fits {
                used += 1 + w;
            }
            fits
        })
        .collect();
    (
        total
            .saturating_sub(used - flex_min)
            .max(flex_min.min(total)),
        shown,
    )
}

/// A byte count in binary units (see [`crate::text::human_size`]).
pub use crate::text::human_size;

/// A time of day or date the way a listing shows it, in the offset `tz`:
/// `14:05` when it is on the same day as `now`, `Mar 01 14:05` in the same year,
/// `2023-03-01` otherwise.
pub fn short_time(t: DateTime<Utc>, now: DateTime<Utc>, tz: FixedOffset) -> String {
    let local = t.with_timezone(&tz);
    let today = now.with_timezone(&tz);
    if local.date_naive() == today.date_naive() {
        local.format("%H:%M").to_string()
    } else if local.format("%Y").to_string() == today.format("%Y").to_string() {
        local.format("%b %d %H:%M").to_string()
    } else {
        local.format("%Y-%m-%d").to_string()
    }
}

/// A span of seconds as `45 s`, `4 min 05 s`, `2 h 03 min`, `3 d 4 h`.
pub fn span(secs: i64) -> String {
    let secs = secs.max(0);
    match secs {
        0..60 => format!("{secs} s"),
        60..3600 => format!("{} min {:02} s", secs / 60, secs % 60),
        3600..86_400 => format!("{} h {:02} min", secs / 3600, secs % 3600 / 60),
        _ => format!("{} d {} h", secs / 86_400, secs % 86_400 / 3600),
    }
}

/// How long ago `t` was: `just now`, `4 min 05 s ago`, `in the future` when the
/// clocks disagree.
pub fn ago(t: DateTime<Utc>, now: DateTime<Utc>) -> String {
    let secs = (now - t).num_seconds();
    match secs {
        // A minute of slack: `now` is read when the list was drawn or refreshed,
        // and a pool's clock may run a little ahead of ours.
        i64::MIN..-60 => "in the future".to_string(),
        -60..5 => "just now".to_string(),
        _ => format!("{} ago", span(secs)),
    }
}

/// The idle countdown to `expires`: `ends in 4 min 05 s`, or `ended 12 s ago`
/// once it has passed.
pub fn countdown(expires: DateTime<Utc>, now: DateTime<Utc>) -> String {
    let secs = (expires - now).num_seconds();
    if secs > 0 {
        format!("ends in {}", span(secs))
    } else {
        format!("ended {} ago", span(-secs))
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn sizes_in_binary_units() {
        let cases = [
            (0, "0 B"),
            (1023, "1023 B"),
            (1024, "1.0 KiB"),
            (1536, "1.5 KiB"),
            (10_137, "9.9 KiB"),
            (10_230, "10 KiB"),
            (65_536, "64 KiB"),
            (10 * 1024 * 1024 + 200_000, "10 MiB"),
            (3 * 1024 * 1024 * 1024, "3.0 GiB"),
        ];
        for (bytes, text) in cases {
            assert_eq!(human_size(bytes), text, "{bytes}");
        }
    }

    #[test]
    fn truncate_and_pad_count_columns() {
        assert_eq!(truncate("report.csv", 20), "report.csv");
        assert_eq!(truncate("report.csv", 6), "repor…");
        assert_eq!(truncate("日本語の名前", 5), "日本…");
        assert_eq!(pad("ab", 4), "ab  ");
        assert_eq!(pad_left("ab", 4), "  ab");
        assert_eq!(pad("abcdef", 4), "abc…");
        assert_eq!(truncate("x", 0), "");
    }

    #[test]
    fn names_become_one_safe_line() {
        assert_eq!(one_line("evil\rreport.csv"), "evil\u{fffd}report.csv");
        assert_eq!(one_line("a\x1b[31mb\x1b]0;t\x07\n.txt"), "ab\u{fffd}.txt");
    }

    #[test]
    fn layout_keeps_important_columns_first() {
        assert_eq!(layout(80, 20, &[9, 12, 8]), (48, vec![true, true, true]));
        assert_eq!(layout(40, 20, &[9, 12, 8]), (21, vec![true, false, true]));
        assert_eq!(layout(10, 20, &[9]), (10, vec![false]));
    }

    #[test]
    fn times_and_countdowns() {
        let now = Utc.with_ymd_and_hms(2025, 3, 1, 14, 0, 0).unwrap();
        let utc = FixedOffset::east_opt(0).unwrap();
        let t = |d, h, m| Utc.with_ymd_and_hms(2025, 3, d, h, m, 0).unwrap();
        assert_eq!(short_time(t(1, 9, 5), now, utc), "09:05");
        assert_eq!(
            short_time(t(1, 9, 5), now, FixedOffset::east_opt(-10 * 3600).unwrap()),
            "Feb 28 23:05"
        );
        assert_eq!(
            short_time(Utc.with_ymd_and_hms(2023, 3, 1, 0, 0, 0).unwrap(), now, utc),
            "2023-03-01"
        );
        assert_eq!(ago(t(1, 13, 55), now), "5 min 00 s ago");
        assert_eq!(ago(now, now), "just now");
        assert_eq!(
            countdown(now + chrono::Duration::seconds(245), now),
            "ends in 4 min 05 s"
        );
        assert_eq!(
            countdown(now - chrono::Duration::seconds(12), now),
            "ended 12 s ago"
        );
        assert_eq!(span(2 * 3600 + 180), "2 h 03 min");
        assert_eq!(span(90_000), "1 d 1 h");
    }
}
