//! The report's SVG charts, drawn with plotters' SVG backend (no font or system libraries):
//! a percentile curve per latency workload (one line per logger, log-scale ns), and bar
//! charts of records/s (`throughput`, `seed_1m`, `scaling_t*`) and requests/s (`server_*`).
//!
//! Curves use the first successful run of each pair; bars use the combined (median) rows.

use std::path::{Path, PathBuf};

use plotters::prelude::*;

use super::{Measurement, Report, Row, Summary};

/// Draws every chart the report has data for into `dir`; returns the files written.
pub fn write_all(report: &Report, dir: &Path) -> Result<Vec<PathBuf>, String> {
    let rows = report.rows();
    let mut written = Vec::new();
    let mut workloads: Vec<&str> = Vec::new();
    for r in &report.runs {
        if !workloads.contains(&r.workload.as_str()) {
            workloads.push(&r.workload);
        }
    }
    for w in workloads {
        let curves = curves(report, w);
        if !curves.is_empty() {
            let path = dir.join(format!("latency-{w}.svg"));
            latency_chart(&path, w, &curves)?;
            written.push(path);
        }
        let bars = bars(&rows, w);
        if !bars.is_empty() {
            let path = dir.join(format!("bars-{w}.svg"));
            let unit = if w.starts_with("server") {
                "requests/s"
            } else {
                "records/s (until shutdown returns)"
            };
            bar_chart(&path, &format!("{w}: {unit}"), &bars)?;
            written.push(path);
        }
    }
    Ok(written)
}

/// (logger, [(percentile, ns)]) from each logger's first successful run of `workload`.
fn curves(report: &Report, workload: &str) -> Vec<(String, Vec<(f64, u64)>)> {
    let mut out: Vec<(String, Vec<(f64, u64)>)> = Vec::new();
    for r in report
        .runs
        .iter()
        .filter(|r| r.workload == workload && r.failure.is_none())
    {
        if out.iter().any(|(l, _)| *l == r.logger) {
            continue;
        }
        if let Some(Measurement::Latency(l)) = r.result.as_ref().map(|c| &c.measurement) {
            if !l.curve.is_empty() {
                out.push((r.logger.clone(), l.curve.clone()));
            }
        }
    }
    out
}

/// (logger, value) bars for `workload`: records/s or requests/s.
fn bars(rows: &[Row], workload: &str) -> Vec<(String, f64)> {
    rows.iter()
        .filter(|r| r.workload == workload)
        .filter_map(|r| match r.summary {
            Summary::Throughput { lines, total_s, .. }
                if workload == "throughput"
                    || workload == "seed_1m"
                    || workload.starts_with("scaling_") =>
            {
                Some((r.logger.clone(), lines as f64 / total_s))
            }
            Summary::Server { requests_per_s, .. } => Some((r.logger.clone(), requests_per_s)),
            _ => None,
        })
        .collect()
}

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

fn latency_chart(
    path: &Path,
    workload: &str,
    curves: &[(String, Vec<(f64, u64)>)],
) -> Result<(), String> {
    let points = curves[0].1.len();
    let labels: Vec<String> = curves[0].1.iter().map(|(p, _)| format!("p{p}")).collect();
    let max = curves
        .iter()
        .flat_map(|(_, c)| c.iter().map(|(_, ns)| *ns))
        .max()
        .unwrap_or(10)
        .max(10) as f64;
    let root = SVGBackend::new(path, (1000, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("{workload}: per-call latency by percentile (ns, log scale)"),
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(36)
        .y_label_area_size(64)
        .build_cartesian_2d(0..points - 1, (5.0..max * 1.5).log_scale())
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_labels(points)
        .x_label_formatter(&|i| labels.get(*i).cloned().unwrap_or_default())
        .y_desc("ns")
        .draw()
        .map_err(err)?;
    for (i, (logger, curve)) in curves.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let stroke = color.stroke_width(if logger == "tachylog" { 3 } else { 1 });
        chart
            .draw_series(LineSeries::new(
                curve
                    .iter()
                    .enumerate()
                    .map(|(x, (_, ns))| (x, (*ns).max(5) as f64)),
                stroke,
            ))
            .map_err(err)?
            .label(logger.as_str())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], stroke));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)
}

fn bar_chart(path: &Path, title: &str, bars: &[(String, f64)]) -> Result<(), String> {
    let max = bars.iter().map(|(_, v)| *v).fold(1.0, f64::max);
    let root = SVGBackend::new(path, (1000, 500)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(80)
        .build_cartesian_2d((0..bars.len()).into_segmented(), 0.0..max * 1.1)
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(bars.len())
        .x_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => bars.get(*i).map(|b| b.0.clone()).unwrap_or_default(),
            _ => String::new(),
        })
        .y_label_formatter(&|v| format!("{:.2}M", v / 1e6))
        .draw()
        .map_err(err)?;
    chart
        .draw_series(bars.iter().enumerate().map(|(i, (name, v))| {
            let color = if name == "tachylog" {
                RED.mix(0.8)
            } else {
                BLUE.mix(0.5)
            };
            Rectangle::new(
                [
                    (SegmentValue::Exact(i), 0.0),
                    (SegmentValue::Exact(i + 1), *v),
                ],
                color.filled(),
            )
        }))
        .map_err(err)?;
    root.present().map_err(err)
}
