//! The shedder's scenarios: a CPU spike with nothing queued, a queue on an
//! idle CPU, the limit at 1000 passes/s and 10 ms, the cool-off, fast
//! failures, and the start. Time is driven through `now`, one millisecond
//! per tick.

use weir_core::shedder::{Shedder, ShedderPolicy, ShedderTicket};

#[path = "support/race.rs"]
mod race;

const MS: i64 = 1_000_000;
const SECOND: i64 = 1_000 * MS;

/// A server in front of a preset shedder: calls arrive each millisecond and
/// each passes `latency` after it started.
struct Server {
    shedder: Shedder,
    now: i64,
    open: Vec<(i64, ShedderTicket)>,
    admitted: u64,
    refused: u64,
}

impl Server {
    fn new() -> Server {
        Server {
            shedder: Shedder::new(ShedderPolicy::PRESET, 0).unwrap(),
            now: 0,
            open: Vec::new(),
            admitted: 0,
            refused: 0,
        }
    }

    /// Offers one call now; an admitted one passes `latency` later.
    fn offer(&mut self, cpu: i32, latency: i64) -> bool {
        match self.shedder.allow(self.now, cpu) {
            Some(ticket) => {
                self.open.push((self.now + latency, ticket));
                self.admitted += 1;
                true
            }
            None => {
                self.refused += 1;
                false
            }
        }
    }

    /// One millisecond: the calls due finish, then `arrivals` are offered.
    fn tick(&mut self, arrivals: usize, cpu: i32, latency: i64) {
        let now = self.now;
        let shedder = &mut self.shedder;
        self.open.retain_mut(|(due, ticket)| {
            let done = *due <= now;
            if done {
                shedder.pass(ticket, *due).unwrap();
            }
            !done
        });
        for _ in 0..arrivals {
            self.offer(cpu, latency);
        }
        self.now += MS;
    }

    fn run(&mut self, ms: i64, arrivals: usize, cpu: i32, latency: i64) {
        for _ in 0..ms {
            self.tick(arrivals, cpu, latency);
        }
    }

    /// 1000 calls/s of 10 ms each at a cool CPU: a capacity of 10 in flight.
    fn trained() -> Server {
        let mut server = Server::new();
        server.run(2_000, 1, 500, 10 * MS);
        assert_eq!(server.refused, 0);
        assert_eq!(server.shedder.stats(server.now).capacity, 10.0);
        server
    }
}

#[test]
fn a_cool_cpu_refuses_nothing_even_ten_times_over_capacity() {
    let mut server = Server::trained();
    fill(&mut server, 100);
    let stats = server.shedder.stats(server.now);
    assert_eq!(stats.capacity, 10.0);
    assert!(stats.flying == 100 && stats.average > 90.0, "{stats:?}");
    assert!(!stats.hot);
    assert_eq!(server.refused, 0);
    // The same queue on a hot CPU is refused: the test can tell.
    assert!(!server.offer(950, 10 * MS));
}

#[test]
fn a_hot_cpu_under_the_limit_refuses_nothing() {
    let mut server = Server::trained();
    // The load falls to 4 in flight, then the CPU spikes: the limit at 950
    // is 5.
    for ms in 0..3_200 {
        let cpu = if ms < 200 { 500 } else { 950 };
        server.tick(usize::from(server.now % (10 * MS) < 4 * MS), cpu, 10 * MS);
        assert!(ms < 20 || server.shedder.flying() <= 4);
    }
    let stats = server.shedder.stats(server.now);
    assert!(stats.hot);
    assert_eq!(stats.limit, 5.0);
    assert_eq!(server.refused, 0);
    // At the very top of the CPU, with nothing queued: still nothing.
    let mut idle = Server::trained();
    idle.run(100, 0, 500, 10 * MS);
    assert!(idle.offer(1_000, 10 * MS));
    assert!(idle.offer(1_000, 10 * MS));
}

#[test]
fn the_limit_at_a_thousand_passes_a_second_and_ten_milliseconds() {
    for (cpu, limit) in [(900, 10.0), (950, 5.0), (990, 1.0)] {
        let mut server = Server::trained();
        server.offer(cpu, 10 * MS);
        assert_eq!(server.shedder.stats(server.now).limit, limit, "cpu {cpu}");
        // Offered 1000 calls/s at that CPU, the shedder holds the calls in
        // flight to the limit (a call is refused once more than it are).
        server.run(200, 1, cpu, 10 * MS);
        let (mut most, mut through) = (0, server.admitted);
        for _ in 0..2_000 {
            server.tick(1, cpu, 10 * MS);
            most = most.max(server.shedder.flying());
        }
        through = server.admitted - through;
        assert!(most as f64 <= limit + 1.0, "cpu {cpu}: {most} in flight");
        assert!(most as f64 >= limit, "cpu {cpu}: only {most} in flight");
        assert!(through > 0);
        if cpu > 900 {
            assert!(server.refused > 0, "cpu {cpu} refused nothing");
        }
    }
}

/// Holds `n` more calls in flight on a cool CPU and churns them for 100 ms
/// (each millisecond the oldest finishes and one starts: as many passes as
/// the training had, all slower, so the capacity stays put) until the average has caught up: full,
/// whatever the CPU.
fn fill(server: &mut Server, n: usize) {
    let long = 1_000 * SECOND;
    server.run(20, 0, 500, 0); // what was in flight finishes
    for _ in 0..n {
        assert!(server.offer(500, long));
    }
    for _ in 0..100 {
        server.tick(0, 500, 0);
        let (_, mut ticket) = server.open.remove(0);
        server.shedder.pass(&mut ticket, server.now).unwrap();
        assert!(server.offer(500, long));
    }
    let stats = server.shedder.stats(server.now);
    assert!(stats.average > stats.capacity * 2.0, "{stats:?}");
}

