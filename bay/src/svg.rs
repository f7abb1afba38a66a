//! The docs' plots: a scenario's series drawn as plain SVG lines, from the
//! same functions the page runs (`cargo run -p bay -- svg` writes them).

use std::fmt::Write;

use crate::{Scenario, Series};

const COLOURS: [&str; 6] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
];

/// One plot of `columns` (the first is x) from `series`, `w` × `h` pixels.
pub fn plot(series: &Series, title: &str, columns: &[&str], w: f64, h: f64) -> String {
    let (left, right, top, bottom) = (52.0, 120.0, 28.0, 40.0);
    let x = series.column(columns[0]);
    let ys: Vec<&[f64]> = columns[1..].iter().map(|c| series.column(c)).collect();
    let finite = |v: &&f64| v.is_finite();
    let xmax = x.iter().filter(finite).fold(f64::MIN, |a, &b| a.max(b));
    let xmin = x.iter().filter(finite).fold(f64::MAX, |a, &b| a.min(b));
    let ymax = ys
        .iter()
        .flat_map(|c| c.iter())
        .filter(finite)
        .fold(0.0f64, |a, &b| a.max(b));
    let ymax = if ymax <= 0.0 { 1.0 } else { ymax * 1.05 };
    let xspan = if xmax > xmin { xmax - xmin } else { 1.0 };
    let px = |v: f64| left + (v - xmin) / xspan * (w - left - right);
    let py = |v: f64| h - bottom - v / ymax * (h - top - bottom);
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"{w}\" height=\"{h}\" fill=\"white\"/>\n<text x=\"{left}\" y=\"16\" font-size=\"13\">{}</text>\n",
        escape(title)
    );
    // Axes and a few ticks.
    let _ = writeln!(
        s,
        "<path d=\"M{left} {top}V{}H{}\" stroke=\"#444\" fill=\"none\"/>",
        h - bottom,
        w - right
    );
    for i in 0..=4 {
        let yv = ymax * f64::from(i) / 4.0;
        let xv = xmin + xspan * f64::from(i) / 4.0;
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text><text x=\"{:.1}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
            left - 4.0,
            py(yv) + 4.0,
            tick(yv),
            px(xv),
            h - bottom + 14.0,
            tick(xv)
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>",
        (left + w - right) / 2.0,
        h - 6.0,
        escape(columns[0])
    );
    for (i, (name, column)) in columns[1..].iter().zip(&ys).enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let mut d = String::new();
        let mut pen = 'M';
        for (&xv, &yv) in x.iter().zip(column.iter()) {
            if !(xv.is_finite() && yv.is_finite()) {
                pen = 'M';
                continue;
            }
            let _ = write!(d, "{pen}{:.1} {:.1}", px(xv), py(yv));
            pen = 'L';
        }
        let _ = writeln!(
            s,
            "<path d=\"{d}\" stroke=\"{colour}\" stroke-width=\"1.5\" fill=\"none\"/>\n<text x=\"{}\" y=\"{}\" fill=\"{colour}\">{}</text>",
            w - right + 10.0,
            top + 4.0 + 13.0 * i as f64,
            escape(name)
        );
    }
    s.push_str("</svg>\n");
    s
}

fn tick(v: f64) -> String {
    if v.abs() >= 100.0 || v == v.trunc() {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;")
}

/// The docs' plots at the presets: (file name, SVG).
pub fn docs_plots(seed: u64) -> Vec<(&'static str, String)> {
    const PLOTS: [(&str, &str, &str, &[&str]); 4] = [
        ("bay-breaker.svg", "breaker", "Breaker at the preset: the backend fails every call from 5 s to 35 s (calls a second)", &["t", "through", "refused", "probes"]),
        ("bay-shedder.svg", "shedder", "Shedder at the preset: load rises past capacity to 20 s, then drops (per 100 ms)", &["t", "flying", "limit", "refused"]),
        ("bay-limiters.svg", "limiters", "Bucket, sliding and period under scenario 1's bursts (docs/design.md; passes so far)", &["t", "bucket", "sliding", "period"]),
        ("bay-backoff.svg", "backoff", "Backoff at the preset: every delay of 10,000 draws per retry, by jitter (count per bin)", &["bin ms", "rigid", "full", "equal", "decorrelated", "spread"]),
    ];
    PLOTS
        .iter()
        .map(|&(file, id, title, columns)| {
            let sc = Scenario::find(id).expect("a known scenario");
            let series = (sc.run)(&sc.defaults(), seed);
            (file, plot(&series, title, columns, 720.0, 280.0))
        })
        .collect()
}
