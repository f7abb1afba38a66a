//! `WEIR.LEASE` in real redis-servers: grants, partial grants, refunds
//! through `WEIR.REFUND`, the state it shares with `WEIR.BUCKET`, exact
//! totals under many clients, replication and every error.
//!
//! Real time runs here, so the rates are one unit per thousand seconds:
//! no count asserted can change while a test runs.

mod support;

use support::{Server, Value};

#[test]
fn grants_up_to_want_and_charges_the_bucket() {
    let server = Server::start(&[]);
    let mut c = server.conn();
    // A fresh bucket of 10: 4, then 4, then the 2 left.
    assert_eq!(c.cmd("WEIR.LEASE k 0.001 10 4").ints(), [4, 1000, 0]);
    assert_eq!(c.cmd("WEIR.LEASE k 0.001 10 4 250").ints(), [4, 250, 0]);
    // The last two: the bucket is empty after, a unit comes back in 1000 s.
    let last = c.cmd("WEIR.LEASE k 0.001 10 4").ints();
    assert_eq!(last[..2], [2, 1000]);
    assert!(last[2] > 999_000 && last[2] <= 1_000_000, "{last:?}");
    // Nothing left: granted 0, and the wait.
    let empty = c.cmd("WEIR.LEASE k 0.001 10 4").ints();
    assert_eq!(empty[..2], [0, 1000]);
    assert!(empty[2] > 999_000 && empty[2] <= 1_000_000, "{empty:?}");
    // WEIR.BUCKET reads the same state: it is empty too.
    assert_eq!(c.cmd("WEIR.BUCKET.PEEK k 0.001 10").ints()[2], 0);
    // Unspent units go back through WEIR.REFUND, never past the burst.
    assert_eq!(c.cmd("WEIR.REFUND k 3").int(), 3);
    assert_eq!(c.cmd("WEIR.BUCKET.PEEK k 0.001 10").ints()[2], 3);
    assert_eq!(c.cmd("WEIR.LEASE k 0.001 10 100").ints()[0], 3);
    assert_eq!(c.cmd("WEIR.REFUND k 100").int(), 10);
    // A bucket back to full reads as fresh: its key is gone.
    assert_eq!(c.cmd("EXISTS k").int(), 0);
    // WEIR.BUCKET's takes and leases share one bucket.
    assert_eq!(c.cmd("WEIR.BUCKET k 0.001 10 COST 7").ints()[2], 3);
    assert_eq!(c.cmd("WEIR.LEASE k 0.001 10 5").ints()[0], 3);
    assert_eq!(c.cmd("WEIR.BUCKET k 0.001 10").ints()[0], 1);
}

#[test]
fn the_guides_session() {
    // docs/redis.md, "Leases": the session as it shows it.
    let server = Server::start(&[]);
    let mut c = server.conn();
    assert_eq!(
        c.cmd("WEIR.LEASE user:42 100 200 50 1000").ints(),
        [50, 1000, 0]
    );
    assert_eq!(c.cmd("WEIR.REFUND user:42 12").int(), 12);
}

#[test]
fn a_grant_is_written_with_the_expiry_of_the_bucket() {
    let server = Server::start(&[]);
    let mut c = server.conn();
    c.cmd("WEIR.LEASE k 0.001 10 4");
    // Four units at 1000 s each: the key reads as fresh in 4000 s.
    let ttl = c.cmd("PTTL k").int();
    assert!(ttl > 3_999_000 && ttl <= 4_000_000, "{ttl}");
    // A lease that grants nothing writes nothing.
    c.cmd("WEIR.LEASE k 0.001 10 100");
    let before = c.cmd("DUMP k");
    c.cmd("WEIR.LEASE k 0.001 10 100");
    assert_eq!(c.cmd("DUMP k"), before);
}

#[test]
fn many_clients_are_granted_exactly_the_burst() {
    let server = Server::start(&[]);
    // 40 clients asking for 3 at a time, 10 times each: 1200 asked of 500.
    let threads: Vec<_> = (0..40)
        .map(|_| {
            let mut c = server.conn();
            std::thread::spawn(move || {
                (0..10)
                    .map(|_| c.cmd("WEIR.LEASE k 0.001 500 3").ints()[0])
                    .sum::<i64>()
            })
        })
        .collect();
    let granted: i64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert_eq!(granted, 500);
}

