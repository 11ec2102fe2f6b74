//! Helpers shared by the benchmarks: percentiles and how figures are printed.

use std::time::Duration;

/// The `p` percentile (0.0 to 1.0) of `samples`, which it sorts: the sample
/// nearest to that rank.
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)] // an index in 0..len, rounded from a fraction of len - 1
pub fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let idx = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[idx]
}

/// A duration in milliseconds with two decimals: `4.67 ms`.
pub fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}
