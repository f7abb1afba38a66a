//! The bay: each of weir's policies acting on seeded traffic, as a series of
//! points. The same functions run natively (the `bay` binary prints them as
//! JSON) and in the browser (this crate compiled to
//! `wasm32-unknown-unknown`, driven by `web/bay.js` through the few plain
//! exports in [`wasm`]), where uPlot draws them from the plot descriptions
//! here ([`Plot`], [`Column`]); the README's pictures are screenshots of
//! those plots. Nothing in the page decides anything:
//! every pass, refusal and delay comes from weir-core, and every draw from
//! the seeded generator in [`Rng`], so a view is reproducible and the page
//! and a native run agree point by point.

pub mod replay;
pub mod scenarios;
pub mod wasm;

include!(concat!(env!("OUT_DIR"), "/field_docs.rs"));

use std::fmt::Write;

/// splitmix64: the scenarios' only source of chance (c-examples/tour.c
/// uses the same one), so a C program can replay a scenario's traffic.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator starting from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A draw from [0, 1) with 53 random bits: exact in every IEEE double
    /// arithmetic, so wasm, native Rust and C see the same value.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / 9_007_199_254_740_992.0
    }

    /// A gap between arrivals averaging `mean_ns`: uniform over
    /// [mean / 2, 3 mean / 2). Only +, × and a truncation, no logarithm, so
    /// no libm's rounding can make two builds disagree.
    pub fn gap(&mut self, mean_ns: f64) -> i64 {
        ((mean_ns * (0.5 + self.unit())) as i64).max(1)
    }
}

/// How a knob lands in the policy's C struct (for "copy as C").
#[derive(Clone, Copy, Debug)]
pub struct CField {
    /// The field of the C struct.
    pub field: &'static str,
    /// What the knob's value is multiplied by (ms to ns: 1e6).
    pub scale: f64,
    /// Whether the field is an integer type.
    pub int: bool,
    /// The C variable it belongs to: "" for the panel's `policy`, else one
    /// of [`Scenario::c_more`]'s (the retry panel's `backoff`).
    pub of: &'static str,
}

/// One input of a scenario: a policy field or a trait of the traffic.
#[derive(Clone, Copy, Debug)]
pub struct Knob {
    /// Its key in the URL and in the JSON.
    pub name: &'static str,
    /// What the page shows beside it.
    pub label: &'static str,
    /// Its unit ("ms", "s", "calls/s", "fraction"), "" for a plain number.
    pub unit: &'static str,
    /// For a choice: its words, the value being the word's index (the C
    /// enum's integer); empty for a number.
    pub choices: &'static [&'static str],
    /// What it does, for a knob the header has no field doc for (the
    /// traffic, a constructor's argument), or a word on how the panel uses
    /// it; "" for none.
    pub about: &'static str,
    /// The preset's value (for a traffic knob, the scenario's usual one).
    pub default: f64,
    /// The slider's range and step.
    pub min: f64,
    pub max: f64,
    pub step: f64,
    /// Where it goes in the C struct; `None` for the traffic.
    pub c: Option<CField>,
}

/// A C field for a knob: `c!("k")`, `c!(int "probe_ns", 1e6)`,
/// `c!(int "size")`; `c!(in "backoff", ..)` for a field of another of the
/// panel's C variables than `policy`.
macro_rules! c {
    (in $of:literal, int $f:literal, $s:expr) => {
        Some($crate::CField {
            field: $f,
            scale: $s,
            int: true,
            of: $of,
        })
    };
    (in $of:literal, int $f:literal) => {
        $crate::c!(in $of, int $f, 1.0)
    };
    (in $of:literal, $f:literal) => {
        Some($crate::CField {
            field: $f,
            scale: 1.0,
            int: false,
            of: $of,
        })
    };
    (int $f:literal, $s:expr) => {
        $crate::c!(in "", int $f, $s)
    };
    (int $f:literal) => {
        $crate::c!(in "", int $f, 1.0)
    };
    ($f:literal) => {
        $crate::c!(in "", $f)
    };
}
pub(crate) use c;

/// The literal given, or "" (for the knobs' optional parts).
macro_rules! or_empty {
    () => {
        ""
    };
    ($text:literal) => {
        $text
    };
}
pub(crate) use or_empty;

