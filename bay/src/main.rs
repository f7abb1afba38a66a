//! The bay's command line.
//!
//! ```text
//! bay [serve] [--port N]            build web/bay.wasm, install uPlot (npm ci, once),
//!                                   serve bay/web on 127.0.0.1 (default 8417)
//! bay json SCENARIO [SEED] [k=v..]  one scenario's series as JSON, knobs by name (a choice by word or number)
//! bay c SCENARIO [k=v..]            its policy as a C struct literal
//! bay meta                          every scenario's knobs, columns and plots, as JSON
//! ```
//!
//! The page draws with uPlot, from npm (bay/package.json, pinned by
//! bay/package-lock.json): `bay serve` runs `npm ci --omit=dev` in bay/
//! when bay/node_modules holds no uPlot yet, and then serves uPlot's two
//! files from there itself, so the page fetches nothing from anywhere else
//! and, once installed, works offline. The README's pictures are the
//! page's own plots, saved by `BAY_PICTURES=write bash .ci/run bay`.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{exit, Command};

use bay::{meta_json, Scenario};

/// The seed the page starts from (and so the README's pictures).
const SEED: u64 = 42;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let word = args.first().map_or("serve", String::as_str);
    match word {
        "json" | "c" => {
            let sc = scenario(args.get(1));
            let mut rest = &args[2..];
            let mut seed = SEED;
            if word == "json" {
                if let Some(s) = rest.first().and_then(|s| s.parse().ok()) {
                    seed = s;
                    rest = &rest[1..];
                }
            }
            let values = knob_values(sc, rest);
            if word == "json" {
                println!("{}", (sc.run)(&values, seed).to_json());
            } else {
                print!("{}", sc.c_literal(&values));
            }
        }
        "meta" => println!("{}", meta_json()),
        "serve" | "--port" => serve(&args),
        _ => die("usage: bay [serve [--port N]] | json SCENARIO [SEED] [k=v..] | c SCENARIO [k=v..] | meta"),
    }
}

fn die(why: &str) -> ! {
    eprintln!("bay: {why}");
    exit(2)
}

fn scenario(id: Option<&String>) -> &'static Scenario {
    let id = id.map_or("", String::as_str);
    Scenario::find(id).unwrap_or_else(|| {
        let ids: Vec<_> = bay::scenarios::ALL.iter().map(|s| s.id).collect();
        die(&format!("no scenario {id:?}; one of {}", ids.join(", ")))
    })
}

/// The defaults with `name=value` pairs laid over them; a choice's value
/// may be its word (`jitter=equal`) or its integer.
fn knob_values(sc: &Scenario, pairs: &[String]) -> Vec<f64> {
    let mut values = sc.defaults();
    for pair in pairs {
        let (name, value) = pair
            .split_once('=')
            .unwrap_or_else(|| die(&format!("{pair}: not name=value")));
        let at = sc
            .knobs
            .iter()
            .position(|k| k.name == name)
            .unwrap_or_else(|| die(&format!("no knob {name}")));
        let knob = &sc.knobs[at];
        values[at] = match knob.choices.iter().position(|w| *w == value) {
            Some(i) => knob.min + i as f64 * knob.step,
            None => value.parse().unwrap_or_else(|_| {
                die(&format!(
                    "{pair}: not a number{}",
                    if knob.choices.is_empty() {
                        String::new()
                    } else {
                        format!(" nor one of {}", knob.choices.join(", "))
                    }
                ))
            }),
        };
    }
    values
}

/// The page's folder: bay/web beside this crate's manifest.
fn web_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("web")
}

/// Builds the page's wasm with the same cargo that runs this, into the
/// workspace's target dir, and copies it beside index.html.
fn build_wasm() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let status = Command::new(cargo)
        .args([
            "build",
            "--release",
            "--lib",
            "--target",
            "wasm32-unknown-unknown",
            "--manifest-path",
        ])
        .arg(&manifest)
        .status()
        .unwrap_or_else(|e| die(&format!("cargo: {e}")));
    if !status.success() {
        die("building bay.wasm failed (rustup target add wasm32-unknown-unknown?)");
    }
    let target = std::env::var("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    let built = target.join("wasm32-unknown-unknown/release/bay.wasm");
    std::fs::copy(&built, web_dir().join("bay.wasm"))
        .unwrap_or_else(|e| die(&format!("{}: {e}", built.display())));
}

/// uPlot's files, installed by npm into bay/node_modules.
fn uplot_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("node_modules/uplot/dist")
}

/// Installs uPlot from bay/package-lock.json (`npm ci --omit=dev`, the
/// browser tests' playwright-core left out) when it is not there yet.
fn install_uplot() {
    if uplot_dir().join(UPLOT[0]).is_file() {
        return;
    }
    println!("installing uPlot: npm ci --omit=dev in bay/ (once)");
    let status = Command::new("npm")
        .args(["ci", "--omit=dev", "--no-audit", "--no-fund"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .unwrap_or_else(|e| die(&format!("npm: {e} (the page draws with uPlot, from npm)")));
    if !status.success() {
        die("npm ci failed: the page needs uPlot in bay/node_modules");
    }
}

/// The files the page loads from uPlot's dist/.
const UPLOT: [&str; 2] = ["uPlot.iife.min.js", "uPlot.min.css"];

/// Serves bay/web on 127.0.0.1: the page's four files and uPlot's two,
/// and nothing else, so it needs nothing from anywhere else.
fn serve(args: &[String]) {
    let port: u16 = args
        .iter()
        .position(|a| a == "--port")
        .and_then(|i| args.get(i + 1))
        .map_or(8417, |p| p.parse().unwrap_or_else(|_| die("--port N")));
    if std::env::var_os("BAY_NO_BUILD").is_none() {
        build_wasm();
        install_uplot();
    }
    let listener = TcpListener::bind(("127.0.0.1", port))
        .unwrap_or_else(|e| die(&format!("127.0.0.1:{port}: {e}")));
    println!("the bay: http://127.0.0.1:{port}/");
    let _ = std::io::stdout().flush();
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        // A thread a connection: a browser's speculative connection that
        // never sends a request must not hold up the page's own.
        std::thread::spawn(move || answer(stream));
    }
}

/// Answers one request on `stream` with a file of the page, or 404.
fn answer(mut stream: std::net::TcpStream) {
    let mut request = [0u8; 4096];
    let n = stream.read(&mut request).unwrap_or(0);
    let line = String::from_utf8_lossy(&request[..n]);
    let path = line.split_whitespace().nth(1).unwrap_or("/");
    let path = path.split('?').next().unwrap_or("/");
    let name = if path == "/" {
        "index.html"
    } else {
        path.trim_start_matches('/')
    };
    let known = ["index.html", "bay.js", "bay.css", "bay.wasm"];
    let dir = if UPLOT.contains(&name) {
        uplot_dir()
    } else {
        web_dir()
    };
    let (status, body, kind) = match known.iter().chain(&UPLOT).find(|k| **k == name) {
        Some(file) => match std::fs::read(dir.join(file)) {
            Ok(body) => ("200 OK", body, content_type(file)),
            Err(_) => ("404 Not Found", b"missing\n".to_vec(), "text/plain"),
        },
        None => ("404 Not Found", b"not here\n".to_vec(), "text/plain"),
    };
    let head = format!(
            "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
            body.len()
        );
    let _ = stream
        .write_all(head.as_bytes())
        .and_then(|_| stream.write_all(&body));
}

fn content_type(file: &str) -> &'static str {
    match file.rsplit('.').next() {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("wasm") => "application/wasm",
        _ => "application/octet-stream",
    }
}
