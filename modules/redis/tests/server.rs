//! The module in real redis-servers: counts under many clients, replicas,
//! restarts, expiry, all-or-nothing takes and every error.
//!
//! Real time runs here, so every count asserted is one elapsed time cannot
//! change: rates of one token per thousand seconds, windows of an hour,
//! bursts asked for at once.

mod support;

use std::time::Duration;

use support::{wait_for, Conn, Server, Value};

/// Every key's raw state and absolute expiry.
fn snapshot(c: &mut Conn, keys: &[&str]) -> Vec<(Value, i64)> {
    keys.iter()
        .map(|k| {
            let value = c.call(&[b"GET", k.as_bytes()]);
            let expiry = c.call(&[b"PEXPIRETIME", k.as_bytes()]).int();
            (value, expiry)
        })
        .collect()
}

/// Every key's `DUMP` (nil for a missing key).
fn dumps(c: &mut Conn, keys: &[&str]) -> Vec<Value> {
    keys.iter()
        .map(|k| c.call(&[b"DUMP", k.as_bytes()]))
        .collect()
}

/// Runs `calls` attempts of `command` from each of `clients` connections
/// at once; how many were allowed by `allowed`.
fn concurrent(
    server: &Server,
    clients: usize,
    calls: usize,
    command: &str,
    allowed: Allowed,
) -> usize {
    let threads: Vec<_> = (0..clients)
        .map(|_| {
            let mut c = server.conn();
            let command = command.to_string();
            std::thread::spawn(move || (0..calls).filter(|_| allowed(&c.cmd(&command))).count())
        })
        .collect();
    threads.into_iter().map(|t| t.join().unwrap()).sum()
}

/// Whether a reply says the call was allowed.
type Allowed = fn(&Value) -> bool;

fn five_allowed(v: &Value) -> bool {
    v.ints()[0] == 0
}

#[test]
fn exact_counts_under_many_concurrent_clients() {
    let server = Server::start(&[]);
    // 50 clients, 6 attempts each: 300 attempts on a limit of 100.
    let cases: [(&str, Allowed); 7] = [
        ("WEIR.BUCKET b 0.001 100", five_allowed),
        ("WEIR.BUCKET c 0.001 100 COST 2", five_allowed),
        ("WEIR.WINDOW w 100 3600000", five_allowed),
        ("WEIR.PERIOD p 100 3600000", five_allowed),
        ("WEIR.PERIOD pa 100 3600000 ALIGN", five_allowed),
        ("WEIR.LIMITER l BUCKET 100 1 3600000", |v| !v.is_error()),
        ("WEIR.ALL 2 x y BUCKET 0.001 100 WINDOW 100 3600000", |v| {
            v.items()[0].int() == 0
        }),
    ];
    for (command, allowed) in cases {
        let expected = if command.contains("COST 2") { 50 } else { 100 };
        assert_eq!(
            concurrent(&server, 50, 6, command, allowed),
            expected,
            "{command}"
        );
    }
    // The limiter refuses with its status.
    let mut c = server.conn();
    let refused = c.cmd("WEIR.LIMITER l BUCKET 100 1 3600000");
    assert!(
        refused.error().starts_with("WEIR_ERR_LIMITER_RATE_LIMITED"),
        "{refused:?}"
    );
    // WEIR.ALL took from both limits together, never from one alone.
    assert_eq!(c.cmd("WEIR.BUCKET.PEEK x 0.001 100").ints()[2], 0);
    assert_eq!(c.cmd("WEIR.WINDOW.PEEK y 100 3600000").ints()[2], 0);
}