/// A scenario's knobs as a struct of `f64` fields, with their table. A
/// knob is `name: "label" [unit] {choices} = default, [min, max, step],
/// C field $(, "about")?;`, the unit and the choices optional:
///
/// ```text
/// probe_ms: "probe after" ["ms"] = 1000.0, [50.0, 5000.0, 50.0], c!(int "probe_ns", MS);
/// form: "budget form" {"tokens", "percent"} = 1.0, [0.0, 1.0, 1.0], c!(int "form");
/// rate: "traffic: rate" ["calls/s"] = 100.0, [1.0, 1000.0, 1.0], None, "Calls arrive ...";
/// ```
macro_rules! knobs {
    ($(#[$m:meta])* $name:ident { $($field:ident : $label:literal $([$unit:literal])? $({$($choice:literal),+ $(,)?})? = $def:expr, [$min:expr, $max:expr, $step:expr], $c:expr $(, $about:literal)?;)* }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct $name { $(#[doc = $label] pub $field: f64,)* }
        impl $name {
            /// The knobs' table, in field order.
            pub const KNOBS: &'static [$crate::Knob] = &[$($crate::Knob {
                name: stringify!($field), label: $label,
                unit: $crate::or_empty!($($unit)?),
                choices: &[$($($choice),+)?],
                about: $crate::or_empty!($($about)?),
                default: $def,
                min: $min, max: $max, step: $step, c: $c,
            },)*];
            /// The knobs from values in table order; a missing one is its default.
            pub fn from_values(values: &[f64]) -> Self {
                let mut at = values.iter().copied();
                $name { $($field: at.next().unwrap_or($def),)* }
            }
        }
        impl Default for $name {
            fn default() -> Self { Self::from_values(&[]) }
        }
    };
}
pub(crate) use knobs;

/// What a column of a panel's series holds: its unit and its kind.
#[derive(Clone, Copy, Debug)]
pub struct Column {
    /// Its name in the series.
    pub name: &'static str,
    /// Its unit, shown on the axis it is plotted against and in the
    /// readout: "s", "ms", "calls/s", "calls", "fraction".
    pub unit: &'static str,
    /// Whether its values are whole numbers (counts): an axis of such
    /// columns ticks on whole numbers only.
    pub whole: bool,
    /// What it is, one of [`KINDS`]: the page draws every column of a kind
    /// in that kind's colour, in every panel.
    pub kind: &'static str,
}

impl Column {
    /// A column of measurements (times, ratios, averages).
    pub const fn new(name: &'static str, unit: &'static str, kind: &'static str) -> Column {
        Column {
            name,
            unit,
            whole: false,
            kind,
        }
    }

    /// A column of counts.
    pub const fn count(name: &'static str, unit: &'static str, kind: &'static str) -> Column {
        Column {
            name,
            unit,
            whole: true,
            kind,
        }
    }
}

/// The kinds of column, each drawn in one colour on every panel (the
/// palette in web/bay.js). The first thirteen are what a column means, each
/// with a colour of its own: calls let through (`admitted`), refused (or
/// waited), let through by the probe, a limit or ceiling, held (in flight,
/// live), idle, offered, retried, a level (a ratio, a CPU reading, a
/// latency), made, evicted, what a formula expects, and calls a keyed
/// table overflowed; `axis` is an x axis. The rest tell apart the variants
/// a panel compares (the limiters, the words, the jitters, the shedder's
/// classes, the partitions, the keyed table and the bloom array), each by
/// its own colour and dash.
pub const KINDS: &[&str] = &[
    "admitted",
    "refused",
    "probe",
    "limit",
    "held",
    "idle",
    "offered",
    "retried",
    "level",
    "made",
    "evicted",
    "expected",
    "overflowed",
    "axis",
    "bucket",
    "sliding",
    "period",
    "rate word",
    "GCRA word",
    "rigid",
    "full",
    "equal",
    "decorrelated",
    "spread",
    "SHEDDABLE",
    "SHEDDABLE_PLUS",
    "CRITICAL",
    "CRITICAL_PLUS",
    "partition A",
    "partition B",
    "keyed table",
    "bloom array",
];

/// One plot of a panel: an x column and the columns drawn against it,
/// which share one y axis and so one unit.
#[derive(Clone, Copy, Debug)]
pub struct Plot {
    /// The x column.
    pub x: &'static str,
    /// The x axis' title, its unit being the x column's ("time" for "time (s)").
    pub x_title: &'static str,
    /// The y axis' title, its unit being the columns'.
    pub y_title: &'static str,
    /// The columns drawn, in drawing order (a later one over an earlier).
    pub series: &'static [&'static str],
}

