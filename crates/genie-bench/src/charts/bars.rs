//! The bar charts of the benchmark results, beside the line chart of [`line`](super::line):
//! a bar per category with a target line ([`BarChart`]), and two bars per category on a
//! logarithmic axis with their ratio ([`PairChart`]). [`Chart`] is any of the three.

use super::axis::{Axis, Ticked};
use super::canvas::{canvas, drawing, font, legend, styled_mesh};
use super::format::{plain, thousands};
use super::line::{LineChart, PALETTE};
use anyhow::{bail, Result};
use plotters::prelude::*;
use plotters_backend::text_anchor::{HPos, Pos, VPos};
use std::path::Path;

/// The device of the runs whose CSVs have no device column (scale and suite): one H200 each (the
/// global-kernel scale run on a two-GPU host, with one GPU).
pub const RUNS_DEVICE: &str = "NVIDIA H200";

/// A chart of any of the kinds drawn.
pub enum Chart {
    /// Lines with points.
    Line(LineChart),
    /// A bar per category.
    Bar(BarChart),
    /// Two bars per category.
    Pair(PairChart),
}

impl Chart {
    /// Draws the chart into the PNG file `path`.
    pub fn draw(&self, path: &Path) -> Result<()> {
        match self {
            Self::Line(chart) => chart.draw(path),
            Self::Bar(chart) => chart.draw(path),
            Self::Pair(chart) => chart.draw(path),
        }
    }
}

/// A bar per category, with a horizontal target line.
pub struct BarChart {
    /// The title above the chart.
    pub title: String,
    /// The y axis's label.
    pub y_label: String,
    /// (category, value) per bar, left to right.
    pub bars: Vec<(String, f64)>,
    /// The bars' legend entry.
    pub bar_label: String,
    /// The target line: its value and its legend entry.
    pub target: (f64, String),
    /// The footer's text.
    pub footer: String,
}

impl BarChart {
    /// Draws the chart into the PNG file `path`.
    pub fn draw(&self, path: &Path) -> Result<()> {
        if self.bars.is_empty() {
            bail!("{}: no bars to draw", path.display());
        }
        let (root, main) = canvas(path, &self.footer)?;
        let max = self.bars.iter().map(|b| b.1).fold(self.target.0, f64::max);
        let step = nice_step(max * 1.15 / 8.0);
        let top = (max * 1.15 / step).ceil() * step;
        let n = self.bars.len();
        let ticks: Vec<f64> = (0..=(top / step).round() as usize)
            .map(|i| i as f64 * step)
            .collect();
        let x_range = Ticked {
            range: -0.5..n as f64 - 0.5,
            bold: (0..n).map(|i| i as f64).collect(),
            light: Vec::new(),
        };
        let y_range = Ticked {
            range: 0.0..top,
            bold: ticks,
            light: Vec::new(),
        };
        let mut chart = ChartBuilder::on(&main)
            .caption(&self.title, font(24.0))
            .margin(16)
            .x_label_area_size(44)
            .y_label_area_size(84)
            .build_cartesian_2d(x_range, y_range)
            .map_err(drawing(path))?;
        let names: Vec<&str> = self.bars.iter().map(|b| b.0.as_str()).collect();
        let x_format = |c: &f64| {
            let i = c.round();
            if i >= 0.0 && (i as usize) < names.len() {
                names[i as usize].to_string()
            } else {
                String::new()
            }
        };
        let y_format = |c: &f64| plain(*c);
        chart
            .configure_mesh()
            .disable_x_mesh()
            .y_desc(&self.y_label)
            .x_label_formatter(&x_format)
            .y_label_formatter(&y_format)
            .label_style(font(15.0))
            .axis_desc_style(font(18.0))
            .bold_line_style(RGBColor(200, 200, 200))
            .draw()
            .map_err(drawing(path))?;
        // The target line first, so that the bars and their values lie over it.
        let target_color = PALETTE[1];
        chart
            .draw_series(DashedLineSeries::new(
                [(-0.5, self.target.0), (n as f64 - 0.5, self.target.0)],
                10,
                6,
                target_color.stroke_width(3),
            ))
            .map_err(drawing(path))?;
        let color = PALETTE[0];
        chart
            .draw_series(self.bars.iter().enumerate().map(|(i, (_, v))| {
                let x = i as f64;
                Rectangle::new([(x - 0.32, 0.0), (x + 0.32, *v)], color.filled())
            }))
            .map_err(drawing(path))?
            .label(&self.bar_label)
            .legend(move |(x, y)| Rectangle::new([(x, y - 7), (x + 22, y + 7)], color.filled()));
        // The target's legend entry, after the bars'.
        chart
            .draw_series(std::iter::empty::<PathElement<(f64, f64)>>())
            .map_err(drawing(path))?
            .label(&self.target.1)
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 22, y)], target_color.stroke_width(3))
            });
        // The value inside the top of each bar.
        let inside = font(16.0)
            .color(&WHITE)
            .pos(Pos::new(HPos::Center, VPos::Top));
        chart
            .draw_series(self.bars.iter().enumerate().map(|(i, (_, v))| {
                Text::new(
                    format!("{v:.0}x"),
                    (i as f64, *v - top * 0.012),
                    inside.clone(),
                )
            }))
            .map_err(drawing(path))?;
        legend(&mut chart, SeriesLabelPosition::UpperRight, path)?;
        root.present().map_err(drawing(path))?;
        Ok(())
    }
}