#[test]
fn bucket_replies_in_cl_throttle_units() {
    let server = Server::start(&[]);
    let mut c = server.conn();
    // One token per 10 s, burst 3: limited, limit, remaining, retry, reset.
    assert_eq!(c.cmd("WEIR.BUCKET k 0.1 3").ints(), [0, 3, 2, -1, 10]);
    assert_eq!(
        c.cmd("WEIR.BUCKET k 0.1 3 COST 2").ints(),
        [0, 3, 0, -1, 30]
    );
    let refused = c.cmd("WEIR.BUCKET k 0.1 3").ints();
    assert_eq!(refused[..3], [1, 3, 0]);
    assert!((9..=10).contains(&refused[3]), "{refused:?}");
    assert!((29..=30).contains(&refused[4]), "{refused:?}");
    let ms = c.cmd("WEIR.BUCKET.MS k 0.1 3").ints();
    assert_eq!(ms[..3], [1, 3, 0]);
    assert!((9_000..=10_000).contains(&ms[3]), "{ms:?}");
    assert_eq!(c.cmd("WEIR.BUCKET k 0.1 3 MS").ints()[..3], [1, 3, 0]);
    // A full bucket admits exactly its burst at once, at a rate whose
    // interval is not a whole number of nanoseconds.
    assert_eq!(
        c.cmd("WEIR.BUCKET big 0.003 6000 COST 6000").ints()[..3],
        [0, 6000, 0]
    );
    assert_eq!(
        c.cmd("WEIR.BUCKET big 0.003 6000").ints()[..3],
        [1, 6000, 0]
    );
    // A peek takes nothing.
    let before = c.cmd("GET k");
    assert_eq!(c.cmd("WEIR.BUCKET.PEEK k 0.1 3").ints()[..3], [1, 3, 0]);
    assert_eq!(
        c.cmd("WEIR.BUCKET.MS.PEEK fresh 0.1 3").ints(),
        [0, 3, 3, -1, 0]
    );
    assert_eq!(c.cmd("GET k"), before);
    assert_eq!(c.cmd("EXISTS fresh").int(), 0);
    // The key expires when the bucket is full again: 30 s after the takes.
    let pttl = c.cmd("PTTL k").int();
    assert!((28_000..=30_000).contains(&pttl), "{pttl}");
}

#[test]
fn window_period_and_limiter_replies() {
    let server = Server::start(&[]);
    let mut c = server.conn();
    assert_eq!(
        c.cmd("WEIR.WINDOW w 3 3600000 COST 2").ints()[..4],
        [0, 3, 1, -1]
    );
    let refused = c.cmd("WEIR.WINDOW w 3 3600000 COST 2").ints();
    assert_eq!(refused[..3], [1, 3, 1]);
    assert!(refused[3] > 3_590_000 && refused[3] <= 3_600_000);
    assert_eq!(c.cmd("WEIR.WINDOW w 3 3600000").ints()[..3], [0, 3, 0]);

    assert_eq!(c.cmd("WEIR.PERIOD p 2 3600000").ints()[..4], [0, 2, 1, -1]);
    assert_eq!(c.cmd("WEIR.PERIOD p 2 3600000").ints()[..4], [0, 2, 0, -1]);
    assert_eq!(c.cmd("WEIR.PERIOD p 2 3600000").ints()[..3], [1, 2, 0]);
    // Aligned: the period ends on a multiple of the period (an hour).
    let aligned = c.cmd("WEIR.PERIOD pa 2 3600000 ALIGN").ints();
    let end = c.cmd("PEXPIRETIME pa").int();
    assert_eq!(end % 3_600_000, 0, "{aligned:?}");

    // The limiter's variants answer the units left, refusals as statuses.
    assert_eq!(c.cmd("WEIR.LIMITER lc COOLDOWN 2 3600000").int(), 1);
    assert_eq!(c.cmd("WEIR.LIMITER lc COOLDOWN 2 3600000").int(), 0);
    assert!(c
        .cmd("WEIR.LIMITER lc COOLDOWN 2 3600000")
        .error()
        .starts_with("WEIR_ERR_LIMITER_RATE_LIMITED"));
    assert_eq!(c.cmd("WEIR.LIMITER.PEEK lc COOLDOWN 2 3600000").int(), 0);
    assert_eq!(c.cmd("WEIR.LIMITER lw WINDOW 5 3600000 COST 5").int(), 0);
    assert!(c.cmd("WEIR.LIMITER lw WINDOW 5 3600000").is_error());
    assert_eq!(c.cmd("WEIR.LIMITER lb BUCKET 4 1 3600000 COST 3").int(), 1);
    // A cooldown used in part never refills by itself: no expiry.
    assert_eq!(c.cmd("WEIR.LIMITER lp COOLDOWN 3 1000").int(), 2);
    assert_eq!(c.cmd("PEXPIRETIME lp").int(), -1);
}