impl Plot {
    /// A plot of `series` against the time `t` in seconds.
    pub const fn in_time(y_title: &'static str, series: &'static [&'static str]) -> Plot {
        Plot {
            x: "t",
            x_title: "time",
            y_title,
            series,
        }
    }
}

/// Named columns of equal length: what a panel plots.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Series {
    pub columns: Vec<(&'static str, Vec<f64>)>,
    /// Figures read off the run (time to recover, ...), shown under the plot.
    pub notes: Vec<(&'static str, f64)>,
}

impl Series {
    /// An empty series with these columns.
    pub fn with(names: &[&'static str]) -> Series {
        Series {
            columns: names.iter().map(|&n| (n, Vec::new())).collect(),
            notes: Vec::new(),
        }
    }

    /// Appends one point: a value per column, in order.
    pub fn push(&mut self, row: &[f64]) {
        for ((_, column), &v) in self.columns.iter_mut().zip(row) {
            column.push(v);
        }
    }

    /// The column called `name`.
    pub fn column(&self, name: &str) -> &[f64] {
        self.columns
            .iter()
            .find(|(n, _)| *n == name)
            .map_or(&[], |(_, c)| c)
    }

    /// `{"columns":{"t":[..],..},"notes":{..}}`; numbers in Rust's shortest
    /// round-trip form, NaN and infinities as null.
    pub fn to_json(&self) -> String {
        let mut s = String::from("{\"columns\":{");
        for (i, (name, values)) in self.columns.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            let _ = write!(s, "\"{name}\":[");
            for (j, v) in values.iter().enumerate() {
                if j > 0 {
                    s.push(',');
                }
                number(&mut s, *v);
            }
            s.push(']');
        }
        s.push_str("},\"notes\":{");
        for (i, (name, v)) in self.notes.iter().enumerate() {
            if i > 0 {
                s.push(',');
            }
            let _ = write!(s, "\"{name}\":");
            number(&mut s, *v);
        }
        s.push_str("}}");
        s
    }
}

fn number(s: &mut String, v: f64) {
    if v.is_finite() {
        let _ = write!(s, "{v}");
    } else {
        s.push_str("null");
    }
}

fn quoted(s: &mut String, text: &str) {
    s.push('"');
    for ch in text.chars() {
        match ch {
            '"' => s.push_str("\\\""),
            '\\' => s.push_str("\\\\"),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s.push('"');
}

/// One panel of the page.
pub struct Scenario {
    /// Its key in the URL and on the command line.
    pub id: &'static str,
    pub title: &'static str,
    /// What the plot shows, in a sentence.
    pub about: &'static str,
    /// The C policy struct and its preset function ("" when the panel has
    /// no single C policy).
    pub c_type: &'static str,
    pub c_preset: &'static str,
    pub knobs: &'static [Knob],
    /// What each plotted column holds.
    pub columns: &'static [Column],
    /// Which columns go on which plot.
    pub plots: &'static [Plot],
    pub run: fn(&[f64], u64) -> Series,
    /// For a panel whose policy is constructor arguments rather than one
    /// struct: the weir.h calls that make it, as statements.
    pub c_calls: Option<fn(&[f64]) -> String>,
    /// Further C structs the copied C declares after `policy`, each as
    /// (variable, type, preset function), for a panel with two policies.
    pub c_more: &'static [(&'static str, &'static str, &'static str)],
}

impl Scenario {
    /// The scenario called `id`.
    pub fn find(id: &str) -> Option<&'static Scenario> {
        scenarios::ALL.iter().find(|s| s.id == id)
    }

    /// The knobs' defaults, in table order.
    pub fn defaults(&self) -> Vec<f64> {
        self.knobs.iter().map(|k| k.default).collect()
    }

    /// What a plotted column holds.
    pub fn column(&self, name: &str) -> Option<&'static Column> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// The C field a knob sets (`weir_breaker_policy.probe_ns`) and the
    /// header's comment above it; `None` for a knob with no struct field.
    pub fn field_doc(&self, knob: &Knob) -> Option<(String, &'static str)> {
        let c = knob.c?;
        let ty = if c.of.is_empty() {
            self.c_type
        } else {
            self.c_more.iter().find(|m| m.0 == c.of)?.1
        };
        let doc = FIELD_DOCS
            .iter()
            .find(|d| d.0 == ty && d.1 == c.field)
            .map_or("", |d| d.2);
        Some((format!("{ty}.{}", c.field), doc))
    }

    /// The policy knobs as a C struct literal for weir.h, written with
    /// designated initialisers so that fields added later (and `reserved`)
    /// start at zero, whatever their order.
    pub fn c_literal(&self, values: &[f64]) -> String {
        if self.c_type.is_empty() {
            let values: Vec<f64> = (0..self.knobs.len())
                .map(|i| values.get(i).copied().unwrap_or(self.knobs[i].default))
                .collect();
            return self.c_calls.map_or_else(String::new, |calls| {
                format!(
                    "/* {}: the bay's knobs as weir.h calls */\n{}",
                    self.title,
                    calls(&values)
                )
            });
        }
        let mut s = String::new();
        let structs = [("", self.c_type, self.c_preset)];
        for (var, ty, preset) in structs.iter().chain(self.c_more) {
            let _ = write!(
                s,
                "/* {}: the bay's knobs over {preset}() */\nstatic const {ty} {} = {{\n",
                self.title,
                if var.is_empty() { "policy" } else { var }
            );
            for (i, knob) in self.knobs.iter().enumerate() {
                let Some(c) = knob.c.filter(|c| c.of == *var) else {
                    continue;
                };
                let v = values.get(i).copied().unwrap_or(knob.default) * c.scale;
                if c.int {
                    let _ = writeln!(s, "    .{} = {},", c.field, v.round() as i64);
                } else {
                    let _ = writeln!(s, "    .{} = {:?},", c.field, v);
                }
            }
            s.push_str("};\n");
        }
        s
    }
}

/// Every scenario's table as JSON, for the page to build its panels from:
/// its knobs (each with its unit, its choices, and what its C field does
/// in the header's words), what each plotted column holds, and its plots.
pub fn meta_json() -> String {
    let mut s = String::from("[");
    for (i, sc) in scenarios::ALL.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str("{\"id\":");
        quoted(&mut s, sc.id);
        s.push_str(",\"title\":");
        quoted(&mut s, sc.title);
        s.push_str(",\"about\":");
        quoted(&mut s, sc.about);
        s.push_str(",\"c\":");
        s.push_str(if sc.c_type.is_empty() && sc.c_calls.is_none() {
            "false"
        } else {
            "true"
        });
        s.push_str(",\"columns\":{");
        for (j, col) in sc.columns.iter().enumerate() {
            if j > 0 {
                s.push(',');
            }
            quoted(&mut s, col.name);
            s.push_str(":{\"unit\":");
            quoted(&mut s, col.unit);
            let _ = write!(s, ",\"whole\":{},\"kind\":", col.whole);
            quoted(&mut s, col.kind);
            s.push('}');
        }
        s.push_str("},\"plots\":[");
        for (j, plot) in sc.plots.iter().enumerate() {
            if j > 0 {
                s.push(',');
            }
            s.push_str("{\"x\":");
            quoted(&mut s, plot.x);
            s.push_str(",\"xTitle\":");
            quoted(&mut s, plot.x_title);
            s.push_str(",\"yTitle\":");
            quoted(&mut s, plot.y_title);
            s.push_str(",\"series\":[");
            for (k, col) in plot.series.iter().enumerate() {
                if k > 0 {
                    s.push(',');
                }
                quoted(&mut s, col);
            }
            s.push_str("]}");
        }
        s.push_str("],\"knobs\":[");
        for (j, k) in sc.knobs.iter().enumerate() {
            if j > 0 {
                s.push(',');
            }
            s.push_str("{\"name\":");
            quoted(&mut s, k.name);
            s.push_str(",\"label\":");
            quoted(&mut s, k.label);
            s.push_str(",\"unit\":");
            quoted(&mut s, k.unit);
            s.push_str(",\"choices\":[");
            for (c, word) in k.choices.iter().enumerate() {
                if c > 0 {
                    s.push(',');
                }
                quoted(&mut s, word);
            }
            s.push_str("],\"about\":");
            quoted(&mut s, k.about);
            let (field, doc) = sc.field_doc(k).unwrap_or_default();
            s.push_str(",\"field\":");
            quoted(&mut s, &field);
            s.push_str(",\"doc\":");
            quoted(&mut s, doc);
            for (key, v) in [
                ("default", k.default),
                ("min", k.min),
                ("max", k.max),
                ("step", k.step),
            ] {
                let _ = write!(s, ",\"{key}\":");
                number(&mut s, v);
            }
            let policy = !k.label.starts_with("traffic");
            let _ = write!(s, ",\"policy\":{policy}}}");
        }
        s.push_str("]}");
    }
    s.push(']');
    s
}
