//! What the chart programs share: the benchmark CSVs read by column name with errors that name
//! the file and line ([`Table`]), axes with chosen ticks ([`Axis`]), a line chart ([`LineChart`]),
//! a canvas whose text is drawn with an embedded font ([`canvas`]) and number formats.
//!
//! Text is drawn with an embedded font (Noto Sans, from the `ttf-noto-sans` crate), so no system
//! font library is needed; call [`register_embedded_font`] once before drawing.

use ab_glyph::{Font, FontRef, ScaleFont};
use anyhow::{bail, Result};
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{BackendColor, BackendCoord, BackendTextStyle, DrawingErrorKind};
use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The font family name the charts use; the embedded font is registered under it.
pub const FONT: &str = "sans-serif";

/// Width of every chart in pixels.
pub const WIDTH: u32 = 1000;
/// Height of every chart in pixels, footer included.
pub const HEIGHT: u32 = 640;
/// Height of the footer that names the workload and the source files.
pub const FOOTER: u32 = 44;

/// Registers the embedded font with plotters, whose font layer measures the text.
pub fn register_embedded_font() -> Result<()> {
    match register_font(FONT, FontStyle::Normal, ttf_noto_sans::REGULAR) {
        Ok(()) => Ok(()),
        Err(_) => bail!("the embedded Noto Sans font could not be registered with plotters"),
    }
}

// ---------------------------------------------------------------------------------------------
// CSV input

/// A malformed benchmark CSV; every message names the file and, where one is to blame, the line.
#[derive(Debug, thiserror::Error)]
#[allow(missing_docs)] // each variant's fields are the parts of its message
pub enum CsvError {
    /// The file cannot be opened or its header read.
    #[error("{}: cannot open: {error}", path.display())]
    Open { path: PathBuf, error: csv::Error },
    /// A row that is not CSV or not as long as the header.
    #[error("{}:{line}: {message}", path.display())]
    Malformed {
        path: PathBuf,
        line: u64,
        message: String,
    },
    /// A column the chart needs is not in the header.
    #[error("{}: the header has no column `{column}` (it has: {found})", path.display())]
    MissingColumn {
        path: PathBuf,
        column: String,
        found: String,
    },
    /// A cell that is not what the column holds.
    #[error("{}:{line}: column `{column}`: expected {expected}, found `{value}`", path.display())]
    BadValue {
        path: PathBuf,
        line: u64,
        column: String,
        expected: &'static str,
        value: String,
    },
    /// A header and no rows.
    #[error("{}: no data rows", path.display())]
    Empty { path: PathBuf },
}

/// A CSV file with a header row, read whole.
#[derive(Debug)]
pub struct Table {
    path: PathBuf,
    columns: HashMap<String, usize>,
    header: Vec<String>,
    rows: Vec<(u64, csv::StringRecord)>,
}

/// One data row of a [`Table`], for typed access by column name.
#[derive(Clone, Copy)]
pub struct Row<'a> {
    table: &'a Table,
    /// The row's line in the file (1 is the header).
    pub line: u64,
    record: &'a csv::StringRecord,
}

impl Table {
    /// Reads `path` whole; fails on a malformed row or when there is no data row.
    pub fn read(path: &Path) -> Result<Self, CsvError> {
        let malformed = |e: csv::Error| {
            let line = e.position().map_or(0, csv::Position::line);
            let message = match e.kind() {
                csv::ErrorKind::UnequalLengths {
                    expected_len, len, ..
                } => format!("row has {len} fields, the header has {expected_len}"),
                csv::ErrorKind::Utf8 { err, .. } => {
                    format!("field {} is not valid UTF-8", err.field() + 1)
                }
                csv::ErrorKind::Io(io) => format!("read error: {io}"),
                _ => e.to_string(),
            };
            CsvError::Malformed {
                path: path.to_path_buf(),
                line,
                message,
            }
        };
        let mut reader = csv::Reader::from_path(path).map_err(|error| CsvError::Open {
            path: path.to_path_buf(),
            error,
        })?;
        let header: Vec<String> = reader
            .headers()
            .map_err(malformed)?
            .iter()
            .map(|h| h.trim().to_string())
            .collect();
        let columns = header
            .iter()
            .enumerate()
            .map(|(i, h)| (h.clone(), i))
            .collect();
        let mut rows = Vec::new();
        for record in reader.records() {
            let record = record.map_err(malformed)?;
            let line = record.position().map_or(0, csv::Position::line);
            rows.push((line, record));
        }
        if rows.is_empty() {
            return Err(CsvError::Empty {
                path: path.to_path_buf(),
            });
        }
        Ok(Self {
            path: path.to_path_buf(),
            columns,
            header,
            rows,
        })
    }

