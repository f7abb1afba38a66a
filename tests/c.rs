//! Runs the C side of the suite inside `cargo test`: every program in
//! `tests/c/` (C11, and C++ for `.cpp` files) and every example in
//! `c-examples/`, each compiled with -Wall -Wextra -Wpedantic -Werror against
//! the freshly built static library and run. A program passes when it exits 0.

#[path = "support/cbuild.rs"]
mod cbuild;

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
                    let output = Command::new(&exe)
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
                if let Err(message) = result {
                    failures.lock().unwrap().push(message);
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} of {} programs in {dir} failed:\n\n{}",
        failures.len(),
        sources.len(),
        failures.join("\n\n")
    );
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