#[test]
fn the_cool_off_keeps_refusing_for_a_second_only_after_a_refusal() {
    let mut server = Server::trained();
    fill(&mut server, 30);
    let spike = server.now;
    assert!(!server.offer(950, MS)); // hot and full: refused
    server.now = spike + MS;
    assert!(!server.offer(500, MS)); // the CPU fell, still cooling
    server.now = spike + SECOND - 1;
    assert!(!server.offer(500, MS));
    assert!(server.shedder.stats(server.now).hot);
    server.now = spike + SECOND;
    assert!(server.offer(500, MS)); // cooled
    assert!(!server.shedder.stats(server.now).hot);

    // A spike that refused nothing (nothing was queued), then as full as
    // before within the second: no cool-off.
    let mut server = Server::trained();
    server.run(100, 0, 500, 0);
    let spike = server.now;
    assert!(server.offer(950, 1_000 * SECOND));
    fill(&mut server, 30);
    assert!(server.now < spike + SECOND);
    assert!(server.offer(500, MS));
    assert!(!server.shedder.stats(server.now).hot);
    assert_eq!(server.refused, 0);
}

#[test]
fn a_fast_failure_feeds_neither_passes_nor_response_times() {
    let mut plain = Server::trained();
    let mut failing = Server::trained();
    for _ in 0..1_000 {
        let mut ticket = failing.shedder.allow(failing.now, 500).unwrap();
        failing.shedder.fail(&mut ticket).unwrap();
    }
    let later = plain.now + 300 * MS;
    plain.run(300, 0, 500, 10 * MS);
    failing.run(300, 0, 500, 10 * MS);
    let (a, b) = (plain.shedder.stats(later), failing.shedder.stats(later));
    // Had the failures counted, the busiest bucket would hold 1000 passes
    // and the fastest mean response time would be 0.
    assert_eq!(a.capacity, b.capacity);
    assert_eq!(a.limit, b.limit);
    assert_eq!(b.capacity, 10.0);
    assert_eq!(b.flying, 0);
}

#[test]
fn nothing_is_refused_before_a_call_has_completed() {
    let mut server = Server::new();
    for _ in 0..1_000 {
        assert!(server.offer(1_000, SECOND));
    }
    assert_eq!(server.shedder.flying(), 1_000);
    // The first completion moves the average, and refusals can begin.
    let (_, mut ticket) = server.open.remove(0);
    server.shedder.pass(&mut ticket, 0).unwrap();
    assert!(server.shedder.stats(0).average > 99.0);
    assert!(!server.offer(1_000, SECOND));
}

mod through_c {
    //! Several threads through one C handle: every call leaves flight.
    use crate::race;
    use weir::shedder::*;
    use weir::status::weir_status::{WEIR_ERR_SETTLED, WEIR_OK};

    struct Shared(*mut weir_shedder);
    // SAFETY: the handle is documented as safe to share between threads.
    unsafe impl Send for Shared {}
    unsafe impl Sync for Shared {}

    impl Shared {
        /// The handle; a closure calling this captures the whole `Shared`
        /// (which is Sync), not the bare pointer inside it.
        fn get(&self) -> *mut weir_shedder {
            self.0
        }
    }

    #[test]
    fn threads_settle_every_ticket_once() {
        let mut handle = std::ptr::null_mut();
        assert_eq!(weir_shedder_new(std::ptr::null(), 0, &mut handle), WEIR_OK);
        let shared = Shared(handle);
        std::thread::scope(|scope| {
            for t in 0..4_i64 {
                let shared = &shared;
                scope.spawn(move || {
                    for i in 0..5_000_i64 {
                        let now = i * 100_000;
                        let mut ticket = weir_shedder_ticket::default();
                        if weir_shedder_allow(shared.0, now, 950, &mut ticket) {
                            let status = if (i + t) % 3 == 0 {
                                weir_shedder_fail(shared.0, &mut ticket)
                            } else {
                                weir_shedder_pass(shared.0, &mut ticket, now + 1_000_000)
                            };
                            assert_eq!(status, WEIR_OK);
                        }
                        assert_eq!(weir_shedder_fail(shared.0, &mut ticket), WEIR_ERR_SETTLED);
                    }
                });
            }
        });
        assert_eq!(weir_shedder_flying(handle), 0);
        weir_shedder_free(handle);
    }

    #[test]
    fn a_ticket_settled_from_two_threads_at_once_settles_once() {
        const TICKETS: usize = 5_000;
        let mut handle = std::ptr::null_mut();
        assert_eq!(weir_shedder_new(std::ptr::null(), 0, &mut handle), WEIR_OK);
        let shared = Shared(handle);
        let settled = race::settle_each_from_two_threads(
            TICKETS,
            |ticket| assert!(weir_shedder_allow(handle, 0, 500, ticket)),
            |thread, ticket| {
                race::went_through(if thread == 0 {
                    weir_shedder_pass(shared.get(), ticket, 1_000_000)
                } else {
                    weir_shedder_fail(shared.get(), ticket)
                })
            },
        );
        assert_eq!(settled, TICKETS, "some ticket settled twice");
        assert_eq!(weir_shedder_flying(handle), 0);
        weir_shedder_free(handle);
    }
}
