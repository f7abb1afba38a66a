//! Builds one C example from `c-examples/` against the freshly built static
//! library and runs it: `cargo run --example c -- tour` runs
//! `c-examples/tour.c`. With no name it lists the examples. With
//! `--target <triple>` it builds with that target's C compiler and runs the
//! program through `CARGO_TARGET_<TRIPLE>_RUNNER` when one is set.

#[path = "../tests/support/cbuild.rs"]
mod cbuild;

use std::process::exit;

fn main() {
    let examples = cbuild::root().join("c-examples");
    let Some(name) = std::env::args().nth(1) else {
        let mut names: Vec<String> = std::fs::read_dir(&examples)
            .unwrap()
            .filter_map(|entry| {
                let path = entry.ok()?.path();
                (path.extension()? == "c")
                    .then(|| path.file_stem().unwrap().to_string_lossy().into_owned())
            })
            .collect();
        names.sort();
        eprintln!(
            "usage: cargo run --example c -- NAME\nexamples: {}",
            names.join(" ")
        );
        exit(2);
    };
    let source = examples.join(format!("{name}.c"));
    if !source.exists() {
        eprintln!("no example {}", source.display());
        exit(2);
    }
    let exe = cbuild::out_dir().join(format!("example-{name}"));
    if let Err(message) = cbuild::build(&source, &exe, false) {
        eprintln!("{message}");
        exit(1);
    }
    let status = cbuild::command(&exe)
        .args(std::env::args().skip(2))
        .status()
        .expect("run the example");
    exit(status.code().unwrap_or(1));
}
