//! How many hash functions `m` a tolerance needs (paper section IV-B): the bound of Theorem 4.1,
//! `m = 2 ln(3 / delta) / epsilon^2`, and the tighter, data-independent search of Eqn. 9 that
//! evaluates `Pr[|c/m - s| <= epsilon]` for `c ~ Binomial(m, s)` exactly (Fig. 8).
//!
//! Eqn. 9's probability is a saw-tooth in `m` (the number of admissible counts jumps by one every
//! few `m`), so "the smallest `m` that reaches `1 - delta`" can fail again at `m + 1`. Two rules are
//! given: [`first_functions`], the smallest `m` at which the bound holds, and
//! [`required_functions`], the smallest `m` from which it holds for every larger `m` (checked up to
//! the two-sided Hoeffding bound, beyond which it always holds). [`binomial_functions`] takes the
//! latter's maximum over the similarity `s`, which lies at `s = 0.5` as in Fig. 8.

use crate::error::{LshError, Result};

/// The tolerance `epsilon` of the defaults (the paper's experiments, section VI).
pub const DEFAULT_EPSILON: f64 = 0.06;
/// The failure probability `delta` of the defaults (the paper's experiments, section VI).
pub const DEFAULT_DELTA: f64 = 0.06;

fn check(epsilon: f64, delta: f64) -> Result<()> {
    let open_unit = |x: f64| x > 0.0 && x < 1.0;
    if !open_unit(epsilon) || !open_unit(delta) {
        return Err(LshError::InvalidParameter(format!(
            "epsilon and delta must lie in (0, 1), got epsilon = {epsilon}, delta = {delta}"
        )));
    }
    Ok(())
}

/// Theorem 4.1: `m = ceil(2 ln(3 / delta) / epsilon^2)` functions give
/// `|MC/m - sim| < epsilon + 1/D` with probability at least `1 - delta`.
///
/// ```
/// assert_eq!(genie_lsh::params::theorem_4_1(0.06, 0.06).unwrap(), 2174);
/// ```
pub fn theorem_4_1(epsilon: f64, delta: f64) -> Result<u32> {
    check(epsilon, delta)?;
    Ok((2.0 * (3.0 / delta).ln() / (epsilon * epsilon)).ceil() as u32)
}

/// The two-sided Hoeffding bound `ceil(ln(2 / delta) / (2 epsilon^2))`: from there on, Eqn. 9's
/// bound holds for every `m` and every `s`.
pub fn hoeffding(epsilon: f64, delta: f64) -> Result<u32> {
    check(epsilon, delta)?;
    Ok(((2.0 / delta).ln() / (2.0 * epsilon * epsilon)).ceil() as u32)
}

/// Eqn. 9: `Pr[|c/m - s| <= epsilon]` for `c ~ Binomial(m, s)`, summed exactly in log space.
pub fn eqn9_probability(m: u32, s: f64, epsilon: f64) -> f64 {
    if m == 0 {
        return 0.0;
    }
    let mf = f64::from(m);
    let inside = |c: u32| (f64::from(c) - s * mf).abs() <= epsilon * mf * (1.0 + 1e-12);
    if s <= 0.0 || s >= 1.0 {
        let c = if s >= 1.0 { m } else { 0 };
        return if inside(c) { 1.0 } else { 0.0 };
    }
    let (ls, lq) = (s.ln(), (1.0 - s).ln());
    let mut log_pmf = mf * lq;
    let mut total = 0.0;
    for c in 0..=m {
        if inside(c) {
            total += log_pmf.exp();
        }
        if c < m {
            log_pmf += (f64::from(m - c) / f64::from(c + 1)).ln() + ls - lq;
        }
    }
    total.min(1.0)
}

/// The smallest `m` with `Pr[|c/m - s| <= epsilon] >= 1 - delta` (Eqn. 9).
pub fn first_functions(s: f64, epsilon: f64, delta: f64) -> Result<u32> {
    let bound = hoeffding(epsilon, delta)?;
    Ok((1..=bound)
        .find(|&m| eqn9_probability(m, s, epsilon) >= 1.0 - delta)
        .unwrap_or(bound))
}

/// The smallest `m0` such that Eqn. 9's bound holds for every `m >= m0`.
pub fn required_functions(s: f64, epsilon: f64, delta: f64) -> Result<u32> {
    let bound = hoeffding(epsilon, delta)?;
    Ok((1..bound)
        .rev()
        .find(|&m| eqn9_probability(m, s, epsilon) < 1.0 - delta)
        .map_or(1, |m| m + 1))
}

/// The number of functions that bounds the error for every similarity: the maximum of
/// [`required_functions`] over `s = 0.01, 0.02, ..., 0.99`, with the `s` where it is reached.
pub fn binomial_functions(epsilon: f64, delta: f64) -> Result<(u32, f64)> {
    check(epsilon, delta)?;
    let mut best = (0, 0.0);
    for i in 1..100 {
        let s = f64::from(i) / 100.0;
        let m = required_functions(s, epsilon, delta)?;
        if m > best.0 {
            best = (m, s);
        }
    }
    Ok(best)
}

/// The default number of functions: [`binomial_functions`] for [`DEFAULT_EPSILON`] and
/// [`DEFAULT_DELTA`].
pub fn default_functions() -> u32 {
    binomial_functions(DEFAULT_EPSILON, DEFAULT_DELTA).map_or(258, |(m, _)| m)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn theorem_bound() {
        // the paper: m = 2 ln(3/delta) / epsilon^2 = 2174 for epsilon = delta = 0.06
        assert_eq!(theorem_4_1(0.06, 0.06).unwrap(), 2174);
        assert_eq!(hoeffding(0.06, 0.06).unwrap(), 488);
        assert!(theorem_4_1(0.0, 0.1).is_err());
        assert!(theorem_4_1(0.1, 1.0).is_err());
        assert!(binomial_functions(f64::NAN, 0.1).is_err());
    }

    #[test]
    fn probabilities() {
        assert!((eqn9_probability(1, 0.5, 0.5) - 1.0).abs() < 1e-12);
        // m = 2, s = 0.5, eps = 0.1: only c = 1 is inside, probability 1/2
        assert!((eqn9_probability(2, 0.5, 0.1) - 0.5).abs() < 1e-12);
        assert_eq!(eqn9_probability(10, 1.0, 0.01), 1.0);
        assert_eq!(eqn9_probability(0, 0.5, 0.1), 0.0);
        // large m does not underflow
        let p = eqn9_probability(5000, 0.99, 0.06);
        assert!(p > 0.999 && p <= 1.0);
        // the rules agree with the probabilities they are built on
        let (s, e, d) = (0.3, 0.06, 0.06);
        let first = first_functions(s, e, d).unwrap();
        let req = required_functions(s, e, d).unwrap();
        assert!(first <= req);
        assert!(eqn9_probability(first, s, e) >= 1.0 - d);
        assert!(eqn9_probability(first - 1, s, e) < 1.0 - d);
        assert!(eqn9_probability(req - 1, s, e) < 1.0 - d);
        assert!((req..600).all(|m| eqn9_probability(m, s, e) >= 1.0 - d));
    }
}
