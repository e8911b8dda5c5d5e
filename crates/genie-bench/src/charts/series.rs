//! The data of a chart: its series ([`Series`]) and the charts' colours ([`PALETTE`]), which the
//! axes are fitted to and the line chart draws.

use plotters::style::RGBColor;

/// One (x, y) series of a chart.
pub struct Series {
    /// The legend's text.
    pub label: String,
    /// Data values, drawn in this order.
    pub points: Vec<(f64, f64)>,
    /// The line's and the points' colour.
    pub color: RGBColor,
    /// A dashed line (a reference rather than a measurement).
    pub dashed: bool,
}

/// Okabe-Ito colours: distinguishable with the common colour-vision deficiencies.
pub const PALETTE: [RGBColor; 7] = [
    RGBColor(0, 114, 178),
    RGBColor(213, 94, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
    RGBColor(0, 0, 0),
];
