//! The loop's report: SVG plots (plotters) of the training losses, the gate results per
//! generation with their 95% Wilson intervals, and the Elo curve against the fixed
//! players, plus the Elo table as JSON. Drawn from `loop.json` alone, so `weiqi loop
//! --report-only` redraws it for a run on another machine.

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use crate::Error;
use crate::generations::{ANCHORS, LoopState, elo_of_runs, labelled, model_name};

fn plot_err(e: impl std::fmt::Display) -> Error {
    Error::Invalid(format!("plot: {e}"))
}

const SIZE: (u32, u32) = (800, 480);
/// The plots' colours, in order of use: blue, red, green, purple, brown, grey.
const COLOURS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(127, 127, 127),
];

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
    // (The network's curve is the first colour; the fixed players take the others.)
    for ((name, y), colour) in anchors.iter().zip(COLOURS[1..].iter().copied().cycle()) {
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

/// One run's point in a comparison: a generation's network, its Elo on the runs' common
/// scale, and the self-play and training time spent up to the end of its training.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ComparedPoint {
    pub run: String,
    pub generation: u32,
    /// Self-play and training minutes of this generation and those before it (the
    /// loop's compute; gates and anchor games, its measurements, are not counted).
    pub minutes: f64,
    pub elo: f64,
    pub promoted: bool,
}

