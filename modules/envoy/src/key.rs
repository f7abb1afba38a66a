//! A request's key for a limit: its parts' bytes, concatenated.

use crate::config::Part;

/// What a key is read from: the request as Envoy holds it.
pub trait Request {
    /// The `i`-th value of request header `name` (lowercase), if any.
    fn header(&self, name: &str, i: usize) -> Option<&[u8]>;
    /// The downstream peer's address as Envoy gives it (`ip:port`, IPv6
    /// in brackets).
    fn peer(&self) -> Option<&[u8]>;
}

/// `ip:port` or `[ip]:port` without the port; anything else as it is.
pub fn without_port(addr: &[u8]) -> &[u8] {
    if let Some(rest) = addr.strip_prefix(b"[") {
        if let Some(end) = rest.iter().position(|&b| b == b']') {
            return &rest[..end];
        }
        return addr;
    }
    match addr.iter().rposition(|&b| b == b':') {
        // One colon: IPv4 with a port. More: a bare IPv6 address.
        Some(i) if addr[..i].iter().all(|&b| b != b':') => &addr[..i],
        _ => addr,
    }
}

fn trim(s: &[u8]) -> &[u8] {
    let start = s
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(s.len());
    let end = s
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    &s[start..end]
}

/// The client address behind `hops` trusted proxies: the (hops+1)-th entry
/// of `x-forwarded-for` from the right, over every value of the header in
/// order, or None when there are not that many.
fn forwarded<R: Request + ?Sized>(r: &R, hops: usize) -> Option<&[u8]> {
    let mut entries: Vec<&[u8]> = Vec::new();
    let mut i = 0;
    while let Some(v) = r.header("x-forwarded-for", i) {
        entries.extend(v.split(|&b| b == b',').map(trim));
        i += 1;
    }
    let n = entries.len();
    if hops >= n {
        return None;
    }
    let e = entries[n - 1 - hops];
    (!e.is_empty()).then_some(e)
}

fn part<'r, R: Request + ?Sized>(r: &'r R, p: &'r Part) -> &'r [u8] {
    match p {
        Part::Header(name) => r.header(name, 0).unwrap_or(b""),
        Part::ClientAddress => r.peer().map(without_port).unwrap_or(b""),
        Part::XForwardedFor(hops) => forwarded(r, *hops)
            .or_else(|| r.peer().map(without_port))
            .unwrap_or(b""),
        Part::Text(t) => t,
    }
}

/// A key read: the bytes where they are (one part), or a range of the
/// arena the parts were concatenated into.
#[derive(Clone, Copy, Debug)]
pub enum KeyRef<'r> {
    Bytes(&'r [u8]),
    Arena(usize, usize),
}

impl<'r> KeyRef<'r> {
    /// The key's bytes, with `arena` the buffer [`read_into`] appended to.
    pub fn get<'a>(self, arena: &'a [u8]) -> &'a [u8]
    where
        'r: 'a,
    {
        match self {
            KeyRef::Bytes(b) => b,
            KeyRef::Arena(start, end) => &arena[start..end],
        }
    }
}

/// The key of `parts` for `r`: a one-part key where it lies (no copy), a
/// longer one appended to `arena`. An empty key is not limited.
pub fn read_into<'r, R: Request + ?Sized>(
    r: &'r R,
    parts: &'r [Part],
    arena: &mut Vec<u8>,
) -> KeyRef<'r> {
    if let [one] = parts {
        return KeyRef::Bytes(part(r, one));
    }
    let start = arena.len();
    for p in parts {
        arena.extend_from_slice(part(r, p));
    }
    KeyRef::Arena(start, arena.len())
}

/// The key of `parts` for `r`, as bytes.
pub fn read<'r, R: Request + ?Sized>(
    r: &'r R,
    parts: &'r [Part],
    arena: &'r mut Vec<u8>,
) -> &'r [u8] {
    arena.clear();
    let k = read_into(r, parts, arena);
    k.get(arena)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fake {
        headers: Vec<(&'static str, &'static str)>,
        peer: Option<&'static str>,
    }

    impl Request for Fake {
        fn header(&self, name: &str, i: usize) -> Option<&[u8]> {
            self.headers
                .iter()
                .filter(|(k, _)| *k == name)
                .nth(i)
                .map(|(_, v)| v.as_bytes())
        }
        fn peer(&self) -> Option<&[u8]> {
            self.peer.map(str::as_bytes)
        }
    }

    fn key(f: &Fake, parts: &[Part]) -> String {
        let mut buf = Vec::new();
        String::from_utf8(read(f, parts, &mut buf).to_vec()).unwrap()
    }

    #[test]
    fn ports_come_off() {
        assert_eq!(without_port(b"127.0.0.1:5555"), b"127.0.0.1");
        assert_eq!(without_port(b"[::1]:5555"), b"::1");
        assert_eq!(without_port(b"::1"), b"::1");
        assert_eq!(without_port(b"10.0.0.1"), b"10.0.0.1");
    }

    #[test]
    fn parts_concatenate() {
        let f = Fake {
            headers: vec![
                ("x-client", "c1"),
                ("x-client", "c2"),
                (":authority", "h.example"),
            ],
            peer: Some("10.1.2.3:4000"),
        };
        let parts = [
            Part::Text(b"k:".to_vec()),
            Part::Header("x-client".into()),
            Part::Text(b"@".to_vec()),
            Part::Header(":authority".into()),
            Part::Text(b"/".to_vec()),
            Part::ClientAddress,
        ];
        assert_eq!(key(&f, &parts), "k:c1@h.example/10.1.2.3");
        assert_eq!(key(&f, &[Part::Header("x-missing".into())]), "");
    }

    #[test]
    fn forwarded_for_counts_trusted_hops_from_the_right() {
        let f = Fake {
            headers: vec![
                ("x-forwarded-for", "1.1.1.1, 2.2.2.2"),
                ("x-forwarded-for", "3.3.3.3"),
            ],
            peer: Some("9.9.9.9:1"),
        };
        assert_eq!(key(&f, &[Part::XForwardedFor(0)]), "3.3.3.3");
        assert_eq!(key(&f, &[Part::XForwardedFor(1)]), "2.2.2.2");
        assert_eq!(key(&f, &[Part::XForwardedFor(2)]), "1.1.1.1");
        assert_eq!(
            key(&f, &[Part::XForwardedFor(3)]),
            "9.9.9.9",
            "too few: the peer"
        );
        let none = Fake {
            headers: vec![],
            peer: Some("9.9.9.9:1"),
        };
        assert_eq!(key(&none, &[Part::XForwardedFor(0)]), "9.9.9.9");
    }
}