    /// Fails unless the header has every one of `names`.
    pub fn require(&self, names: &[&str]) -> Result<(), CsvError> {
        for name in names {
            self.column(name)?;
        }
        Ok(())
    }

    fn column(&self, name: &str) -> Result<usize, CsvError> {
        self.columns
            .get(name)
            .copied()
            .ok_or_else(|| CsvError::MissingColumn {
                path: self.path.clone(),
                column: name.to_string(),
                found: self.header.join(", "),
            })
    }

    /// Whether the header has the column `name`.
    pub fn has(&self, name: &str) -> bool {
        self.columns.contains_key(name)
    }

    /// The data rows, in file order.
    pub fn rows(&self) -> impl Iterator<Item = Row<'_>> {
        self.rows.iter().map(|(line, record)| Row {
            table: self,
            line: *line,
            record,
        })
    }

    /// The first data row (there is one: [`Table::read`] refuses a file without).
    pub fn first(&self) -> Row<'_> {
        let (line, record) = &self.rows[0];
        Row {
            table: self,
            line: *line,
            record,
        }
    }
}

impl<'a> Row<'a> {
    /// The cell of `column`, trimmed (empty where the row is short).
    pub fn text(&self, column: &str) -> Result<&'a str, CsvError> {
        let i = self.table.column(column)?;
        Ok(self.record.get(i).unwrap_or("").trim())
    }

    /// The error of a cell of `column` holding `value` where `expected` was.
    pub fn bad(&self, column: &str, expected: &'static str, value: &str) -> CsvError {
        CsvError::BadValue {
            path: self.table.path.clone(),
            line: self.line,
            column: column.to_string(),
            expected,
            value: value.to_string(),
        }
    }

    /// A finite number.
    pub fn number(&self, column: &str) -> Result<f64, CsvError> {
        let value = self.text(column)?;
        match value.parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(self.bad(column, "a number", value)),
        }
    }

    /// A number greater than zero (a time, a rate or a count drawn on a logarithmic axis).
    pub fn positive(&self, column: &str) -> Result<f64, CsvError> {
        let v = self.number(column)?;
        if v > 0.0 {
            Ok(v)
        } else {
            Err(self.bad(column, "a number greater than 0", self.text(column)?))
        }
    }

    /// A number greater than zero, or `None` for an empty cell (a column a run leaves empty for
    /// some workloads, such as the DBLP-like row's memory per query).
    pub fn optional_positive(&self, column: &str) -> Result<Option<f64>, CsvError> {
        if self.text(column)?.is_empty() {
            Ok(None)
        } else {
            self.positive(column).map(Some)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Series

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

// ---------------------------------------------------------------------------------------------
// Drawing

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

/// Maps a plotters error on `path` to one that names the file.
pub fn drawing<E: std::fmt::Display>(path: &Path) -> impl Fn(E) -> anyhow::Error + '_ {
    move |e| anyhow::anyhow!("{}: cannot draw the chart: {e}", path.display())
}

/// Draws the series' legend of `chart` at `at` in the charts' one style.
pub fn legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    at: SeriesLabelPosition,
    path: &Path,
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    chart
        .configure_series_labels()
        .position(at)
        .label_font(font(15.0))
        .background_style(WHITE.mix(0.9))
        .border_style(RGBColor(160, 160, 160))
        .margin(12)
        .draw()
        .map_err(drawing(path))
}