#[test]
fn refunds_give_units_back_never_past_the_limit() {
    let server = Server::start(&[]);
    let mut c = server.conn();
    c.cmd("WEIR.BUCKET b 0.001 3 COST 3");
    assert_eq!(c.cmd("WEIR.REFUND b 2").int(), 2);
    assert_eq!(c.cmd("WEIR.BUCKET b 0.001 3 COST 2").ints()[0], 0);
    assert_eq!(c.cmd("WEIR.BUCKET b 0.001 3").ints()[0], 1);
    // More than was taken: the bucket fills and its key goes.
    assert_eq!(c.cmd("WEIR.REFUND b 100").int(), 3);
    assert_eq!(c.cmd("EXISTS b").int(), 0);

    c.cmd("WEIR.WINDOW w 3 3600000 COST 3");
    assert_eq!(c.cmd("WEIR.REFUND w 1").int(), 1);
    assert_eq!(c.cmd("WEIR.WINDOW w 3 3600000").ints()[0], 0);
    assert_eq!(c.cmd("WEIR.WINDOW w 3 3600000").ints()[0], 1);

    c.cmd("WEIR.PERIOD p 2 3600000 COST 2");
    assert_eq!(c.cmd("WEIR.REFUND p 5").int(), 2);
    assert_eq!(c.cmd("WEIR.PERIOD p 2 3600000 COST 2").ints()[0], 0);

    c.cmd("WEIR.LIMITER l COOLDOWN 2 3600000 COST 2");
    assert!(c.cmd("WEIR.LIMITER l COOLDOWN 2 3600000").is_error());
    assert_eq!(c.cmd("WEIR.REFUND l 1").int(), 1);
    assert_eq!(c.cmd("WEIR.LIMITER l COOLDOWN 2 3600000").int(), 0);

    assert_eq!(c.cmd("WEIR.REFUND nothing 1").int(), 0);
    assert_eq!(c.cmd("EXISTS nothing").int(), 0);
}