/// One group of a [`PairChart`]: genie's value and the peer's.
#[derive(Clone)]
pub struct Pair {
    /// The category, written under the group.
    pub name: String,
    /// The first and the second bar's value.
    pub values: [f64; 2],
    /// A note under each bar (its memory per query), where there is one.
    pub notes: [Option<String>; 2],
}

/// Two bars per category on a logarithmic axis (genie's and a peer's), each with its value above
/// it and the ratio of the two above the group.
pub struct PairChart {
    /// The title above the chart.
    pub title: String,
    /// The logarithmic y axis.
    pub y: Axis,
    /// The groups, left to right.
    pub groups: Vec<Pair>,
    /// The legend's label of the first and of the second bar of each group.
    pub labels: [String; 2],
    /// The footer's text.
    pub footer: String,
}

impl PairChart {
    /// Draws the chart into the PNG file `path`.
    pub fn draw(&self, path: &Path) -> Result<()> {
        if self.groups.is_empty() {
            bail!("{}: no bars to draw", path.display());
        }
        let (root, main) = canvas(path, &self.footer)?;
        let main = main.margin(16, 0, 16, 16);
        let titled = main
            .titled(&self.title, font(24.0))
            .map_err(drawing(path))?;
        // The legend: one row under the title, centred.
        let (legend, body) = titled.split_vertically(40);
        let colors = [PALETTE[0], PALETTE[1]];
        let label_font = font(15.0);
        let widths = self
            .labels
            .iter()
            .map(|l| {
                legend
                    .estimate_text_size(l, &label_font)
                    .map(|(w, _)| w as i32)
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(drawing(path))?;
        let (swatch, gap, space) = (22, 8, 36);
        let total = widths.iter().map(|w| swatch + gap + w).sum::<i32>() + space;
        let (width, _) = legend.dim_in_pixel();
        let mut x = (width as i32 - total) / 2;
        for ((label, color), w) in self.labels.iter().zip(colors).zip(&widths) {
            legend
                .draw(&Rectangle::new([(x, 8), (x + swatch, 22)], color.filled()))
                .map_err(drawing(path))?;
            legend
                .draw(&Text::new(
                    label.clone(),
                    (x + swatch + gap, 15),
                    label_font.pos(Pos::new(HPos::Left, VPos::Center)),
                ))
                .map_err(drawing(path))?;
            x += swatch + gap + w + space;
        }

        let n = self.groups.len();
        let x_range = Ticked {
            range: -0.5..n as f64 - 0.5,
            bold: Vec::new(),
            light: Vec::new(),
        };
        let mut chart = ChartBuilder::on(&body)
            .x_label_area_size(52)
            .y_label_area_size(84)
            .build_cartesian_2d(x_range, self.y.ranged())
            .map_err(drawing(path))?;
        let y_format = |c: &f64| (self.y.format)(self.y.value(*c));
        styled_mesh(&mut chart)
            .disable_x_mesh()
            .y_desc(&self.y.label)
            .y_label_formatter(&y_format)
            .draw()
            .map_err(drawing(path))?;
        // Bar i of group g spans [g + OFFSETS[i] - HALF, g + OFFSETS[i] + HALF].
        const OFFSETS: [f64; 2] = [-0.19, 0.19];
        const HALF: f64 = 0.16;
        let bottom = self.y.lo;
        for (i, color) in colors.iter().enumerate() {
            chart
                .draw_series(self.groups.iter().enumerate().map(|(g, pair)| {
                    let x = g as f64 + OFFSETS[i];
                    Rectangle::new(
                        [(x - HALF, bottom), (x + HALF, self.y.coord(pair.values[i]))],
                        color.filled(),
                    )
                }))
                .map_err(drawing(path))?;
        }
        // Text in pixels, on the whole canvas: each bar's value above it and its note under the
        // axis, the workload under the notes, the ratio above the group.
        let value_font = font(14.0).pos(Pos::new(HPos::Center, VPos::Bottom));
        let note_font = font(13.0)
            .color(&RGBColor(90, 90, 90))
            .pos(Pos::new(HPos::Center, VPos::Top));
        let name_font = font(16.0).pos(Pos::new(HPos::Center, VPos::Top));
        let ratio_font = font(19.0).pos(Pos::new(HPos::Center, VPos::Bottom));
        let (_, axis_y) = chart.backend_coord(&(0.0, bottom));
        for (g, pair) in self.groups.iter().enumerate() {
            let mut top = axis_y;
            for ((offset, value), note) in OFFSETS.iter().zip(pair.values).zip(&pair.notes) {
                let x = g as f64 + offset;
                let (px, py) = chart.backend_coord(&(x, self.y.coord(value)));
                top = top.min(py);
                root.draw(&Text::new(
                    thousands(value),
                    (px, py - 4),
                    value_font.clone(),
                ))
                .map_err(drawing(path))?;
                if let Some(note) = note {
                    root.draw(&Text::new(
                        note.clone(),
                        (px, axis_y + 8),
                        note_font.clone(),
                    ))
                    .map_err(drawing(path))?;
                }
            }
            let (cx, _) = chart.backend_coord(&(g as f64, bottom));
            root.draw(&Text::new(
                pair.name.clone(),
                (cx, axis_y + 28),
                name_font.clone(),
            ))
            .map_err(drawing(path))?;
            // A bracket over the two bars' values, the ratio on it.
            let (left, _) = chart.backend_coord(&(g as f64 + OFFSETS[0], bottom));
            let (right, _) = chart.backend_coord(&(g as f64 + OFFSETS[1], bottom));
            let y = top - 30;
            root.draw(&PathElement::new(
                vec![(left, y + 6), (left, y), (right, y), (right, y + 6)],
                RGBColor(90, 90, 90).stroke_width(1),
            ))
            .map_err(drawing(path))?;
            root.draw(&Text::new(
                ratio(pair.values[0] / pair.values[1]),
                (cx, y - 3),
                ratio_font.clone(),
            ))
            .map_err(drawing(path))?;
        }
        root.present().map_err(drawing(path))?;
        Ok(())
    }
}

/// `106.6` -> `107x`, `7.39` -> `7.4x`.
pub fn ratio(r: f64) -> String {
    if r >= 10.0 {
        format!("{r:.0}x")
    } else {
        format!("{r:.1}x")
    }
}

/// A step of 1, 2 or 5 times a power of ten, at least `raw`.
pub fn nice_step(raw: f64) -> f64 {
    let base = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * base)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * base)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_and_ratios() {
        assert_eq!(nice_step(7.3), 10.0);
        assert_eq!(nice_step(1.2), 2.0);
        assert_eq!(ratio(106.6), "107x");
        assert_eq!(ratio(7.39), "7.4x");
    }
}
