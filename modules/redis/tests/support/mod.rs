//! Real redis-server processes for the tests, and a small RESP client.
//!
//! Each server runs on 127.0.0.1 on a free high port, with its own temp
//! dir, loads the module built by cargo, and is stopped by its pid when
//! dropped. Readiness and replication are waited for by polling, with a
//! bound, never by a fixed sleep.

#![allow(dead_code)]

pub mod cluster;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A RESP reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Int(i64),
    Simple(String),
    Bulk(Vec<u8>),
    Nil,
    Error(String),
    Array(Vec<Value>),
}

impl Value {
    pub fn int(&self) -> i64 {
        match self {
            Value::Int(n) => *n,
            other => panic!("not an integer: {other:?}"),
        }
    }
    pub fn ints(&self) -> Vec<i64> {
        match self {
            Value::Array(items) => items.iter().map(Value::int).collect(),
            other => panic!("not an array: {other:?}"),
        }
    }
    pub fn items(&self) -> &[Value] {
        match self {
            Value::Array(items) => items,
            other => panic!("not an array: {other:?}"),
        }
    }
    pub fn error(&self) -> &str {
        match self {
            Value::Error(e) => e,
            other => panic!("not an error: {other:?}"),
        }
    }
    pub fn is_error(&self) -> bool {
        matches!(self, Value::Error(_))
    }
    pub fn text(&self) -> String {
        match self {
            Value::Bulk(b) => String::from_utf8_lossy(b).into_owned(),
            Value::Simple(s) => s.clone(),
            other => panic!("not a string: {other:?}"),
        }
    }
}

/// One connection.
pub struct Conn {
    reader: BufReader<TcpStream>,
}

impl Conn {
    pub fn open(port: u16) -> std::io::Result<Conn> {
        let stream = TcpStream::connect(("127.0.0.1", port))?;
        stream.set_read_timeout(Some(Duration::from_secs(30)))?;
        stream.set_nodelay(true)?;
        Ok(Conn {
            reader: BufReader::new(stream),
        })
    }

    /// Sends a command given as words split on spaces.
    pub fn cmd(&mut self, line: &str) -> Value {
        let words: Vec<&[u8]> = line.split_whitespace().map(str::as_bytes).collect();
        self.call(&words)
    }

    pub fn call(&mut self, args: &[&[u8]]) -> Value {
        self.try_call(args).expect("send and reply")
    }

    /// Sends a command and reads its reply; an error when the connection
    /// fails (a server killed or gone), so a caller can tell it from a
    /// reply.
    pub fn try_call(&mut self, args: &[&[u8]]) -> std::io::Result<Value> {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a);
            out.extend_from_slice(b"\r\n");
        }
        self.reader.get_mut().write_all(&out)?;
        self.read_value()
    }

    fn read_line(&mut self) -> std::io::Result<String> {
        let mut line = String::new();
        self.reader.read_line(&mut line)?;
        if !line.ends_with("\r\n") {
            return Err(std::io::Error::other(format!("short line {line:?}")));
        }
        line.truncate(line.len() - 2);
        Ok(line)
    }

    fn read_value(&mut self) -> std::io::Result<Value> {
        let line = self.read_line()?;
        let (kind, rest) = line.split_at(1);
        Ok(match kind {
            "+" => Value::Simple(rest.into()),
            "-" => Value::Error(rest.into()),
            ":" => Value::Int(rest.parse().expect("integer")),
            "$" => {
                let len: i64 = rest.parse().expect("length");
                if len < 0 {
                    Value::Nil
                } else {
                    let mut buf = vec![0u8; len as usize + 2];
                    self.reader.read_exact(&mut buf)?;
                    buf.truncate(len as usize);
                    Value::Bulk(buf)
                }
            }
            "*" => {
                let len: i64 = rest.parse().expect("length");
                if len < 0 {
                    Value::Nil
                } else {
                    let mut items = Vec::with_capacity(len as usize);
                    for _ in 0..len {
                        items.push(self.read_value()?);
                    }
                    Value::Array(items)
                }
            }
            other => panic!("unknown reply type {other:?}"),
        })
    }
}