#[test]
fn replica_holds_identical_state() {
    let primary = Server::start(&[]);
    let replica = Server::replica_of(&primary);
    let mut p = primary.conn();
    let mut r = replica.conn();
    let keys = ["b", "w", "p", "pa", "lb", "lw", "lc", "x", "y"];
    for command in [
        "WEIR.BUCKET b 0.001 5 COST 2",
        "WEIR.WINDOW w 5 3600000 COST 2",
        "WEIR.WINDOW w 5 3600000",
        "WEIR.PERIOD p 5 3600000",
        "WEIR.PERIOD pa 5 3600000 ALIGN",
        "WEIR.LIMITER lb BUCKET 5 1 3600000",
        "WEIR.LIMITER lw WINDOW 5 3600000",
        "WEIR.LIMITER lc COOLDOWN 1 3600000",
        "WEIR.ALL 2 x y BUCKET 0.001 5 PERIOD 5 3600000",
        "WEIR.REFUND b 1",
    ] {
        assert!(!p.cmd(command).is_error(), "{command}");
    }
    assert_eq!(p.cmd("WAIT 1 10000").int(), 1);
    let on_primary = snapshot(&mut p, &keys);
    assert!(on_primary.iter().all(|(v, _)| matches!(v, Value::Bulk(_))));
    assert_eq!(snapshot(&mut r, &keys), on_primary);
    // Refusals write nothing, so nothing new reaches the replica.
    assert!(p.cmd("WEIR.LIMITER lc COOLDOWN 1 3600000").is_error());
    assert_eq!(
        p.cmd("WEIR.ALL 2 x p BUCKET 0.001 5 PERIOD 1 3600000")
            .items()[0]
            .int(),
        1
    );
    assert_eq!(snapshot(&mut p, &keys), on_primary);
    // The peeks are read-only: they run on the replica and agree.
    for peek in [
        "WEIR.BUCKET.PEEK b 0.001 5",
        "WEIR.WINDOW.PEEK w 5 3600000",
        "WEIR.PERIOD.PEEK p 5 3600000",
    ] {
        assert_eq!(r.cmd(peek).ints()[..3], p.cmd(peek).ints()[..3], "{peek}");
    }
    assert_eq!(r.cmd("WEIR.LIMITER.PEEK lb BUCKET 5 1 3600000").int(), 4);
    // Takes are writes: a replica refuses them.
    assert!(r
        .cmd("WEIR.BUCKET b 0.001 5")
        .error()
        .starts_with("READONLY"));
    // A refund to full deletes the key, on the replica too.
    assert_eq!(p.cmd("WEIR.REFUND b 10").int(), 1);
    assert_eq!(p.cmd("WAIT 1 10000").int(), 1);
    assert_eq!(r.cmd("EXISTS b").int(), 0);
}

#[test]
fn restart_from_rdb_keeps_state() {
    let mut server = Server::start(&[]);
    let keys = ["b", "w", "p", "l"];
    {
        let mut c = server.conn();
        c.cmd("WEIR.BUCKET b 0.001 2 COST 2");
        c.cmd("WEIR.WINDOW w 2 3600000 COST 2");
        c.cmd("WEIR.PERIOD p 2 3600000 COST 2");
        c.cmd("WEIR.LIMITER l COOLDOWN 2 3600000 COST 2");
        let before = snapshot(&mut c, &keys);
        assert_eq!(c.cmd("SAVE"), Value::Simple("OK".into()));
        server.restart();
        let mut c = server.conn();
        assert_eq!(snapshot(&mut c, &keys), before);
    }
    let mut c = server.conn();
    assert_eq!(c.cmd("WEIR.BUCKET b 0.001 2").ints()[0], 1);
    assert_eq!(c.cmd("WEIR.WINDOW w 2 3600000").ints()[0], 1);
    assert_eq!(c.cmd("WEIR.PERIOD p 2 3600000").ints()[0], 1);
    assert!(c.cmd("WEIR.LIMITER l COOLDOWN 2 3600000").is_error());
}

#[test]
fn aof_rewrite_keeps_state() {
    let mut server = Server::start(&["--appendonly", "yes", "--appendfsync", "always"]);
    let keys = ["b", "w", "after"];
    let mut c = server.conn();
    c.cmd("WEIR.BUCKET b 0.001 2 COST 2");
    c.cmd("WEIR.WINDOW w 2 3600000 COST 2");
    assert!(!c.cmd("BGREWRITEAOF").is_error());
    wait_for("the AOF rewrite", Duration::from_secs(20), || {
        let info = c.cmd("INFO persistence").text();
        info.contains("aof_rewrite_in_progress:0")
            && info.contains("aof_rewrite_scheduled:0")
            && info.contains("aof_last_bgrewrite_status:ok")
    });
    // A write after the rewrite lands in the incremental file.
    c.cmd("WEIR.PERIOD after 1 3600000");
    let before = snapshot(&mut c, &keys);
    server.restart();
    let mut c = server.conn();
    assert_eq!(snapshot(&mut c, &keys), before);
    assert_eq!(c.cmd("WEIR.BUCKET b 0.001 2").ints()[0], 1);
}