/// The embedded font at `size` pixels, black.
pub fn font(size: f64) -> TextStyle<'static> {
    (FONT, size).into_font().color(&BLACK)
}

/// The embedded font, parsed once.
fn embedded_font() -> Result<&'static FontRef<'static>> {
    static PARSED: OnceLock<Option<FontRef<'static>>> = OnceLock::new();
    match PARSED.get_or_init(|| FontRef::try_from_slice(ttf_noto_sans::REGULAR).ok()) {
        Some(font) => Ok(font),
        None => bail!("the embedded Noto Sans font could not be parsed"),
    }
}

/// The bitmap backend with its text drawn here: plotters 0.3.7's ab_glyph text path places each
/// glyph without its left side bearing, which spaces the letters unevenly. Text sizes still come
/// from plotters' font layer (the same advances and kerning as drawn here).
pub struct Canvas<'a> {
    bitmap: BitMapBackend<'a>,
    font: &'static FontRef<'static>,
}

type CanvasError<'a> = DrawingErrorKind<<BitMapBackend<'a> as DrawingBackend>::ErrorType>;

impl<'a> DrawingBackend for Canvas<'a> {
    type ErrorType = <BitMapBackend<'a> as DrawingBackend>::ErrorType;

    fn get_size(&self) -> (u32, u32) {
        self.bitmap.get_size()
    }

    fn ensure_prepared(&mut self) -> Result<(), CanvasError<'a>> {
        self.bitmap.ensure_prepared()
    }

    fn present(&mut self) -> Result<(), CanvasError<'a>> {
        self.bitmap.present()
    }

    fn draw_pixel(
        &mut self,
        point: BackendCoord,
        color: BackendColor,
    ) -> Result<(), CanvasError<'a>> {
        self.bitmap.draw_pixel(point, color)
    }

    fn draw_line<S: plotters_backend::BackendStyle>(
        &mut self,
        from: BackendCoord,
        to: BackendCoord,
        style: &S,
    ) -> Result<(), CanvasError<'a>> {
        self.bitmap.draw_line(from, to, style)
    }

    fn draw_rect<S: plotters_backend::BackendStyle>(
        &mut self,
        upper_left: BackendCoord,
        bottom_right: BackendCoord,
        style: &S,
        fill: bool,
    ) -> Result<(), CanvasError<'a>> {
        self.bitmap.draw_rect(upper_left, bottom_right, style, fill)
    }

    fn blit_bitmap(
        &mut self,
        pos: BackendCoord,
        size: (u32, u32),
        src: &[u8],
    ) -> Result<(), CanvasError<'a>> {
        self.bitmap.blit_bitmap(pos, size, src)
    }

    /// As plotters' default: the layout box placed by the anchor, then transformed (rotated); the
    /// baseline lies half the font size below the top of the box, as in plotters.
    fn draw_text<S: BackendTextStyle>(
        &mut self,
        text: &str,
        style: &S,
        pos: BackendCoord,
    ) -> Result<(), CanvasError<'a>> {
        let color = style.color();
        if color.alpha == 0.0 {
            return Ok(());
        }
        let ((min_x, min_y), (max_x, max_y)) = style
            .layout_box(text)
            .map_err(|e| DrawingErrorKind::FontError(Box::new(e)))?;
        let dx = match style.anchor().h_pos {
            HPos::Left => 0,
            HPos::Right => -(max_x - min_x),
            HPos::Center => -(max_x - min_x) / 2,
        };
        let dy = match style.anchor().v_pos {
            VPos::Top => 0,
            VPos::Center => -(max_y - min_y) / 2,
            VPos::Bottom => -(max_y - min_y),
        };
        let size = style.size() as f32;
        let font = self.font.as_scaled(size);
        let mut coverage = Vec::new();
        let mut caret = 0f32;
        let mut previous = None;
        for c in text.chars() {
            let id = font.glyph_id(c);
            if let Some(p) = previous {
                caret += font.kern(p, id);
            }
            let glyph = id.with_scale_and_position(size, ab_glyph::point(caret, size / 2.0));
            if let Some(outline) = font.outline_glyph(glyph) {
                let bounds = outline.px_bounds();
                let (left, top) = (bounds.min.x as i32, bounds.min.y as i32);
                outline.draw(|x, y, c| coverage.push((left + x as i32, top + y as i32, c)));
            }
            caret += font.h_advance(id);
            previous = Some(id);
        }
        let transform = style.transform();
        let (w, h) = self.get_size();
        for (x, y, c) in coverage {
            let (x, y) = transform.transform(x + dx - min_x, y + dy - min_y);
            let (x, y) = (pos.0 + x, pos.1 + y);
            if x >= 0 && y >= 0 && x < w as i32 && y < h as i32 {
                let alpha = color.alpha * f64::from(c.clamp(0.0, 1.0));
                self.bitmap.draw_pixel(
                    (x, y),
                    BackendColor {
                        alpha,
                        rgb: color.rgb,
                    },
                )?;
            }
        }
        Ok(())
    }
}