/// The module to load: `WEIR_REDIS_MODULE`, or else the cdylib this
/// package builds, built here once per test run (`cargo test` builds only
/// the rlib, and an older .so must never be the one tested).
pub fn module_path() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            if let Ok(path) = std::env::var("WEIR_REDIS_MODULE") {
                return PathBuf::from(path);
            }
            let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            let status = Command::new(cargo)
                .args(["build", "--lib", "--manifest-path"])
                .arg(&manifest)
                .status()
                .expect("cargo runs");
            assert!(status.success(), "building the module failed");
            let target = std::env::var("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|_| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
            let path = target.join("debug").join("libweir_redis.so");
            assert!(path.exists(), "{} was not built", path.display());
            path
        })
        .clone()
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

static SERVERS: AtomicUsize = AtomicUsize::new(0);

/// Polls `ready` every few milliseconds until it holds, for at most
/// `bound`.
pub fn wait_for(what: &str, bound: Duration, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(start.elapsed() < bound, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// A running redis-server with the module loaded.
pub struct Server {
    pub port: u16,
    pub dir: PathBuf,
    child: Option<Child>,
    extra: Vec<String>,
    module: PathBuf,
}

impl Server {
    /// A primary with its own temp dir.
    pub fn start(extra: &[&str]) -> Server {
        Server::start_loading(module_path(), extra)
    }

    /// A primary with its own temp dir, loading the module at `module`.
    pub fn start_loading(module: PathBuf, extra: &[&str]) -> Server {
        let n = SERVERS.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("weir-redis-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        let mut server = Server {
            port: 0,
            dir,
            child: None,
            extra: extra.iter().map(|s| s.to_string()).collect(),
            module,
        };
        server.launch();
        server
    }

    /// A replica of `primary`, synced.
    pub fn replica_of(primary: &Server) -> Server {
        let port = primary.port.to_string();
        let replica = Server::start(&["--replicaof", "127.0.0.1", &port]);
        let mut c = replica.conn();
        wait_for("the replica to sync", Duration::from_secs(20), || {
            c.cmd("INFO replication")
                .text()
                .contains("master_link_status:up")
        });
        replica
    }

    /// Starts redis-server on a free port; if it exits at once (another
    /// process took the port between the check and the bind), tries
    /// another port, a few times.
    fn launch(&mut self) {
        for attempt in 1..=3 {
            match self.try_launch() {
                Ok(()) => return,
                Err(log) if attempt == 3 => panic!("redis-server exited: {log}"),
                Err(_) => {}
            }
        }
    }

    fn try_launch(&mut self) -> Result<(), String> {
        self.port = free_port();
        let log = self.dir.join("server.log");
        let mut cmd = Command::new("redis-server");
        cmd.arg("--port")
            .arg(self.port.to_string())
            .args(["--bind", "127.0.0.1", "--daemonize", "no", "--save", ""])
            .arg("--dir")
            .arg(&self.dir)
            .arg("--loadmodule")
            .arg(&self.module)
            .args(&self.extra)
            .stdin(Stdio::null())
            .stdout(Stdio::from(std::fs::File::create(&log).expect("log")))
            .stderr(Stdio::null());
        let mut child = cmd
            .spawn()
            .expect("redis-server runs (apt-get install redis-server)");
        let start = Instant::now();
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                return Err(format!("{status}: {text}"));
            }
            let up = Conn::open(self.port)
                .map(|mut c| c.cmd("PING") == Value::Simple("PONG".into()))
                .unwrap_or(false);
            if up {
                self.child = Some(child);
                return Ok(());
            }
            if start.elapsed() > Duration::from_secs(10) {
                let _ = child.kill();
                let _ = child.wait();
                panic!("redis-server did not answer PING within 10 s");
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    pub fn conn(&self) -> Conn {
        Conn::open(self.port).expect("connect")
    }

    /// Stops the server by its pid (SIGKILL: whatever was not saved is
    /// lost, as in a crash).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Stops it and starts it again on the same dir and settings.
    pub fn restart(&mut self) {
        self.kill();
        self.launch();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