#[test]
fn idle_keys_expire_when_they_read_as_fresh() {
    let server = Server::start(&[]);
    let mut c = server.conn();
    c.cmd("WEIR.BUCKET b 20 1");
    c.cmd("WEIR.WINDOW w 1 50");
    c.cmd("WEIR.PERIOD p 1 50");
    c.cmd("WEIR.LIMITER l WINDOW 1 50");
    c.cmd("WEIR.LIMITER lb BUCKET 2 1 50");
    for key in ["b", "w", "p", "l", "lb"] {
        let pttl = c.call(&[b"PTTL", key.as_bytes()]).int();
        assert!(pttl == -2 || (0..=50).contains(&pttl), "{key}: {pttl}");
    }
    wait_for("the idle keys to expire", Duration::from_secs(10), || {
        c.cmd("EXISTS b w p l lb").int() == 0
    });
}

#[test]
fn all_with_one_refusing_key_changes_no_key() {
    let server = Server::start(&[]);
    let mut c = server.conn();
    c.cmd("WEIR.BUCKET {u}:a 0.001 5");
    c.cmd("WEIR.WINDOW {u}:b 2 3600000 COST 2");
    c.cmd("WEIR.PERIOD {u}:c 5 3600000");
    let keys = ["{u}:a", "{u}:b", "{u}:c", "{u}:d"];
    let before = dumps(&mut c, &keys);
    let reply = c.cmd(
        "WEIR.ALL 4 {u}:a {u}:b {u}:c {u}:d BUCKET 0.001 5 WINDOW 2 3600000 PERIOD 5 3600000 ALIGN BUCKET 1 1",
    );
    let items = reply.items();
    assert_eq!(items[0].int(), 1);
    // Each limit answers as its peek; only the window refuses.
    let flags: Vec<i64> = items[1..].iter().map(|r| r.ints()[0]).collect();
    assert_eq!(flags, [0, 1, 0, 0]);
    assert_eq!(items[1].ints()[2], 4);
    assert_eq!(dumps(&mut c, &keys), before);
    assert_eq!(c.cmd("EXISTS {u}:d").int(), 0);
    // Without the refusing key, all are taken.
    let reply = c.cmd("WEIR.ALL 2 {u}:a {u}:c BUCKET 0.001 5 PERIOD 5 3600000");
    assert_eq!(reply.items()[0].int(), 0);
    assert_eq!(reply.items()[1].ints()[2], 3);
    assert_eq!(reply.items()[2].ints()[2], 3);
}

#[test]
fn keys_and_flags_are_declared() {
    let server = Server::start(&[]);
    let mut c = server.conn();
    let keys = c.cmd("COMMAND GETKEYS WEIR.ALL 2 {t}a {t}b BUCKET 1 1 WINDOW 1 1000");
    assert_eq!(
        keys,
        Value::Array(vec![
            Value::Bulk(b"{t}a".to_vec()),
            Value::Bulk(b"{t}b".to_vec())
        ])
    );
    let keys = c.cmd("COMMAND GETKEYS WEIR.BUCKET k 1 1");
    assert_eq!(keys, Value::Array(vec![Value::Bulk(b"k".to_vec())]));
    let flags = |c: &mut Conn, name: &str| -> Vec<Value> {
        let info = c.call(&[b"COMMAND", b"INFO", name.as_bytes()]);
        info.items()[0].items()[2].items().to_vec()
    };
    let simple = |s: &str| Value::Simple(s.into());
    for peek in [
        "weir.bucket.peek",
        "weir.window.peek",
        "weir.period.peek",
        "weir.limiter.peek",
    ] {
        assert!(flags(&mut c, peek).contains(&simple("readonly")), "{peek}");
    }
    assert!(flags(&mut c, "weir.bucket").contains(&simple("write")));
    assert!(flags(&mut c, "weir.all").contains(&simple("movablekeys")));
}