/// A part of a chart's canvas.
pub type Area<'a> = DrawingArea<Canvas<'a>, plotters::coord::Shift>;

/// A white canvas split into the chart and its footer, with the footer's text drawn.
pub fn canvas<'a>(path: &'a Path, footer: &str) -> Result<(Area<'a>, Area<'a>)> {
    let root = Canvas {
        bitmap: BitMapBackend::new(path, (WIDTH, HEIGHT)),
        font: embedded_font()?,
    }
    .into_drawing_area();
    root.fill(&WHITE).map_err(drawing(path))?;
    let (main, foot) = root.split_vertically(HEIGHT - FOOTER);
    // one line at the middle of the footer, two lines filling it
    let lines: Vec<&str> = footer.lines().collect();
    let top = if lines.len() > 1 { 4 } else { 12 };
    for (i, line) in lines.iter().enumerate() {
        foot.draw(&Text::new(
            line.to_string(),
            (16, top + 18 * i as i32),
            font(14.0).color(&RGBColor(90, 90, 90)),
        ))
        .map_err(drawing(path))?;
    }
    Ok((root, main))
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
        chart
            .configure_mesh()
            .x_desc(&self.x.label)
            .y_desc(&self.y.label)
            .x_label_formatter(&x_format)
            .y_label_formatter(&y_format)
            .label_style(font(15.0))
            .axis_desc_style(font(18.0))
            .bold_line_style(RGBColor(200, 200, 200))
            .light_line_style(RGBColor(238, 238, 238))
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

// ---------------------------------------------------------------------------------------------
// Number formats

/// `1234567.0` -> `1,234,567` (rounded to an integer).
pub fn thousands(v: f64) -> String {
    let digits = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0.0 {
        out.insert(0, '-');
    }
    out
}

/// A short decimal: `0.05`, `2`, `17.3`; thousands separated from 1,000 up.
pub fn plain(v: f64) -> String {
    if v.abs() >= 1000.0 {
        return thousands(v);
    }
    let s = format!("{v:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() || s == "-" {
        "0".into()
    } else {
        s.to_string()
    }
}

/// `6000000.0` -> `6 M`.
pub fn millions(v: f64) -> String {
    format!("{} M", plain(v / 1e6))
}

/// The last part of `path`, for the footers' lists of sources.
pub fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn number_formats() {
        assert_eq!(thousands(16384.0), "16,384");
        assert_eq!(thousands(64.0), "64");
        assert_eq!(thousands(1_000_000.0), "1,000,000");
        assert_eq!(plain(0.05), "0.05");
        assert_eq!(plain(2.0), "2");
        assert_eq!(plain(20000.0), "20,000");
        assert_eq!(millions(36e6), "36 M");
    }
}