/// Several runs' Elo curves side by side (issue 48): `compare.svg` and `compare.json` in
/// `dir`, each run's networks against the minutes of self-play and training spent, on one
/// Elo scale fitted to all the runs' games (they share the fixed players). `runs` are
/// (label, record) pairs; returns the files' paths.
pub fn compare(runs: &[(String, LoopState)], dir: &Path) -> Result<Vec<PathBuf>, Error> {
    for (k, (label, _)) in runs.iter().enumerate() {
        if label.is_empty() || label.contains('/') || runs[..k].iter().any(|(l, _)| l == label) {
            return Err(Error::Invalid(format!(
                "compare: run label {label:?} must be non-empty, without '/', and differ from the others'"
            )));
        }
    }
    // One scale means the same fixed players: the same board, rules and komi.
    if let Some((first, a)) = runs.first()
        && let Some((other, b)) = runs.iter().find(|(_, b)| {
            (b.config.size, &b.config.rules, b.config.komi) != (a.config.size, &a.config.rules, a.config.komi)
        })
    {
        return Err(Error::Invalid(format!(
            "compare: {other} is {}x{} {} komi {}, {first} {}x{} {} komi {}: runs on one scale share board, rules and komi",
            b.config.size,
            b.config.size,
            b.config.rules,
            b.config.komi,
            a.config.size,
            a.config.size,
            a.config.rules,
            a.config.komi
        )));
    }
    std::fs::create_dir_all(dir)?;
    let by_label: Vec<(&str, &LoopState)> = runs.iter().map(|(l, s)| (l.as_str(), s)).collect();
    let (table, fixed) = elo_of_runs(&by_label);
    let of = |name: &str| table.iter().find(|e| e.player == name).map(|e| e.elo);
    let mut points = Vec::new();
    for (label, run) in runs {
        let mut spent = 0.0;
        for g in &run.generations {
            spent += g.selfplay.as_ref().map_or(0.0, |s| s.seconds) + g.training.as_ref().map_or(0.0, |t| t.seconds);
            let measured = g.anchors.is_some() || g.gate.is_some();
            if let (true, Some(elo)) = (measured, of(&labelled(label, &model_name(g.number)))) {
                points.push(ComparedPoint {
                    run: label.clone(),
                    generation: g.number,
                    minutes: spent / 60.0,
                    elo,
                    promoted: g.number == 0 || g.promoted == Some(true),
                });
            }
        }
    }
    let fixed: Vec<(String, f64)> = table[..fixed].iter().map(|e| (e.player.clone(), e.elo)).collect();
    let files = vec![dir.join("compare.svg"), dir.join("compare.json")];
    let right = points.iter().map(|p| p.minutes).fold(1.0f64, f64::max) * 1.05;
    let ys = span(points.iter().map(|p| p.elo).chain(fixed.iter().map(|a| a.1)), None);
    let svg = files[0].clone();
    let root = SVGBackend::new(&svg, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(plot_err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "Elo against the loop's compute (one fit of all runs' games)",
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(0.0..right, ys)
        .map_err(plot_err)?;
    chart
        .configure_mesh()
        .x_desc("minutes of self-play and training (gates and anchors not counted)")
        .y_desc("Elo (uniform random = 0)")
        .draw()
        .map_err(plot_err)?;
    for (name, y) in &fixed {
        let grey = BLACK.mix(0.35);
        chart
            .draw_series(LineSeries::new([(0.0, *y), (right, *y)], grey))
            .map_err(plot_err)?;
        chart
            .draw_series([Text::new(name.clone(), (right * 0.01, *y), ("sans-serif", 12))])
            .map_err(plot_err)?;
    }
    for ((label, _), colour) in runs.iter().zip(COLOURS[..5].iter().copied().cycle()) {
        let curve: Vec<(f64, f64)> = points
            .iter()
            .filter(|p| &p.run == label)
            .map(|p| (p.minutes, p.elo))
            .collect();
        chart
            .draw_series(LineSeries::new(curve.iter().copied(), colour.stroke_width(2)))
            .map_err(plot_err)?
            .label(label.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour.stroke_width(2)));
        chart
            .draw_series(points.iter().filter(|p| &p.run == label).map(|p| {
                let style = if p.promoted {
                    colour.filled()
                } else {
                    colour.stroke_width(2)
                };
                Circle::new((p.minutes, p.elo), 5, style)
            }))
            .map_err(plot_err)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(plot_err)?;
    root.present().map_err(plot_err)?;
    let json = serde_json::json!({ "elo": table, "points": points });
    std::fs::write(&files[1], serde_json::to_vec_pretty(&json)?)?;
    Ok(files)
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
                        opponent: 0.0,
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

        // Two runs side by side: the second's networks beat the fixed players more often.
        let mut better = state.clone();
        for g in &mut better.generations {
            g.anchors = Some(vec![
                result(&model_name(g.number), "uniform", 10, 0),
                result(&model_name(g.number), "light", 9, 1),
            ]);
        }
        let runs = [("plain".to_string(), state.clone()), ("options".to_string(), better)];
        let files = compare(&runs, &dir).unwrap();
        let svg = std::fs::read_to_string(&files[0]).unwrap();
        assert!(svg.contains("plain") && svg.contains("options") && svg.contains("uniform"));
        let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&files[1]).unwrap()).unwrap();
        let points: Vec<ComparedPoint> = serde_json::from_value(json["points"].clone()).unwrap();
        assert_eq!(points.len(), 6);
        // Minutes add up each generation's training (3 s each here; no self-play record).
        let last = points.iter().find(|p| p.run == "plain" && p.generation == 2).unwrap();
        assert!((last.minutes - 9.0 / 60.0).abs() < 1e-9, "{last:?}");
        for g in 0..3 {
            let at = |run: &str| points.iter().find(|p| p.run == run && p.generation == g).unwrap().elo;
            assert!(at("options") > at("plain"), "{points:?}");
        }
        let same = [runs[0].clone(), runs[0].clone()];
        assert!(compare(&same, &dir).unwrap_err().to_string().contains("label"));
        let mut small = runs[1].clone();
        small.0 = "small".into();
        small.1.config.size = 7;
        let err = compare(&[runs[0].clone(), small], &dir).unwrap_err().to_string();
        assert!(err.contains("small is 7x7"), "{err}");

        // An empty record still draws (a loop killed before its first step).
        state.generations.clear();
        write(&state, &dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
