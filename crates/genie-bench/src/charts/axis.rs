//! The charts' axes: data values mapped to chart coordinates (log10 of the value on a logarithmic
//! axis) with chosen ticks ([`Axis`]), and the range plotters draws them on ([`Ticked`]).

use super::series::Series;
use anyhow::{bail, Result};
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use std::ops::Range;

/// An axis: data values map to chart coordinates (log10 of the value on a logarithmic axis), with
/// labelled ticks at chosen values.
pub struct Axis {
    /// The axis' description.
    pub label: String,
    /// Logarithmic: chart coordinates are log10 of the values.
    pub log: bool,
    /// The low end, in chart coordinates (as are the others).
    pub lo: f64,
    /// The high end.
    pub hi: f64,
    /// Labelled ticks.
    pub ticks: Vec<f64>,
    /// Unlabelled grid lines.
    pub light: Vec<f64>,
    /// A tick's label from its data value.
    pub format: fn(f64) -> String,
}

impl Axis {
    /// The chart coordinate of the data value `v`.
    pub fn coord(&self, v: f64) -> f64 {
        if self.log {
            v.log10()
        } else {
            v
        }
    }

    /// The data value at the chart coordinate `c`.
    pub fn value(&self, c: f64) -> f64 {
        if self.log {
            10f64.powf(c)
        } else {
            c
        }
    }

    /// The axis' range and ticks for plotters.
    pub fn ranged(&self) -> Ticked {
        Ticked {
            range: self.lo..self.hi,
            bold: self.ticks.clone(),
            light: self.light.clone(),
        }
    }

    /// A linear axis from `lo` to `hi`, ticks at the multiples of `step` between them.
    pub fn linear(
        label: &str,
        lo: f64,
        hi: f64,
        step: f64,
        format: fn(f64) -> String,
    ) -> Result<Self> {
        if !(lo.is_finite() && hi.is_finite() && lo < hi && step > 0.0) {
            bail!("`{label}`: cannot span {lo} to {hi} in steps of {step}");
        }
        let first = (lo / step).ceil() as i64;
        let last = (hi / step).floor() as i64;
        Ok(Self {
            label: label.into(),
            log: false,
            lo,
            hi,
            ticks: (first..=last).map(|i| i as f64 * step).collect(),
            light: Vec::new(),
            format,
        })
    }

    /// A logarithmic axis spanning the data, ticks at 1, 2 and 5 times powers of ten.
    pub fn log(
        label: &str,
        series: &[Series],
        pick: fn(&(f64, f64)) -> f64,
        format: fn(f64) -> String,
    ) -> Result<Self> {
        let (min, max) = extent(series, pick)?;
        Self::log_span(label, min, max, 1.1, format)
    }

    /// A logarithmic axis from `min` to at least `max * headroom` (both positive), ticks at 1, 2
    /// and 5 times powers of ten.
    pub fn log_span(
        label: &str,
        min: f64,
        max: f64,
        headroom: f64,
        format: fn(f64) -> String,
    ) -> Result<Self> {
        if !(min.is_finite() && max.is_finite() && min > 0.0 && min <= max) {
            bail!("`{label}`: no positive values to draw on a log axis");
        }
        let steps: Vec<f64> = (min.log10().floor() as i32 - 1
            ..=(max * headroom).log10().ceil() as i32 + 1)
            .flat_map(|e| [1.0, 2.0, 5.0].map(|m| m * 10f64.powi(e)))
            .collect();
        let lo = steps
            .iter()
            .copied()
            .filter(|&s| s <= min / 1.1)
            .fold(f64::NAN, f64::max);
        let hi = steps
            .iter()
            .copied()
            .find(|&s| s >= max * headroom)
            .unwrap_or(max * headroom * 2.0);
        let ticks = steps.iter().copied().filter(|&s| s >= lo && s <= hi);
        let light = (lo.log10().floor() as i32..=hi.log10().ceil() as i32)
            .flat_map(|e| (1..10).map(move |m| f64::from(m) * 10f64.powi(e)))
            .filter(|&s| s >= lo && s <= hi);
        Ok(Self {
            label: label.into(),
            log: true,
            lo: lo.log10(),
            hi: hi.log10(),
            ticks: ticks.map(f64::log10).collect(),
            light: light.map(f64::log10).collect(),
            format,
        })
    }

    /// A logarithmic axis with a tick at each distinct data value (batch sizes, data sizes).
    pub fn log_at_data(
        label: &str,
        series: &[Series],
        pick: fn(&(f64, f64)) -> f64,
        format: fn(f64) -> String,
    ) -> Result<Self> {
        let (min, max) = extent(series, pick)?;
        let mut ticks: Vec<f64> = series
            .iter()
            .flat_map(|s| s.points.iter().map(pick))
            .map(f64::log10)
            .collect();
        ticks.sort_by(f64::total_cmp);
        ticks.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
        let pad = ((max / min).log10() * 0.06).max(0.05);
        Ok(Self {
            label: label.into(),
            log: true,
            lo: min.log10() - pad,
            hi: max.log10() + pad,
            ticks,
            light: Vec::new(),
            format,
        })
    }
}

/// A linear f64 axis whose grid lines and labels are at given points.
pub struct Ticked {
    /// The coordinates at the two ends.
    pub range: Range<f64>,
    /// Labelled grid lines.
    pub bold: Vec<f64>,
    /// Unlabelled, fainter grid lines.
    pub light: Vec<f64>,
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let span = self.range.end - self.range.start;
        if span == 0.0 {
            return (limit.0 + limit.1) / 2;
        }
        let t = (value - self.range.start) / span;
        limit.0 + (f64::from(limit.1 - limit.0) * t).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.light.clone()
        } else {
            self.bold.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.range.clone()
    }
}

/// The smallest and largest value `pick` takes over the series' points; all must be positive.
pub fn extent(series: &[Series], pick: fn(&(f64, f64)) -> f64) -> Result<(f64, f64)> {
    let mut min = f64::INFINITY;
    let mut max = f64::NEG_INFINITY;
    for s in series {
        for p in &s.points {
            let v = pick(p);
            if !(v.is_finite() && v > 0.0) {
                bail!(
                    "series `{}`: value {v} cannot be drawn on a log axis",
                    s.label
                );
            }
            min = min.min(v);
            max = max.max(v);
        }
    }
    if min > max {
        bail!("no data points to draw");
    }
    Ok((min, max))
}
