//! Text helpers that know no terminal library, shared by the command line and
//! the notebook: the sanitizer every piece of session text passes before it is
//! shown ([`sanitize`]), and sizes as a person reads them.

pub mod names;
pub mod sanitize;

/// A byte count in binary units: `812 B`, `1.5 KiB`, `64 KiB`, `10.2 MiB`,
/// `3.0 GiB` (one decimal below 10, none from 10 up).
#[allow(clippy::cast_precision_loss)] // a display figure
pub fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if value < 10.0 {
        let shown = format!("{value:.1}");
        // 9.96 rounds to "10.0": show it as the next whole number instead.
        if shown == "10.0" {
            return format!("10 {}", UNITS[unit]);
        }
        format!("{shown} {}", UNITS[unit])
    } else {
        format!("{value:.0} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_binary_units() {
        assert_eq!(human_size(812), "812 B");
        assert_eq!(human_size(1536), "1.5 KiB");
        assert_eq!(human_size(10_230), "10 KiB");
        assert_eq!(human_size(3 * 1024 * 1024 * 1024), "3.0 GiB");
    }
}
