//! A small Redis Cluster client over [`Conn`]: it routes each command by
//! its key's hash slot, follows `MOVED` (and re-reads the slot map) and
//! `ASK` (with `ASKING`), and re-reads the slot map when a node stops
//! answering, as a cluster client (redis-py's `RedisCluster`, go-redis's
//! `ClusterClient`) does. Every node is on 127.0.0.1.

use std::collections::hash_map::Entry;
use std::collections::HashMap;

use super::{Conn, Value};

/// The number of hash slots.
pub const SLOTS: usize = 16384;

/// CRC16/XMODEM, the checksum Redis Cluster hashes keys with.
pub fn crc16(data: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &byte in data {
        crc ^= u16::from(byte) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// A key's hash slot: only the part between the first `{` and the next
/// `}` is hashed when that part is not empty (a hash tag).
pub fn slot(key: &[u8]) -> usize {
    let hashed = match key.iter().position(|&c| c == b'{') {
        Some(open) => match key[open + 1..].iter().position(|&c| c == b'}') {
            Some(len) if len > 0 => &key[open + 1..open + 1 + len],
            _ => key,
        },
        None => key,
    };
    usize::from(crc16(hashed)) % SLOTS
}

/// Why a command got no reply.
#[derive(Debug)]
pub enum Failure {
    /// No connection to the node that owns the slot: the command was not
    /// sent.
    Down(String),
    /// The connection failed after the command was sent: it may or may
    /// not have run.
    Lost(String),
}

/// A connection to a whole cluster.
pub struct Cluster {
    /// Every port ever seen, asked in turn for the slot map.
    known: Vec<u16>,
    /// The port of each slot's primary.
    owner: Vec<u16>,
    conns: HashMap<u16, Conn>,
    /// Redirections followed, for the tests to check.
    pub moved: usize,
    pub asked: usize,
}

/// The port in a redirection's `host:port`.
fn port_of(address: &str) -> u16 {
    let (host, port) = address.rsplit_once(':').expect("host:port");
    assert_eq!(host, "127.0.0.1", "a node outside 127.0.0.1: {address}");
    port.parse().expect("a port")
}

impl Cluster {
    /// A client that first asks `seeds` for the slot map.
    pub fn new(seeds: &[u16]) -> Cluster {
        let mut cluster = Cluster {
            known: seeds.to_vec(),
            owner: vec![0; SLOTS],
            conns: HashMap::new(),
            moved: 0,
            asked: 0,
        };
        assert!(cluster.refresh(), "no node answered CLUSTER SLOTS");
        cluster
    }

    /// Reads the slot map from the first node that answers `CLUSTER
    /// SLOTS`; false when none does.
    pub fn refresh(&mut self) -> bool {
        for port in self.known.clone() {
            let Ok(conn) = self.conn(port) else {
                continue;
            };
            let reply = match conn.try_call(&[b"CLUSTER", b"SLOTS"]) {
                Ok(Value::Array(ranges)) => ranges,
                _ => {
                    self.conns.remove(&port);
                    continue;
                }
            };
            for range in &reply {
                let items = range.items();
                let (first, last) = (items[0].int() as usize, items[1].int() as usize);
                let node = items[2].items();
                let port = node[1].int() as u16;
                self.owner[first..=last].fill(port);
                self.learn(port);
            }
            return true;
        }
        false
    }

    fn learn(&mut self, port: u16) {
        if !self.known.contains(&port) {
            self.known.push(port);
        }
    }

    fn conn(&mut self, port: u16) -> std::io::Result<&mut Conn> {
        Ok(match self.conns.entry(port) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => e.insert(Conn::open(port)?),
        })
    }

    /// The port of the primary this client believes owns `key`.
    pub fn owner_of(&self, key: &[u8]) -> u16 {
        self.owner[slot(key)]
    }

    /// The primaries' ports, ordered by the first slot each owns.
    pub fn primaries(&self) -> Vec<u16> {
        let mut ports: Vec<u16> = Vec::new();
        for &port in &self.owner {
            if !ports.contains(&port) {
                ports.push(port);
            }
        }
        ports
    }

    /// Sends a command given as words split on spaces.
    pub fn cmd(&mut self, line: &str) -> Result<Value, Failure> {
        let words: Vec<&[u8]> = line.split_whitespace().map(str::as_bytes).collect();
        self.call(&words)
    }

    /// Sends a command to the primary of its key: the third word for
    /// `WEIR.ALL` (its first key), else the second. Errors other than
    /// redirections (`CROSSSLOT`, `CLUSTERDOWN`, `TRYAGAIN`, ...) are
    /// replies, returned as they are.
    pub fn call(&mut self, args: &[&[u8]]) -> Result<Value, Failure> {
        let key = if args[0].eq_ignore_ascii_case(b"WEIR.ALL") {
            args[2]
        } else {
            args[1]
        };
        let mut port = self.owner[slot(key)];
        let mut asking = false;
        for _ in 0..16 {
            let conn = match self.conn(port) {
                Ok(conn) => conn,
                // Nothing was sent: when the slot map names a new owner
                // now (a failover), the command goes there.
                Err(e) => {
                    self.refresh();
                    let owner = self.owner[slot(key)];
                    if owner != port && !asking {
                        port = owner;
                        continue;
                    }
                    return Err(Failure::Down(format!("127.0.0.1:{port}: {e}")));
                }
            };
            if asking {
                if let Err(e) = conn.try_call(&[b"ASKING"]) {
                    self.conns.remove(&port);
                    self.refresh();
                    return Err(Failure::Down(format!("127.0.0.1:{port}: {e}")));
                }
            }
            let reply = match conn.try_call(args) {
                Ok(reply) => reply,
                Err(e) => {
                    self.conns.remove(&port);
                    self.refresh();
                    return Err(Failure::Lost(format!("127.0.0.1:{port}: {e}")));
                }
            };
            match &reply {
                // MOVED slot host:port: the slot has a new owner; so may
                // others (a failover moves all of a primary's).
                Value::Error(e) if e.starts_with("MOVED ") => {
                    let words: Vec<&str> = e.split(' ').collect();
                    port = port_of(words[2]);
                    self.owner[words[1].parse::<usize>().expect("a slot")] = port;
                    self.learn(port);
                    self.refresh();
                    self.moved += 1;
                    asking = false;
                }
                // ASK slot host:port: this key only, this once, while the
                // slot migrates.
                Value::Error(e) if e.starts_with("ASK ") => {
                    port = port_of(e.split(' ').nth(2).expect("an address"));
                    self.learn(port);
                    self.asked += 1;
                    asking = true;
                }
                _ => return Ok(reply),
            }
        }
        panic!(
            "more than 16 redirections for {:?}",
            String::from_utf8_lossy(args[0])
        );
    }
}
