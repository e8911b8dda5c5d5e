//! What every chart is drawn on: a white canvas of one size with a footer ([`canvas`]), its text
//! drawn with an embedded font ([`Canvas`], [`font`]), the series legend in one style
//! ([`legend`]) and drawing errors that name the file ([`drawing`]).
//!
//! Text is drawn with an embedded font (Noto Sans, from the `ttf-noto-sans` crate), so no system
//! font library is needed; call [`register_embedded_font`] once before drawing.

use ab_glyph::{Font, FontRef, ScaleFont};
use anyhow::{bail, Result};
use plotters::chart::MeshStyle;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};
use plotters_backend::text_anchor::{HPos, VPos};
use plotters_backend::{BackendColor, BackendCoord, BackendTextStyle, DrawingErrorKind};
use std::path::Path;
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

/// The mesh of `chart` in the charts' one style of labels and grey grid lines; the caller adds
/// its axes' descriptions and formatters and draws it.
pub fn styled_mesh<'a, 'b, X, Y, XT, YT, DB>(
    chart: &'b mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
) -> MeshStyle<'a, 'b, X, Y, DB>
where
    DB: DrawingBackend,
    XT: std::fmt::Debug,
    YT: std::fmt::Debug,
    X: Ranged<ValueType = XT> + ValueFormatter<XT>,
    Y: Ranged<ValueType = YT> + ValueFormatter<YT>,
{
    let mut mesh = chart.configure_mesh();
    mesh.label_style(font(15.0))
        .axis_desc_style(font(18.0))
        .bold_line_style(RGBColor(200, 200, 200))
        .light_line_style(RGBColor(238, 238, 238));
    mesh
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
