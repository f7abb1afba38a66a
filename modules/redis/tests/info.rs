//! `INFO weir` in a real redis-server: per command, its calls and how many
//! admitted, refused and failed, counted exactly, under many clients too.
//!
//! Every count asserted is one elapsed time cannot change: rates of one
//! token per thousand seconds, windows of an hour, bursts asked at once.

mod support;

use std::collections::BTreeMap;

use support::{Conn, Server, Value};

/// calls, admitted, refused, errors.
type Row = [u64; 4];

/// `INFO weir` parsed: each `weir_NAME:calls=..,admitted=..,refused=..,errors=..`
/// line as NAME and its four counts. Panics on a line of any other shape.
fn info(c: &mut Conn) -> BTreeMap<String, Row> {
    let text = c.cmd("INFO weir").text();
    let mut lines = text.lines().filter(|l| !l.is_empty());
    assert_eq!(lines.next(), Some("# weir"), "{text}");
    let mut rows = BTreeMap::new();
    for line in lines {
        let (name, fields) = line.split_once(':').expect("name:fields");
        let name = name.strip_prefix("weir_").expect("the module's prefix");
        let mut row = [0u64; 4];
        let keys = ["calls", "admitted", "refused", "errors"];
        let pairs: Vec<_> = fields.split(',').collect();
        assert_eq!(pairs.len(), 4, "{line}");
        for (slot, pair) in pairs.iter().enumerate() {
            let (k, v) = pair.split_once('=').expect("k=v");
            assert_eq!(k, keys[slot], "{line}");
            row[slot] = v.parse().expect("a count");
        }
        assert!(rows.insert(name.to_string(), row).is_none(), "{name} twice");
    }
    rows
}

fn is_error(v: &Value) -> bool {
    v.is_error()
}

#[test]
fn info_weir_counts_each_call_by_what_it_decided() {
    let server = Server::start(&[]);
    let mut c = server.conn();

    // Every command is listed, at zero, before any call.
    let start = info(&mut c);
    let names: Vec<&str> = start.keys().map(String::as_str).collect();
    for name in [
        "all",
        "bucket",
        "bucket.ms",
        "bucket.ms.peek",
        "bucket.peek",
        "limiter",
        "limiter.peek",
        "period",
        "period.peek",
        "refund",
        "lease",
        "window",
        "window.peek",
    ] {
        assert!(names.contains(&name), "{name} missing from {names:?}");
    }
    assert!(start.values().all(|r| *r == [0; 4]), "{start:?}");

    // Bucket, burst 3 at one token per 1000 s: 3 admitted, 2 refused; a
    // word that is not a rate, too few arguments, a key of another type:
    // 3 errors.
    for _ in 0..5 {
        c.cmd("WEIR.BUCKET b 0.001 3");
    }
    assert!(is_error(&c.cmd("WEIR.BUCKET b fast 3")));
    assert!(is_error(&c.cmd("WEIR.BUCKET")));
    c.cmd("LPUSH list x");
    assert!(is_error(&c.cmd("WEIR.BUCKET list 0.001 3")));
    // Peeks count what they would do: b is spent, fresh is not.
    c.cmd("WEIR.BUCKET.PEEK b 0.001 3");
    c.cmd("WEIR.BUCKET.PEEK fresh 0.001 3");
    // Window and period: quota 2, three calls each.
    for _ in 0..3 {
        c.cmd("WEIR.WINDOW w 2 3600000");
        c.cmd("WEIR.PERIOD p 2 3600000");
    }
    // The limiter answers a refusal with an error reply carrying its
    // status: counted as refused, not as an error. A zero capacity is an
    // error.
    c.cmd("WEIR.LIMITER l WINDOW 1 3600000");
    let refused = c.cmd("WEIR.LIMITER l WINDOW 1 3600000");
    assert!(refused.error().starts_with("WEIR_ERR_LIMITER_RATE_LIMITED"));
    assert!(is_error(&c.cmd("WEIR.LIMITER l2 WINDOW 0 3600000")));
    // A limiter's peek and a refund decide nothing: calls only.
    c.cmd("WEIR.LIMITER.PEEK l WINDOW 1 3600000");
    c.cmd("WEIR.REFUND b 1");
    // WEIR.ALL: both taken, then one refuses so none is taken; a key named
    // twice is an error. Asking where its keys are is not a call.
    c.cmd("WEIR.ALL 2 x y BUCKET 0.001 5 WINDOW 1 3600000");
    c.cmd("WEIR.ALL 2 x y BUCKET 0.001 5 WINDOW 1 3600000");
    assert!(is_error(
        &c.cmd("WEIR.ALL 2 x x BUCKET 0.001 5 WINDOW 1 3600000")
    ));
    let keys = c.cmd("COMMAND GETKEYS WEIR.ALL 2 x y BUCKET 0.001 5 WINDOW 1 3600000");
    assert_eq!(keys.items().len(), 2);

    let got = info(&mut c);
    let want: [(&str, Row); 10] = [
        ("bucket", [8, 3, 2, 3]),
        ("bucket.peek", [2, 1, 1, 0]),
        ("window", [3, 2, 1, 0]),
        ("period", [3, 2, 1, 0]),
        ("limiter", [3, 1, 1, 1]),
        ("limiter.peek", [1, 0, 0, 0]),
        ("refund", [1, 0, 0, 0]),
        ("all", [3, 1, 1, 1]),
        ("bucket.ms", [0; 4]),
        ("window.peek", [0; 4]),
    ];
    for (name, row) in want {
        assert_eq!(got[name], row, "{name}: calls, admitted, refused, errors");
    }
    // Reading changes nothing.
    assert_eq!(info(&mut c), got);
    // INFO everything holds the section too; plain INFO still answers.
    assert!(c
        .cmd("INFO everything")
        .text()
        .contains("\r\nweir_bucket:calls=8,"));
    assert!(c.cmd("INFO").text().contains("# Server"));
}

#[test]
fn info_weir_is_exact_under_many_concurrent_clients() {
    let server = Server::start(&[]);
    // 40 clients, 10 calls each on a burst of 100: 400 calls, exactly 100
    // admitted, 300 refused, whichever client got which.
    let threads: Vec<_> = (0..40)
        .map(|_| {
            let mut c = server.conn();
            std::thread::spawn(move || {
                (0..10)
                    .filter(|_| c.cmd("WEIR.BUCKET hot 0.001 100").ints()[0] == 0)
                    .count()
            })
        })
        .collect();
    let admitted: usize = threads.into_iter().map(|t| t.join().unwrap()).sum();
    assert_eq!(admitted, 100);
    let mut c = server.conn();
    assert_eq!(info(&mut c)["bucket"], [400, 100, 300, 0]);
}
