//! The loop's report: SVG plots (plotters) of the training losses, the gate results per
//! generation with their 95% Wilson intervals, and the Elo curve against the fixed
//! players, plus the Elo table as JSON. Drawn from `loop.json` alone, so `weiqi loop
//! --report-only` redraws it for a run on another machine.

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use crate::Error;
use crate::generations::{ANCHORS, LoopState, model_name};

fn plot_err(e: impl std::fmt::Display) -> Error {
    Error::Invalid(format!("plot: {e}"))
}

const SIZE: (u32, u32) = (800, 480);
const COLOURS: [RGBColor; 3] = [RGBColor(31, 119, 180), RGBColor(214, 39, 40), RGBColor(44, 160, 44)];

/// Writes `report/losses.svg`, `report/gates.svg`, `report/elo.svg` and `report/elo.json`
/// under `run`; returns their paths.
pub fn write(state: &LoopState, run: &Path) -> Result<Vec<PathBuf>, Error> {
    let dir = run.join("report");
    std::fs::create_dir_all(&dir)?;
    let files = vec![
        dir.join("losses.svg"),
        dir.join("gates.svg"),
        dir.join("elo.svg"),
        dir.join("elo.json"),
    ];
    losses(state, &files[0])?;
    gates(state, &files[1])?;
    elo(state, &files[2])?;
    std::fs::write(&files[3], serde_json::to_vec_pretty(&state.elo())?)?;
    Ok(files)
}

/// Range of `xs` with a margin, never empty.
fn span(xs: impl Iterator<Item = f64>, floor: Option<f64>) -> std::ops::Range<f64> {
    let (lo, hi) = xs
        .filter(|x| x.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| (lo.min(x), hi.max(x)));
    let (lo, hi) = if lo.is_finite() { (lo, hi) } else { (0.0, 1.0) };
    let pad = ((hi - lo) * 0.08).max(1e-3);
    let lo = floor.map_or(lo - pad, |f| (lo - pad).max(f));
    lo..hi + pad
}

/// Losses against the global training step (generations one after another).
fn losses(state: &LoopState, path: &Path) -> Result<(), Error> {
    let mut series: [Vec<(f64, f64)>; 3] = Default::default();
    let mut offset = 0.0;
    for g in &state.generations {
        let Some(t) = &g.training else { continue };
        for l in &t.losses {
            let x = offset + l.step as f64;
            series[0].push((x, l.policy));
            series[1].push((x, l.value));
            series[2].push((x, l.ownership));
        }
        offset += t.losses.last().map_or(0.0, |l| l.step as f64);
    }
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(plot_err)?;
    let ys = span(series.iter().flatten().map(|p| p.1), Some(0.0));
    let mut chart = ChartBuilder::on(&root)
        .caption("Training losses (generations one after another)", ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(0.0..offset.max(1.0), ys)
        .map_err(plot_err)?;
    chart
        .configure_mesh()
        .x_desc("training step")
        .y_desc("loss")
        .draw()
        .map_err(plot_err)?;
    for ((points, name), colour) in series.iter().zip(["policy", "value", "ownership"]).zip(COLOURS) {
        chart
            .draw_series(LineSeries::new(points.iter().copied(), colour.stroke_width(2)))
            .map_err(plot_err)?
            .label(name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2)));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(plot_err)?;
    root.present().map_err(plot_err)
}

/// Each candidate's score rate against the best, with its interval and the promotion line.
fn gates(state: &LoopState, path: &Path) -> Result<(), Error> {
    let rows: Vec<(f64, f64, f64, f64, bool)> = state
        .generations
        .iter()
        .filter_map(|g| {
            let r = g.gate.as_ref()?;
            Some((g.number as f64, r.ci95.0, r.a_rate, r.ci95.1, g.promoted == Some(true)))
        })
        .collect();
    let last = state.generations.last().map_or(1.0, |g| g.number as f64);
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(plot_err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "Gate: candidate against the best ({} games; promoted at {:.0}%)",
                state.config.gate_games,
                100.0 * state.config.promote_at
            ),
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(0.5..last + 0.5, 0.0..1.0)
        .map_err(plot_err)?;
    chart
        .configure_mesh()
        .x_desc("generation")
        .y_desc("score rate (95% Wilson interval)")
        .draw()
        .map_err(plot_err)?;
    let line = state.config.promote_at;
    chart
        .draw_series(LineSeries::new([(0.5, line), (last + 0.5, line)], BLACK.mix(0.5)))
        .map_err(plot_err)?;
    chart
        .draw_series(
            rows.iter()
                .map(|&(x, lo, mid, hi, _)| ErrorBar::new_vertical(x, lo, mid, hi, COLOURS[0].stroke_width(2), 10)),
        )
        .map_err(plot_err)?;
    chart
        .draw_series(rows.iter().map(|&(x, _, mid, _, promoted)| {
            let style = if promoted {
                COLOURS[2].filled()
            } else {
                COLOURS[1].stroke_width(2)
            };
            Circle::new((x, mid), 6, style)
        }))
        .map_err(plot_err)?;
    root.present().map_err(plot_err)
}

