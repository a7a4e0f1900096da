//! Progress display for long runs: a bar on a terminal, nothing when output is piped.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A bar counting `unit`s towards `total` (or a spinner when the total is unknown).
pub fn bar(total: Option<u64>, unit: &str) -> ProgressBar {
    let pb = match total {
        Some(t) => ProgressBar::new(t),
        None => ProgressBar::new_spinner(),
    };
    pb.set_draw_target(ProgressDrawTarget::stderr_with_hz(4));
    let template = match total {
        Some(_) => format!("{{prefix}} {{elapsed_precise}} [{{bar:40}}] {{human_pos}}/{{human_len}} {unit} ({{per_sec}}, eta {{eta}})"),
        None => format!("{{prefix}} {{elapsed_precise}} {{spinner}} {{human_pos}} {unit} ({{per_sec}})"),
    };
    if let Ok(style) = ProgressStyle::with_template(&template) {
        pb.set_style(style.progress_chars("=> "));
    }
    pb
}

/// A bar over `total` bytes of input.
pub fn bytes_bar(total: u64) -> ProgressBar {
    let pb = ProgressBar::new(total);
    pb.set_draw_target(ProgressDrawTarget::stderr_with_hz(4));
    if let Ok(style) = ProgressStyle::with_template(
        "{prefix} {elapsed_precise} [{bar:40}] {binary_bytes}/{binary_total_bytes} ({binary_bytes_per_sec}, eta {eta})",
    ) {
        pb.set_style(style.progress_chars("=> "));
    }
    pb
}
