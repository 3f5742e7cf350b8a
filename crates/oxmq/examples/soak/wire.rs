//! The soak's message format and its checks, shared by the hub and the peers.
//!
//! A message is three frames: a 16-byte header (peer id, sequence number), a
//! payload whose bytes are a function of the header, and the header again as a
//! trailer. A receiver can therefore tell a torn multipart message (wrong frame
//! count, trailer missing), a corrupted body, and a message from the wrong
//! peer or out of order, without any shared state with the sender.

use oxmq::{Msg, Socket, SNDMORE};

/// Small, fast PRNG (xorshift64*); the soak needs variety, not quality.
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub(crate) fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `lo..hi` (hi exclusive, hi > lo).
    pub(crate) fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo)
    }

    pub(crate) fn chance(&mut self, one_in: u64) -> bool {
        self.next().is_multiple_of(one_in)
    }
}

pub(crate) fn header(peer: u64, seq: u64) -> [u8; 16] {
    let mut h = [0u8; 16];
    h[..8].copy_from_slice(&peer.to_le_bytes());
    h[8..].copy_from_slice(&seq.to_le_bytes());
    h
}

pub(crate) fn parse_header(b: &[u8]) -> Option<(u64, u64)> {
    if b.len() != 16 {
        return None;
    }
    let peer = u64::from_le_bytes(b[..8].try_into().ok()?);
    let seq = u64::from_le_bytes(b[8..].try_into().ok()?);
    Some((peer, seq))
}

fn fill_byte(peer: u64, seq: u64, i: usize) -> u8 {
    (peer.wrapping_mul(131).wrapping_add(seq.wrapping_mul(31)).wrapping_add(i as u64 * 7)) as u8
}

/// Mostly small messages, some medium, and a few large enough (up to 1 MiB)
/// that a SIGKILL often lands while one is half-way onto the wire.
pub(crate) fn payload_len(rng: &mut Rng) -> usize {
    match rng.range(0, 1000) {
        0..=799 => rng.range(0, 120) as usize,
        800..=989 => rng.range(120, 16 * 1024) as usize,
        _ => rng.range(128 * 1024, 1024 * 1024) as usize,
    }
}

pub(crate) fn payload(peer: u64, seq: u64, len: usize) -> Vec<u8> {
    (0..len).map(|i| fill_byte(peer, seq, i)).collect()
}

/// Send one three-frame message. `between` runs between frames: a peer can
/// abort there (inproc) or stall so a kill lands mid-message (processes).
pub(crate) fn send_message(
    s: &Socket,
    peer: u64,
    seq: u64,
    len: usize,
    between: &mut dyn FnMut() -> bool,
) -> oxmq::Result<bool> {
    let h = header(peer, seq);
    s.send(Msg::from_slice(&h), SNDMORE)?;
    if between() {
        return Ok(false);
    }
    s.send(Msg::from_vec(payload(peer, seq, len)), SNDMORE)?;
    if between() {
        return Ok(false);
    }
    s.send(Msg::from_slice(&h), 0)?;
    Ok(true)
}

/// Check a received three-frame message; returns (peer, seq) or what is wrong.
pub(crate) fn check_message(parts: &[Msg]) -> Result<(u64, u64), String> {
    if parts.len() != 3 {
        return Err(format!("torn message: {} frames", parts.len()));
    }
    let (peer, seq) = parse_header(parts[0].as_slice()).ok_or("bad header")?;
    if parts[2].as_slice() != parts[0].as_slice() {
        return Err(format!("peer {peer} seq {seq}: trailer differs from header"));
    }
    let body = parts[1].as_slice();
    if let Some(i) = (0..body.len()).find(|&i| body[i] != fill_byte(peer, seq, i)) {
        return Err(format!("peer {peer} seq {seq}: payload corrupt at byte {i} of {}", body.len()));
    }
    Ok((peer, seq))
}

/// Resident set size of this process, after handing freed heap back to the
/// kernel: what is left is memory still in use, not the allocator's cache
/// of the last burst of 1 MiB messages.
pub(crate) fn rss_kib() -> u64 {
    // SAFETY: malloc_trim only walks glibc's own free lists; no pointer of
    // ours is involved.
    unsafe {
        libc::malloc_trim(0);
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Open descriptors of this process.
pub(crate) fn fd_count() -> u64 {
    std::fs::read_dir("/proc/self/fd").map(|d| d.count() as u64).unwrap_or(0)
}

/// What each open descriptor is (for a leak report).
pub(crate) fn fd_list() -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(dir) = std::fs::read_dir("/proc/self/fd") {
        for e in dir.flatten() {
            let target = std::fs::read_link(e.path()).map(|p| p.display().to_string()).unwrap_or_default();
            let detail = target
                .strip_prefix("socket:[")
                .and_then(|i| i.strip_suffix(']'))
                .map(socket_detail)
                .unwrap_or_default();
            out.push(format!("{} -> {target} {detail}", e.file_name().to_string_lossy()));
        }
    }
    out
}

/// The /proc/net line naming a socket inode (tcp state and addresses, or a unix path).
fn socket_detail(inode: &str) -> String {
    for table in ["tcp", "tcp6", "unix"] {
        let text = std::fs::read_to_string(format!("/proc/self/net/{table}")).unwrap_or_default();
        for line in text.lines().skip(1) {
            let cols: Vec<&str> = line.split_whitespace().collect();
            let hit = match table {
                "unix" => cols.get(6) == Some(&inode),
                _ => cols.get(9) == Some(&inode),
            };
            if hit {
                return format!("{table}: {}", cols.join(" "));
            }
        }
    }
    String::new()
}