/// Each generation's network's Elo, with the fixed players as horizontal lines.
fn elo(state: &LoopState, path: &Path) -> Result<(), Error> {
    let table = state.elo();
    let of = |name: &str| table.iter().find(|e| e.player == name).map(|e| e.elo);
    let curve: Vec<(f64, f64)> = state
        .generations
        .iter()
        .filter(|g| g.anchors.is_some() || g.gate.is_some())
        .filter_map(|g| Some((g.number as f64, of(&model_name(g.number))?)))
        .collect();
    let fixed: Vec<String> = ANCHORS
        .iter()
        .map(|a| a.to_string())
        .chain(state.config.gtp_anchors.iter().map(|c| format!("gtp:{c}")))
        .collect();
    let anchors: Vec<(String, f64)> = fixed.into_iter().filter_map(|a| Some((a.clone(), of(&a)?))).collect();
    let last = state.generations.last().map_or(1.0, |g| g.number as f64);
    let ys = span(curve.iter().map(|p| p.1).chain(anchors.iter().map(|a| a.1)), None);
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(plot_err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "Elo (Bradley-Terry fit of all games; uniform random = 0)",
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(-0.5..last + 0.5, ys)
        .map_err(plot_err)?;
    chart
        .configure_mesh()
        .x_desc("generation")
        .y_desc("Elo")
        .draw()
        .map_err(plot_err)?;
    let palette = [
        COLOURS[1],
        COLOURS[2],
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(127, 127, 127),
    ];
    for ((name, y), colour) in anchors.iter().zip(palette.into_iter().cycle()) {
        chart
            .draw_series(LineSeries::new([(-0.5, *y), (last + 0.5, *y)], colour.mix(0.6)))
            .map_err(plot_err)?
            .label(name.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour));
    }
    chart
        .draw_series(LineSeries::new(curve.iter().copied(), COLOURS[0].stroke_width(2)))
        .map_err(plot_err)?
        .label("network")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], COLOURS[0].stroke_width(2)));
    chart
        .draw_series(curve.iter().map(|&p| Circle::new(p, 4, COLOURS[0].filled())))
        .map_err(plot_err)?;
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(plot_err)?;
    root.present().map_err(plot_err)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generations::tests::{config, result};
    use crate::generations::{Generation, TrainingRecord};

    #[test]
    fn the_report_draws_every_plot() {
        let dir = std::env::temp_dir().join(format!("weiqi-report-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut state = LoopState {
            config: config(),
            best: Some(1),
            generations: vec![],
        };
        for number in 0..3u32 {
            let mut g = Generation::new(number);
            g.training = Some(TrainingRecord {
                data: vec![number],
                init: number.checked_sub(1),
                losses: (1..=3)
                    .map(|k| crate::Losses {
                        step: k * 10,
                        policy: 3.0 - k as f64 * 0.1 - number as f64 * 0.3,
                        value: 0.9,
                        ownership: 0.5,
                        score: 0.0,
                        seconds: 1.0,
                    })
                    .collect(),
                seconds: 3.0,
            });
            if number > 0 {
                g.gate = Some(result(&model_name(number), &model_name(number - 1), 6 + number, 4));
            }
            g.promoted = Some(true);
            g.anchors = Some(vec![
                result(&model_name(number), "uniform", 8 + number, 2),
                result(&model_name(number), "light", 4 + number, 6),
            ]);
            state.generations.push(g);
        }
        let files = write(&state, &dir).unwrap();
        for f in &files[..3] {
            let svg = std::fs::read_to_string(f).unwrap();
            assert!(svg.starts_with("<svg") && svg.contains("</svg>"), "{}", f.display());
        }
        let gates = std::fs::read_to_string(&files[1]).unwrap();
        // One filled (promoted) point per gate; the error bars mark their centres too.
        assert_eq!(gates.matches(r##"fill="#2CA02C""##).count(), 2, "{gates}");
        let elo = std::fs::read_to_string(&files[2]).unwrap();
        assert!(elo.contains("uniform") && elo.contains("light"));
        let table: Vec<crate::generations::EloEntry> =
            serde_json::from_slice(&std::fs::read(&files[3]).unwrap()).unwrap();
        assert_eq!(table.len(), 5);
        // An empty record still draws (a loop killed before its first step).
        state.generations.clear();
        write(&state, &dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
