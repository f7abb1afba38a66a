//! After a measuring run: the table of medians, spreads and ratios to the
//! anchors, read back from criterion's estimates, printed and written to
//! `target/criterion/weir-table.md` (the table BENCHMARKS.md holds).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::SystemTime;

/// One line of the table: a benchmark (`group/outcome/via`, as criterion
/// names it), the anchor it is read against, and the most the ratio may be
/// (`None`: shown for orientation, no target).
pub struct Row {
    pub bench: &'static str,
    pub anchor: &'static str,
    pub target: Option<f64>,
}

/// The anchor names, as criterion files them.
pub const CAS: &str = "anchor/cas_loop/1thread";
pub const MUTEX: &str = "anchor/mutex_lock_unlock/1thread";
pub const CAS_2T: &str = "anchor/cas_loop/2threads";
pub const MUTEX_2T: &str = "anchor/mutex_lock_unlock/2threads";
pub const GOV_ALLOW: &str = "governor_check/allow/direct";
pub const GOV_REFUSE: &str = "governor_check/refuse/direct";
pub const GOV_ALLOW_2T: &str = "governor_check/allow/direct_2threads";
pub const GOV_REFUSE_2T: &str = "governor_check/refuse/direct_2threads";
pub const GOV_KEYED: &str = "governor_check_key/allow/keyed_1e6";
pub const GOV_KEYED_REFUSE: &str = "governor_check_key/refuse/keyed_1e6";

/// Where criterion keeps its estimates: `$CRITERION_HOME`, else
/// `$CARGO_TARGET_DIR/criterion`, else `criterion` in the target directory
/// this benchmark binary was built into (`target/release/deps/..`).
fn criterion_home() -> PathBuf {
    if let Some(home) = std::env::var_os("CRITERION_HOME") {
        return home.into();
    }
    if let Some(target) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(target).join("criterion");
    }
    let exe = std::env::current_exe().expect("the benchmark binary's path");
    exe.ancestors()
        .nth(3)
        .expect("target/<profile>/deps/<binary>")
        .join("criterion")
}

/// The median and the median absolute deviation (ns per decision) of one
/// benchmark, if it was measured in this run (its estimates are newer than
/// `since`).
fn estimate(home: &std::path::Path, bench: &str, since: SystemTime) -> Option<(f64, f64)> {
    let file = home.join(bench).join("new").join("estimates.json");
    let modified = std::fs::metadata(&file).ok()?.modified().ok()?;
    if modified < since {
        return None;
    }
    let text = std::fs::read_to_string(&file).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    let point = |name: &str| json[name]["point_estimate"].as_f64();
    Some((point("median")?, point("median_abs_dev")?))
}

/// Builds the table for `rows` from the estimates written since `since`,
/// prints it and writes it beside criterion's own reports. Rows not measured
/// in this run (filtered out) are left out.
pub fn write(rows: &[Row], since: SystemTime) {
    let home = criterion_home();
    let mut table = String::from(
        "| benchmark (path/outcome/via) | median ns | spread (MAD) ns | anchor | anchor median ns | ratio | target | met | 2-thread CPU ÷ wall |\n\
         |---|---:|---:|---|---:|---:|---:|:-:|---:|\n",
    );
    let mut any = false;
    for row in rows {
        let Some((median, mad)) = estimate(&home, row.bench, since) else {
            continue;
        };
        any = true;
        let anchor = if row.anchor == row.bench {
            None
        } else {
            estimate(&home, row.anchor, since)
        };
        let (anchor_median, ratio) = match anchor {
            Some((anchor_median, _)) => {
                (format!("{anchor_median:.2}"), Some(median / anchor_median))
            }
            None => ("–".into(), None),
        };
        let ratio_text = ratio.map_or("–".into(), |r| format!("{r:.2}×"));
        let (target_text, met) = match (row.target, ratio) {
            (Some(target), Some(ratio)) => (
                format!("≤ {target:.2}×"),
                if ratio <= target { "yes" } else { "**no**" },
            ),
            (Some(target), None) => (format!("≤ {target:.2}×"), "?"),
            (None, _) => ("–".into(), ""),
        };
        let anchor_name = if row.anchor == row.bench {
            "–".to_owned()
        } else {
            format!("`{}`", row.anchor)
        };
        let parallelism =
            crate::support::parallelism(row.bench).map_or(String::new(), |p| format!("{p:.2}"));
        let _ = writeln!(
            table,
            "| `{}` | {median:.2} | ±{mad:.2} | {anchor_name} | {anchor_median} | {ratio_text} | {target_text} | {met} | {parallelism} |",
            row.bench
        );
    }
    if !any {
        return;
    }
    println!("\n{table}");
    let out = home.join("weir-table.md");
    if std::fs::create_dir_all(&home)
        .and_then(|()| std::fs::write(&out, &table))
        .is_ok()
    {
        println!("(table written to {})", out.display());
    }
}