#[test]
fn errors_reply_clearly_and_write_nothing() {
    let server = Server::start(&[]);
    let mut c = server.conn();
    c.cmd("RPUSH list x");
    c.cmd("SET plain hello");
    c.cmd("WEIR.WINDOW win 5 3600000");
    c.cmd("WEIR.LIMITER cool COOLDOWN 2 3600000");
    let keys = ["list", "plain", "win", "cool"];
    let before = dumps(&mut c, &keys);
    let cases: &[(&str, &str)] = &[
        // Arity.
        ("WEIR.BUCKET", "wrong number of arguments"),
        ("WEIR.BUCKET k", "wrong number of arguments"),
        ("WEIR.BUCKET k 1", "wrong number of arguments"),
        ("WEIR.BUCKET k 1 1 COST", "wrong number of arguments"),
        ("WEIR.WINDOW k 1", "wrong number of arguments"),
        ("WEIR.PERIOD k", "wrong number of arguments"),
        ("WEIR.LIMITER k", "wrong number of arguments"),
        ("WEIR.LIMITER k BUCKET 1 1", "wrong number of arguments"),
        ("WEIR.REFUND k", "wrong number of arguments"),
        ("WEIR.REFUND k 1 2", "wrong number of arguments"),
        ("WEIR.ALL 1 k", "wrong number of arguments"),
        ("WEIR.BUCKET.PEEK k 1", "wrong number of arguments"),
        // Not numbers.
        ("WEIR.BUCKET k abc 1", "not a number"),
        ("WEIR.BUCKET k 1 1.5", "not a whole number"),
        ("WEIR.BUCKET k nan 1", "not a number"),
        ("WEIR.WINDOW k x 1000", "not a whole number"),
        ("WEIR.PERIOD k 1 1e3", "not a whole number"),
        ("WEIR.REFUND k x", "not a whole number"),
        ("WEIR.ALL x k BUCKET 1 1", "not a whole number"),
        // Zero and negative.
        ("WEIR.BUCKET k 0 1", "positive"),
        ("WEIR.BUCKET k 1 0", "positive"),
        ("WEIR.BUCKET k -1 1", "positive"),
        ("WEIR.BUCKET k 1 1 COST 0", "positive"),
        ("WEIR.WINDOW k 0 1000", "positive"),
        ("WEIR.WINDOW k 1 -5", "positive"),
        ("WEIR.PERIOD k 1 0", "positive"),
        ("WEIR.LIMITER k BUCKET 0 1 1", "positive"),
        ("WEIR.LIMITER k COOLDOWN 1 0", "positive"),
        ("WEIR.REFUND k 0", "positive"),
        ("WEIR.ALL 0 k BUCKET 1 1", "positive"),
        // Too large.
        ("WEIR.BUCKET k 1000000001 1", "too large"),
        ("WEIR.BUCKET k 1 99999999999999999999", "too large"),
        ("WEIR.BUCKET k 0.001 100000000", "too long"),
        ("WEIR.BUCKET k 1 2 COST 3", "never pass"),
        ("WEIR.WINDOW k 100001 1000", "too large"),
        ("WEIR.WINDOW k 2 1000 COST 3", "never pass"),
        ("WEIR.PERIOD k 1 9999999999999999", "too large"),
        ("WEIR.LIMITER k COOLDOWN 2 1000 COST 3", "never pass"),
        ("WEIR.ALL 65 k BUCKET 1 1", "too large"),
        // Syntax.
        ("WEIR.BUCKET k 1 1 FOO", "syntax error"),
        ("WEIR.BUCKET k 1 1 COST 1 COST 1", "syntax error"),
        ("WEIR.WINDOW k 1 1000 ALIGN", "syntax error"),
        ("WEIR.LIMITER k LEAKY 1 1", "BUCKET, WINDOW or COOLDOWN"),
        ("WEIR.ALL 2 k k BUCKET 1 1 BUCKET 1 1", "names a key twice"),
        ("WEIR.ALL 2 a b BUCKET 1 1", "one spec per key"),
        ("WEIR.ALL 1 a BUCKET 1 1 BUCKET 1 1", "more specs than keys"),
        (
            "WEIR.ALL 1 a LIMITER COOLDOWN 1 1",
            "BUCKET, WINDOW and PERIOD",
        ),
        ("WEIR.ALL 1 a LEAKY 1 1", "starts with BUCKET"),
        // Keys holding something else.
        ("WEIR.BUCKET list 1 1", "WRONGTYPE"),
        ("WEIR.BUCKET plain 1 1", "WRONGTYPE"),
        (
            "WEIR.BUCKET win 1 1",
            "WRONGTYPE the key holds a weir window",
        ),
        ("WEIR.WINDOW.PEEK cool 1 1000", "WRONGTYPE"),
        ("WEIR.PERIOD win 1 1000", "WRONGTYPE"),
        ("WEIR.LIMITER win COOLDOWN 1 1000", "WRONGTYPE"),
        (
            "WEIR.LIMITER cool BUCKET 2 1 1000",
            "WEIR_ERR_LIMITER_WRONG_VARIANT",
        ),
        ("WEIR.REFUND list 1", "WRONGTYPE"),
        ("WEIR.REFUND plain 1", "WRONGTYPE"),
        ("WEIR.ALL 2 fresh list BUCKET 1 1 BUCKET 1 1", "WRONGTYPE"),
    ];
    for (command, expected) in cases {
        let reply = c.cmd(command);
        let Value::Error(message) = &reply else {
            panic!("{command}: not an error: {reply:?}");
        };
        assert!(message.contains(expected), "{command}: {message}");
        assert_eq!(c.cmd("DBSIZE").int(), 4, "{command} created a key");
        assert_eq!(dumps(&mut c, &keys), before, "{command} changed a key");
    }
    // A weir value of a future format version is refused, not misread.
    c.call(&[b"SET", b"future", b"wrB\x02aaaaaaaaaaaaaaaaaaaaaaaa"]);
    assert!(c
        .cmd("WEIR.BUCKET future 1 1")
        .error()
        .contains("version 2"));
    c.call(&[b"SET", b"short", b"wrB\x01abc"]);
    assert!(c.cmd("WEIR.BUCKET short 1 1").error().contains("corrupt"));
}