#[test]
fn the_replica_holds_the_granted_state() {
    let primary = Server::start(&[]);
    let replica = Server::replica_of(&primary);
    let mut p = primary.conn();
    let mut r = replica.conn();
    assert_eq!(p.cmd("WEIR.LEASE k 0.001 10 6").ints()[0], 6);
    assert_eq!(p.cmd("WEIR.REFUND k 2").int(), 2);
    assert_eq!(p.cmd("WAIT 1 10000").int(), 1);
    for key in ["GET k", "PEXPIRETIME k"] {
        assert_eq!(r.cmd(key), p.cmd(key), "{key}");
    }
    assert_eq!(r.cmd("WEIR.BUCKET.PEEK k 0.001 10").ints()[2], 6);
    // A lease is a write: the replica refuses it.
    assert!(r
        .cmd("WEIR.LEASE k 0.001 10 1")
        .error()
        .starts_with("READONLY"));
}

#[test]
fn lease_errors_reply_clearly_and_write_nothing() {
    let server = Server::start(&[]);
    let mut c = server.conn();
    c.cmd("WEIR.WINDOW win 5 3600000");
    c.cmd("SET plain hello");
    let keys = ["win", "plain"];
    let dumps = |c: &mut support::Conn| -> Vec<Value> {
        keys.iter()
            .map(|k| c.call(&[b"DUMP", k.as_bytes()]))
            .collect()
    };
    let before = dumps(&mut c);
    let cases: &[(&str, &str)] = &[
        ("WEIR.LEASE k 1 1", "wrong number of arguments"),
        ("WEIR.LEASE k 1 1 1 1 1", "wrong number of arguments"),
        ("WEIR.LEASE k x 1 1", "not a number"),
        ("WEIR.LEASE k 1 x 1", "not a whole number"),
        ("WEIR.LEASE k 1 1 x", "not a whole number"),
        ("WEIR.LEASE k 1 1 1 x", "not a whole number"),
        ("WEIR.LEASE k 0 1 1", "positive"),
        ("WEIR.LEASE k 1 0 1", "positive"),
        ("WEIR.LEASE k 1 1 0", "positive"),
        ("WEIR.LEASE k 1 1 -1", "positive"),
        ("WEIR.LEASE k 1 1 1 0", "positive"),
        ("WEIR.LEASE k 1 1 1 3600001", "too large"),
        ("WEIR.LEASE k 1 1 99999999999999999999", "too large"),
        ("WEIR.LEASE k 0.001 100000000 1", "too long"),
        (
            "WEIR.LEASE win 1 1 1",
            "WRONGTYPE the key holds a weir window",
        ),
        ("WEIR.LEASE plain 1 1 1", "WRONGTYPE"),
    ];
    for (command, expected) in cases {
        let reply = c.cmd(command);
        let Value::Error(message) = &reply else {
            panic!("{command}: not an error: {reply:?}");
        };
        assert!(message.contains(expected), "{command}: {message}");
        assert_eq!(c.cmd("DBSIZE").int(), 2, "{command} created a key");
        assert_eq!(dumps(&mut c), before, "{command} changed a key");
    }
    let flags = c.call(&[b"COMMAND", b"INFO", b"weir.lease"]);
    assert!(flags.items()[0].items()[2]
        .items()
        .contains(&Value::Simple("write".into())));
}

#[test]
fn info_counts_a_grant_as_admitted_and_none_as_refused() {
    let server = Server::start(&[]);
    let mut c = server.conn();
    assert_eq!(c.cmd("WEIR.LEASE k 0.001 3 2").ints()[0], 2);
    assert_eq!(c.cmd("WEIR.LEASE k 0.001 3 2").ints()[0], 1);
    assert_eq!(c.cmd("WEIR.LEASE k 0.001 3 2").ints()[0], 0);
    assert!(c.cmd("WEIR.LEASE k 0.001 3 0").is_error());
    let info = c.cmd("INFO weir").text();
    let line = info
        .lines()
        .find(|l| l.starts_with("weir_lease:"))
        .unwrap_or_else(|| panic!("no weir_lease line in {info}"));
    assert_eq!(
        line.trim(),
        "weir_lease:calls=4,admitted=2,refused=1,errors=1"
    );
}
