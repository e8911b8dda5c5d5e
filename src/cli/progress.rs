//! Progress bars on standard error (indicatif). They are hidden when standard error is not a
//! terminal, and on request (`--quiet`).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress bar over `len` bytes of input (a spinner when the length is unknown), with `prefix`
/// naming the work; the message shows the count of lines or queries done.
pub fn bytes_bar(prefix: &'static str, len: Option<u64>, quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let (bar, template) = match len {
        Some(len) => (
            ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr()),
            "{prefix} [{elapsed_precise}] [{wide_bar}] {percent}% {msg} (eta {eta})",
        ),
        None => (
            ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr()),
            "{spinner} {prefix} [{elapsed_precise}] {msg}",
        ),
    };
    let style = ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    bar.set_style(style);
    bar.set_prefix(prefix);
    bar
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quiet_is_hidden() {
        assert!(bytes_bar("x", Some(10), true).is_hidden());
    }
}