#[test]
fn cluster_routes_weir_all_by_its_declared_keys() {
    // A one-node cluster owning every slot: Redis checks the slots of the
    // keys a command declares, as it would across nodes.
    let server = Server::start(&[
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        "nodes.conf",
    ]);
    let mut c = server.conn();
    assert_eq!(
        c.cmd("CLUSTER ADDSLOTSRANGE 0 16383"),
        Value::Simple("OK".into())
    );
    wait_for("the cluster to come up", Duration::from_secs(20), || {
        c.cmd("CLUSTER INFO").text().contains("cluster_state:ok")
    });
    // Keys in different slots: refused by Redis before the command runs.
    let crossed = c.cmd("WEIR.ALL 2 user:1:minute user:1:day BUCKET 1 10 PERIOD 1000 86400000");
    assert!(crossed.error().starts_with("CROSSSLOT"), "{crossed:?}");
    assert_eq!(c.cmd("EXISTS user:1:minute").int(), 0);
    assert_eq!(c.cmd("EXISTS user:1:day").int(), 0);
    // A hash tag puts them in one slot.
    let tagged = c.cmd("WEIR.ALL 2 {user:1}:minute {user:1}:day BUCKET 1 10 PERIOD 1000 86400000");
    assert_eq!(tagged.items()[0].int(), 0);
    assert_eq!(c.cmd("EXISTS {user:1}:minute {user:1}:day").int(), 2);
}
