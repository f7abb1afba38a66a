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
        if line.is_empty() || !line.is_char_boundary(1) {
            return Err(not_resp(&line));
        }
        let (kind, rest) = line.split_at(1);
        Ok(match kind {
            "+" => Value::Simple(rest.into()),
            "-" => Value::Error(rest.into()),
            ":" => Value::Int(rest.parse().map_err(|_| not_resp(&line))?),
            "$" => {
                let len: i64 = rest.parse().map_err(|_| not_resp(&line))?;
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
                let len: i64 = rest.parse().map_err(|_| not_resp(&line))?;
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
            _ => return Err(not_resp(&line)),
        })
    }
}

/// The error for a line that is no RESP reply (another kind of server
/// answered).
fn not_resp(line: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("not a RESP reply: {line:?}"),
    )
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

/// What a probe of a starting server's port found.
enum Probe {
    /// The server of process `pid` answers PING: it is up.
    Ready,
    /// Nothing listens yet, the connection failed (a port another process
    /// holds for a moment), or the server is still loading its data.
    NotYet,
    /// Another redis-server answers there: the one started cannot bind.
    Taken(String),
}

/// Whether the server of process `pid` answers on `port`. Its
/// `process_id` tells it from another test's server that took the port
/// first, and a connection that fails is not ready, not a failure: a port
/// free when asked may be held by another process for a moment.
fn probe(port: u16, pid: u32) -> Probe {
    let Ok(mut c) = Conn::open(port) else {
        return Probe::NotYet;
    };
    let Ok(Value::Bulk(info)) = c.try_call(&[b"INFO", b"server"]) else {
        return Probe::NotYet;
    };
    let info = String::from_utf8_lossy(&info);
    let answering = info
        .lines()
        .find_map(|l| l.strip_prefix("process_id:"))
        .and_then(|p| p.trim().parse::<u32>().ok());
    match answering {
        Some(other) if other != pid => {
            Probe::Taken(format!("answered by process {other}, not {pid}"))
        }
        Some(_) if c.try_call(&[b"PING"]).ok() == Some(Value::Simple("PONG".into())) => {
            Probe::Ready
        }
        _ => Probe::NotYet,
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

    /// Starts redis-server on a free port and waits, polling with a
    /// bound, until it answers PING. A port free when asked can be taken
    /// before redis-server binds it (another test's server, or another
    /// process asking for a free port at the same moment): a server that
    /// exits at once, or a port another process answers on, means a
    /// fresh try on another port, a few times.
    fn launch(&mut self) {
        let mut tries = Vec::new();
        for _ in 0..5 {
            match self.try_launch() {
                Ok(()) => return,
                Err(why) => tries.push(why),
            }
        }
        panic!("redis-server did not start: {}", tries.join("\n"));
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
        // A cluster node's bus port is its port + 10000 unless given: past
        // 65535, or taken, for many free ports. One asked for instead.
        if self.extra.iter().any(|a| a == "--cluster-enabled") {
            cmd.arg("--cluster-port").arg(free_port().to_string());
        }
        let mut child = cmd
            .spawn()
            .expect("redis-server runs (apt-get install redis-server)");
        let start = Instant::now();
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                return Err(format!("port {}: {status}: {text}", self.port));
            }
            match probe(self.port, child.id()) {
                Probe::Ready => {
                    self.child = Some(child);
                    return Ok(());
                }
                Probe::NotYet => {}
                Probe::Taken(why) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(format!("port {}: {why}", self.port));
                }
            }
            if start.elapsed() > Duration::from_secs(10) {
                let _ = child.kill();
                let _ = child.wait();
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                panic!("redis-server did not answer PING within 10 s: {text}");
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
