//! The line chart of the benchmark results ([`LineChart`]): its series ([`Series`]) in the
//! charts' colours ([`PALETTE`]), drawn with points, marks and a legend.

use super::axis::Axis;
use super::canvas::{canvas, drawing, font, legend, styled_mesh};
pub use super::series::{Series, PALETTE};
use anyhow::Result;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use std::path::Path;

/// A chart of lines with points.
pub struct LineChart {
    /// The caption above the chart.
    pub title: String,
    /// The horizontal axis.
    pub x: Axis,
    /// The vertical axis.
    pub y: Axis,
    /// The lines, in legend order.
    pub series: Vec<Series>,
    /// Dashed vertical lines across the chart at these x values, with their legend labels.
    pub marks: Vec<(f64, String)>,
    /// Where the legend goes.
    pub legend: SeriesLabelPosition,
    /// One or two lines under the chart.
    pub footer: String,
}

impl LineChart {
    /// Draws the chart as a PNG at `path`.
    pub fn draw(&self, path: &Path) -> Result<()> {
        let (root, main) = canvas(path, &self.footer)?;
        let mut chart = ChartBuilder::on(&main)
            .caption(&self.title, font(24.0))
            .margin(16)
            .x_label_area_size(52)
            .y_label_area_size(84)
            .build_cartesian_2d(self.x.ranged(), self.y.ranged())
            .map_err(drawing(path))?;
        let x_format = |c: &f64| (self.x.format)(self.x.value(*c));
        let y_format = |c: &f64| (self.y.format)(self.y.value(*c));
        styled_mesh(&mut chart)
            .x_desc(&self.x.label)
            .y_desc(&self.y.label)
            .x_label_formatter(&x_format)
            .y_label_formatter(&y_format)
            .draw()
            .map_err(drawing(path))?;
        let grey = RGBColor(90, 90, 90).stroke_width(2);
        for (x, label) in &self.marks {
            let x = self.x.coord(*x);
            chart
                .draw_series(DashedLineSeries::new(
                    [(x, self.y.lo), (x, self.y.hi)],
                    8,
                    6,
                    grey,
                ))
                .map_err(drawing(path))?
                .label(label)
                .legend(move |(x, y)| {
                    DashedPathElement::new(vec![(x, y), (x + 28, y)], 6, 4, grey)
                });
        }
        for s in &self.series {
            let points: Vec<(f64, f64)> = s
                .points
                .iter()
                .map(|&(x, y)| (self.x.coord(x), self.y.coord(y)))
                .collect();
            let color = s.color;
            let style = color.stroke_width(3);
            if s.dashed {
                chart
                    .draw_series(DashedLineSeries::new(points.clone(), 10, 6, style))
                    .map_err(drawing(path))?;
            } else {
                chart
                    .draw_series(std::iter::once(PathElement::new(points.clone(), style)))
                    .map_err(drawing(path))?;
            }
            // no marker at a line's end cut at the chart's edge
            let inside = |p: &&(f64, f64)| p.0 > self.x.lo && p.0 < self.x.hi;
            let legend = chart
                .draw_series(
                    points
                        .iter()
                        .filter(inside)
                        .map(|&p| Circle::new(p, 5, color.filled())),
                )
                .map_err(drawing(path))?
                .label(&s.label);
            if s.dashed {
                legend.legend(move |(x, y)| {
                    DashedPathElement::new(vec![(x, y), (x + 28, y)], 8, 4, style)
                });
            } else {
                legend.legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 28, y)], style));
            }
        }
        legend(&mut chart, self.legend.clone(), path)?;
        root.present().map_err(drawing(path))?;
        Ok(())
    }
}
