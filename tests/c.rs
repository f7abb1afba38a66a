//! Runs the C side of the suite inside `cargo test`: every program in
//! `tests/c/` (C11, and C++ for `.cpp` files) and every example in
//! `c-examples/`, each compiled with -Wall -Wextra -Wpedantic -Werror against
//! the freshly built static library and run. A program passes when it exits 0.
//!
//! It follows `cargo test --target <triple>`: the target's C compiler, its
//! native libraries, and its `CARGO_TARGET_<TRIPLE>_RUNNER` (tests/support/
//! cbuild.rs). Each program run is named on stderr as it finishes, past the
//! test harness's capture, so a log shows which programs ran on which
//! target.

#[path = "support/cbuild.rs"]
mod cbuild;

use std::io::Write;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;

/// The C and C++ programs in `dir`, sorted by name.
fn programs(dir: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(cbuild::root().join(dir))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| matches!(path.extension().and_then(|e| e.to_str()), Some("c" | "cpp")))
        .collect();
    found.sort();
    found
}

/// Compiles and runs every program in `dir` (two at a time: the machine has
/// two cores) and fails naming each program that did not build or pass.
fn build_and_run_all(dir: &str) {
    let sources = programs(dir);
    assert!(!sources.is_empty(), "no C programs in {dir}");
    let queue = Mutex::new(sources.clone());
    let failures = Mutex::new(Vec::new());
    let out_dir = cbuild::out_dir().join(dir.replace('/', "-"));
    std::fs::create_dir_all(&out_dir).unwrap();
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| loop {
                let Some(source) = queue.lock().unwrap().pop() else {
                    break;
                };
                let name = source.file_stem().unwrap().to_string_lossy().into_owned();
                let cpp = source.extension().is_some_and(|e| e == "cpp");
                let exe = out_dir.join(&name);
                let result = cbuild::build(&source, &exe, cpp).and_then(|()| {
                    let output = cbuild::command(&exe)
                        .current_dir(cbuild::root())
                        .output()
                        .map_err(|e| format!("{name}: {e}"))?;
                    let text = format!(
                        "{}{}",
                        String::from_utf8_lossy(&output.stdout),
                        String::from_utf8_lossy(&output.stderr)
                    );
                    if output.status.success() {
                        println!("--- {dir}/{name}: ok\n{text}");
                        Ok(())
                    } else {
                        Err(format!("{name} exited with {}:\n{text}", output.status))
                    }
                });
                announce(&format!(
                    "{dir}/{}: {}",
                    source.file_name().unwrap().to_string_lossy(),
                    if result.is_ok() { "ok" } else { "FAILED" }
                ));
                if let Err(message) = result {
                    failures.lock().unwrap().push(message);
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    announce(&format!(
        "{dir}: {} passed, {} failed",
        sources.len() - failures.len(),
        failures.len()
    ));
    assert!(
        failures.is_empty(),
        "{} of {} programs in {dir} failed:\n\n{}",
        failures.len(),
        sources.len(),
        failures.join("\n\n")
    );
}

/// Writes one line to the process's stderr itself, which the test harness
/// does not capture (it captures `print!` and `eprint!` only), naming the
/// target and, when there is one, the runner.
fn announce(line: &str) {
    let runner = cbuild::runner();
    let on = if runner.is_empty() {
        cbuild::target().to_string()
    } else {
        format!("{} via {}", cbuild::target(), runner.join(" "))
    };
    let _ = writeln!(std::io::stderr().lock(), "c [{on}] {line}");
}

#[test]
fn c_tests_pass() {
    build_and_run_all("tests/c");
}

#[test]
fn c_examples_run() {
    build_and_run_all("c-examples");
}

#[test]
fn native_libs_can_be_asked_from_many_threads_at_once() {
    // Every C program is compiled on its own thread, and each asks for the
    // link line: all must get the same one, and none may fail.
    let answers: Vec<Vec<String>> = std::thread::scope(|scope| {
        let askers: Vec<_> = (0..8).map(|_| scope.spawn(cbuild::native_libs)).collect();
        askers.into_iter().map(|a| a.join().unwrap()).collect()
    });
    assert!(
        answers[0].iter().any(|lib| lib == "-lc"),
        "{:?}",
        answers[0]
    );
    assert!(
        answers.iter().all(|libs| *libs == answers[0]),
        "{answers:?}"
    );
}

#[test]
fn header_compiles_in_every_standard() {
    // weir.h alone, with the warnings every C file gets, as C99, C11 and
    // C17 and as C++11, 14, 17 and 20. C89 is not a goal.
    let dir = cbuild::out_dir().join("header-standards");
    std::fs::create_dir_all(&dir).unwrap();
    let c = dir.join("header.c");
    std::fs::write(
        &c,
        "#include \"weir.h\"\nint main(void) { return weir_version() ? 0 : 1; }\n",
    )
    .unwrap();
    let cpp = dir.join("header.cpp");
    std::fs::write(
        &cpp,
        "#include \"weir.h\"\nint main() { return weir_version() ? 0 : 1; }\n",
    )
    .unwrap();
    let mut failures = Vec::new();
    let cases = [
        ("c99", &c, false),
        ("c11", &c, false),
        ("c17", &c, false),
        ("c++11", &cpp, true),
        ("c++14", &cpp, true),
        ("c++17", &cpp, true),
        ("c++20", &cpp, true),
    ];
    for (std, source, is_cpp) in cases {
        let tool = cbuild::compiler(is_cpp);
        let output = Command::new(tool.path())
            .arg(format!("-std={std}"))
            .args([
                "-Wall",
                "-Wextra",
                "-Wpedantic",
                "-Werror",
                "-fsyntax-only",
                "-I",
            ])
            .arg(cbuild::root().join("include"))
            .arg(source)
            .output()
            .expect("run the compiler");
        if !output.status.success() {
            failures.push(format!(
                "-std={std}:\n{}",
                String::from_utf8_lossy(&output.stderr)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "weir.h does not compile:\n{}",
        failures.join("\n")
    );
}

/// The structs with a 64-bit field, which the header aligns to 8 bytes.
const ALIGNED_STRUCTS: &[&str] = &[
    "weir_backoff",
    "weir_breaker_policy",
    "weir_breaker_tally",
    "weir_deadline",
    "weir_limiter",
    "weir_pool_policy",
    "weir_pool_stats",
    "weir_rate",
    "weir_rate_limit",
    "weir_recoveries",
    "weir_region_header",
    "weir_gcra",
    "weir_gcra_limit",
    "weir_shedder_policy",
    "weir_shedder_ticket",
    "weir_breaker_ticket",
    "weir_budget_policy",
    "weir_concurrency_policy",
    "weir_concurrency_ticket",
    "weir_concurrency_partition",
    "weir_shedder_stats",
    "weir_window_total",
    "weir_charge_item",
    "weir_charge_result",
    "weir_counts",
    "weir_lease_policy",
    "weir_lease_answer",
    "weir_lease_stats",
    "weir_keyed_reading",
];

#[test]
fn the_header_compiles_as_c99_with_its_structs_8_aligned() {
    // C99 has no _Alignof or _Static_assert: WEIR_ALIGN is the compiler's
    // attribute there, and a member's offset after a char shows the
    // alignment (a negative array size fails the compile otherwise).
    let mut source = String::from("#include <stddef.h>\n#include \"weir.h\"\n");
    for name in ALIGNED_STRUCTS {
        source += &format!(
            "struct probe_{name} {{ char c; {name} x; }};\n\
             typedef char {name}_is_8_aligned[offsetof(struct probe_{name}, x) == 8 ? 1 : -1];\n"
        );
    }
    let dir = cbuild::out_dir();
    let path = dir.join("header_c99.c");
    std::fs::write(&path, source).unwrap();
    let mut cmd = cbuild::compiler(false).to_command();
    cmd.args(["-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Werror"])
        .arg("-I")
        .arg(cbuild::root().join("include"))
        .args(["-fsyntax-only"])
        .arg(&path);
    let output = cmd.output().unwrap();
    assert!(
        output.status.success(),
        "{cmd:?}:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    announce("include/weir.h as C99: ok");
}

#[test]
fn every_struct_with_a_64_bit_field_is_8_aligned_and_pinned() {
    // Read from the generated header: the structs with an int64_t, uint64_t
    // or double field, and those declared WEIR_ALIGN(8), must both be the
    // list above, and the C++ check pins each.
    let header = std::fs::read_to_string(cbuild::root().join("include/weir.h")).unwrap();
    let cpp = std::fs::read_to_string(cbuild::root().join("tests/c/header.cpp")).unwrap();
    let (mut wide, mut aligned) = (Vec::new(), Vec::new());
    let mut body: Option<(bool, bool)> = None; // (declared aligned, has a 64-bit field)
    for line in header.lines() {
        if line.starts_with("typedef struct") && line.ends_with('{') {
            body = Some((line.contains("WEIR_ALIGN(8)"), false));
        } else if let Some((is_aligned, has_wide)) = body.as_mut() {
            if let Some(name) = line.strip_prefix("} ") {
                let name = name.trim_end_matches(';').to_string();
                if *is_aligned {
                    aligned.push(name.clone());
                }
                if *has_wide {
                    wide.push(name);
                }
                body = None;
            } else if ["int64_t ", "uint64_t ", "double "]
                .iter()
                .any(|t| line.trim_start().starts_with(t))
            {
                *has_wide = true;
            }
        }
    }
    let mut expected: Vec<String> = ALIGNED_STRUCTS.iter().map(|s| s.to_string()).collect();
    expected.sort();
    wide.sort();
    aligned.sort();
    assert_eq!(wide, expected, "the header's structs with a 64-bit field");
    assert_eq!(aligned, expected, "the header's WEIR_ALIGN(8) structs");
    for name in ALIGNED_STRUCTS {
        assert!(
            cpp.contains(&format!("static_assert(alignof({name}) == 8")),
            "tests/c/header.cpp does not pin {name}"
        );
    }
}
