//! Rust-level peers of the benchmark studies (issue 12): the same throughput
//! (study 2) and latency (study 3) programs as `bench_oxmq`, on the crates a
//! Rust user would pick instead of oxmq. Same argv and JSON lines, with the
//! library named first:
//!
//! ```text
//! bench_rust_peers LIB thr recv ENDPOINT SIZE COUNT | thr send ENDPOINT SIZE COUNT copy|zc ACK_ENDPOINT
//! bench_rust_peers LIB thr inproc SIZE COUNT copy|zc
//! bench_rust_peers LIB lat server ENDPOINT SIZE COUNT | lat client ENDPOINT SIZE COUNT | lat inproc SIZE COUNT
//! ```
//!
//! LIB is `omq` (omq.rs, crate omq-tokio), `zeromq` (zmq.rs) or `rzmq`. All
//! three are async on tokio, so each program runs in the multi-threaded tokio
//! runtime `#[tokio::main]` gives a user. copy builds each message from a
//! borrowed slice (one copy, as a user sending `&[u8]` does); zc sends a clone
//! of one refcounted `Bytes`.

use bytes::Bytes;
use std::future::Future;
use std::io::Write;
use std::time::Instant;

const WARM: usize = 100;

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Push,
    Pull,
    Req,
    Rep,
}

/// One socket of some library, reduced to what the studies do.
trait PeerSocket: Send + 'static {
    /// Bind and return the resolved endpoint (wildcard port filled in).
    fn bind(&mut self, ep: &str) -> impl Future<Output = String> + Send;
    fn connect(&mut self, ep: &str) -> impl Future<Output = ()> + Send;
    fn send(&mut self, body: Bytes) -> impl Future<Output = ()> + Send;
    /// Receive one single-part message; returns its size.
    fn recv(&mut self) -> impl Future<Output = usize> + Send;
}

trait Lib {
    type S: PeerSocket;
    const NAME: &'static str;
    fn version() -> &'static str;
    fn socket(&self, kind: Kind) -> Self::S;
}

// ---------------------------------------------------------------- omq.rs

struct Omq;

impl PeerSocket for omq_tokio::Socket {
    async fn bind(&mut self, ep: &str) -> String {
        let ep = ep.replace(":*", ":0");
        omq_tokio::Socket::bind(self, ep.as_str()).await.expect("omq bind").to_string()
    }
    async fn connect(&mut self, ep: &str) {
        omq_tokio::Socket::connect(self, ep).await.expect("omq connect");
    }
    async fn send(&mut self, body: Bytes) {
        omq_tokio::Socket::send(self, omq_tokio::Message::single(body)).await.expect("omq send");
    }
    async fn recv(&mut self) -> usize {
        omq_tokio::Socket::recv(self).await.expect("omq recv").byte_len()
    }
}

impl Lib for Omq {
    type S = omq_tokio::Socket;
    const NAME: &'static str = "omq-tokio";
    fn version() -> &'static str {
        "0.33"
    }
    fn socket(&self, kind: Kind) -> Self::S {
        use omq_tokio::SocketType as T;
        let t = match kind {
            Kind::Push => T::Push,
            Kind::Pull => T::Pull,
            Kind::Req => T::Req,
            Kind::Rep => T::Rep,
        };
        // On the caller's runtime, as its README suggests for async users.
        omq_tokio::Socket::new(t, omq_tokio::Options::default())
    }
}

// ---------------------------------------------------------------- zmq.rs

enum ZmqRs {
    Push(zeromq::PushSocket),
    Pull(zeromq::PullSocket),
    Req(zeromq::ReqSocket),
    Rep(zeromq::RepSocket),
}

macro_rules! zeromq_each {
    ($s:expr, $v:ident => $e:expr) => {
        match $s {
            ZmqRs::Push($v) => $e,
            ZmqRs::Pull($v) => $e,
            ZmqRs::Req($v) => $e,
            ZmqRs::Rep($v) => $e,
        }
    };
}

impl PeerSocket for ZmqRs {
    async fn bind(&mut self, ep: &str) -> String {
        use zeromq::Socket;
        let ep = ep.replace(":*", ":0");
        zeromq_each!(self, s => s.bind(&ep).await.expect("zeromq bind").to_string())
    }
    async fn connect(&mut self, ep: &str) {
        use zeromq::Socket;
        zeromq_each!(self, s => s.connect(ep).await.expect("zeromq connect"))
    }
    async fn send(&mut self, body: Bytes) {
        use zeromq::SocketSend;
        let m = zeromq::ZmqMessage::from(body);
        match self {
            ZmqRs::Push(s) => s.send(m).await,
            ZmqRs::Req(s) => s.send(m).await,
            ZmqRs::Rep(s) => s.send(m).await,
            ZmqRs::Pull(_) => panic!("PULL cannot send"),
        }
        .expect("zeromq send")
    }
    async fn recv(&mut self) -> usize {
        use zeromq::SocketRecv;
        let m = match self {
            ZmqRs::Pull(s) => s.recv().await,
            ZmqRs::Req(s) => s.recv().await,
            ZmqRs::Rep(s) => s.recv().await,
            ZmqRs::Push(_) => panic!("PUSH cannot receive"),
        }
        .expect("zeromq recv");
        m.get(0).map(|b| b.len()).unwrap_or(0)
    }
}

struct ZeroMq;

impl Lib for ZeroMq {
    type S = ZmqRs;
    const NAME: &'static str = "zeromq";
    fn version() -> &'static str {
        "0.7"
    }
    fn socket(&self, kind: Kind) -> ZmqRs {
        use zeromq::Socket;
        match kind {
            Kind::Push => ZmqRs::Push(zeromq::PushSocket::new()),
            Kind::Pull => ZmqRs::Pull(zeromq::PullSocket::new()),
            Kind::Req => ZmqRs::Req(zeromq::ReqSocket::new()),
            Kind::Rep => ZmqRs::Rep(zeromq::RepSocket::new()),
        }
    }
}

// ---------------------------------------------------------------- rzmq

/// rzmq as its README asks for performance on Linux: the io_uring backend
/// (feature `io-uring`, `initialize_uring_backend` before the context, io_uring
/// sessions on every socket of the context) and TCP_CORK on the sending PUSH
/// ("batching smaller ZMTP frames for a single network write"); REQ/REP are
/// not corked, as a round trip must not wait for a batch.
struct Rzmq(rzmq::Context);

impl Rzmq {
    fn new() -> Rzmq {
        rzmq::uring::initialize_uring_backend(rzmq::uring::UringConfig::default()).expect("rzmq io_uring backend");
        Rzmq(rzmq::Context::new().expect("rzmq context").with_io_uring_sessions(true))
    }
}

struct RzmqSocket(rzmq::Socket, Kind);

impl RzmqSocket {
    async fn tune(&self, ep: &str) {
        if self.1 == Kind::Push && ep.starts_with("tcp://") {
            self.0.set_option(rzmq::socket::options::TCP_CORK, 1i32).await.expect("rzmq TCP_CORK");
        }
    }
}

impl PeerSocket for RzmqSocket {
    async fn bind(&mut self, ep: &str) -> String {
        self.tune(ep).await;
        rzmq::Socket::bind(&self.0, &ep.replace(":*", ":0")).await.expect("rzmq bind");
        let last = self.0.get_option(rzmq::socket::options::LAST_ENDPOINT).await.expect("rzmq LAST_ENDPOINT");
        String::from_utf8_lossy(&last).trim_end_matches('\0').to_string()
    }
    async fn connect(&mut self, ep: &str) {
        self.tune(ep).await;
        rzmq::Socket::connect(&self.0, ep).await.expect("rzmq connect");
    }
    async fn send(&mut self, body: Bytes) {
        rzmq::Socket::send(&self.0, rzmq::Msg::from_bytes(body)).await.expect("rzmq send");
    }
    async fn recv(&mut self) -> usize {
        rzmq::Socket::recv(&self.0).await.expect("rzmq recv").size()
    }
}

impl Lib for Rzmq {
    type S = RzmqSocket;
    const NAME: &'static str = "rzmq";
    fn version() -> &'static str {
        "0.5 (io_uring backend)"
    }
    fn socket(&self, kind: Kind) -> RzmqSocket {
        use rzmq::SocketType as T;
        let t = match kind {
            Kind::Push => T::Push,
            Kind::Pull => T::Pull,
            Kind::Req => T::Req,
            Kind::Rep => T::Rep,
        };
        RzmqSocket(self.0.socket(t).expect("rzmq socket"), kind)
    }
}

// ---------------------------------------------------------------- the studies

fn arg(args: &[String], i: usize, dflt: usize) -> usize {
    args.get(i).and_then(|s| s.parse().ok()).unwrap_or(dflt)
}

/// User + system CPU seconds of this whole process so far.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes into the zeroed struct we pass.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn lib_fields<L: Lib>() -> String {
    format!("\"lib\":\"{}\",\"module\":\"{}\",\"module_version\":\"{}\"", L::NAME, L::NAME, L::version())
}

async fn recv_loop<S: PeerSocket>(pull: &mut S, size: usize, count: usize) -> f64 {
    let first = pull.recv().await;
    assert_eq!(first, size, "size mismatch");
    let start = Instant::now();
    for _ in 1..count {
        pull.recv().await;
    }
    start.elapsed().as_secs_f64()
}

async fn send_loop<S: PeerSocket>(push: &mut S, size: usize, count: usize, zc: bool) -> f64 {
    let body = Bytes::from(vec![b'x'; size]);
    let start = Instant::now();
    for _ in 0..count {
        let m = if zc { body.clone() } else { Bytes::copy_from_slice(&body) };
        push.send(m).await;
    }
    start.elapsed().as_secs_f64()
}

fn ack_ep(ep: &str) -> String {
    if ep.starts_with("tcp://") {
        "tcp://127.0.0.1:*".into()
    } else {
        format!("{ep}-ack")
    }
}

async fn thr<L: Lib>(lib: L, args: &[String]) {
    match args[0].as_str() {
        "recv" => {
            let (size, count) = (arg(args, 2, 100), arg(args, 3, 1000));
            let mut pull = lib.socket(Kind::Pull);
            let ep = pull.bind(&args[1]).await;
            let mut ack = lib.socket(Kind::Push);
            let aep = ack.bind(&ack_ep(&args[1])).await;
            println!("READY {ep} {aep}");
            std::io::stdout().flush().unwrap();
            let secs = recv_loop(&mut pull, size, count).await;
            ack.send(Bytes::from_static(b"done")).await;
            let rate = (count - 1) as f64 / secs;
            // Let the ack leave before the runtime goes away.
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            println!(
                "{{\"count\":{count},\"seconds\":{secs:.9},\"msgs_per_s\":{rate:.3},\"mb_per_s\":{:.3},\
                 \"cpu_s\":{:.6},{}}}",
                rate * size as f64 / 1e6,
                cpu_seconds(),
                lib_fields::<L>()
            );
        }
        "send" => {
            let (size, count) = (arg(args, 2, 100), arg(args, 3, 1000));
            let zc = args.get(4).map(|m| m == "zc").unwrap_or(false);
            let mut push = lib.socket(Kind::Push);
            push.connect(&args[1]).await;
            let mut ack = lib.socket(Kind::Pull);
            if let Some(ep) = args.get(5) {
                ack.connect(ep).await;
            }
            let secs = send_loop(&mut push, size, count, zc).await;
            if args.get(5).is_some() {
                ack.recv().await;
            }
            println!(
                "{{\"count\":{count},\"send_seconds\":{secs:.9},\"send_calls_per_s\":{:.3},\"cpu_s\":{:.6},{}}}",
                count as f64 / secs,
                cpu_seconds(),
                lib_fields::<L>()
            );
        }
        "inproc" => {
            let (size, count) = (arg(args, 1, 100), arg(args, 2, 1000));
            let zc = args.get(3).map(|m| m == "zc").unwrap_or(false);
            let mut pull = lib.socket(Kind::Pull);
            let ep = pull.bind("inproc://thr").await;
            let mut push = lib.socket(Kind::Push);
            push.connect(&ep).await;
            let receiver = tokio::spawn(async move { recv_loop(&mut pull, size, count).await });
            let ssecs = send_loop(&mut push, size, count, zc).await;
            let secs = receiver.await.unwrap();
            let rate = (count - 1) as f64 / secs;
            println!(
                "{{\"count\":{count},\"seconds\":{secs:.9},\"msgs_per_s\":{rate:.3},\"mb_per_s\":{:.3},\
                 \"send_seconds\":{ssecs:.9},\"send_calls_per_s\":{:.3},\"cpu_s\":{:.6},{}}}",
                rate * size as f64 / 1e6,
                count as f64 / ssecs,
                cpu_seconds(),
                lib_fields::<L>()
            );
        }
        other => panic!("thr: unknown mode {other}"),
    }
}

async fn serve<S: PeerSocket>(rep: &mut S, size: usize, count: usize) {
    let body = Bytes::from(vec![b'x'; size]);
    for _ in 0..count + WARM {
        rep.recv().await;
        rep.send(body.clone()).await;
    }
}

async fn client<S: PeerSocket, L: Lib>(req: &mut S, size: usize, count: usize) {
    let body = vec![b'x'; size];
    let mut rt = Vec::with_capacity(count);
    for i in 0..count + WARM {
        let start = Instant::now();
        req.send(Bytes::copy_from_slice(&body)).await;
        let n = req.recv().await;
        let dt = start.elapsed().as_secs_f64();
        assert_eq!(n, size, "size mismatch");
        if i >= WARM {
            rt.push(dt);
        }
    }
    let sum: f64 = rt.iter().sum();
    rt.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "{{\"count\":{count},\"seconds\":{sum:.9},\"mean_us\":{:.3},\"p50_us\":{:.3},\"p99_us\":{:.3},{}}}",
        sum / count as f64 * 1e6,
        rt[count / 2] * 1e6,
        rt[(count as f64 * 0.99) as usize] * 1e6,
        lib_fields::<L>()
    );
}

async fn lat<L: Lib>(lib: L, args: &[String]) {
    match args[0].as_str() {
        "server" => {
            let mut rep = lib.socket(Kind::Rep);
            let ep = rep.bind(&args[1]).await;
            println!("READY {ep}");
            std::io::stdout().flush().unwrap();
            serve(&mut rep, arg(args, 2, 100), arg(args, 3, 1000)).await;
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            println!("{{\"served\":true}}");
        }
        "client" => {
            let mut req = lib.socket(Kind::Req);
            req.connect(&args[1]).await;
            client::<_, L>(&mut req, arg(args, 2, 100), arg(args, 3, 1000)).await;
        }
        "inproc" => {
            let (size, count) = (arg(args, 1, 100), arg(args, 2, 1000));
            let mut rep = lib.socket(Kind::Rep);
            let ep = rep.bind("inproc://lat").await;
            let mut req = lib.socket(Kind::Req);
            req.connect(&ep).await;
            let server = tokio::spawn(async move { serve(&mut rep, size, count).await });
            client::<_, L>(&mut req, size, count).await;
            server.await.unwrap();
        }
        other => panic!("lat: unknown mode {other}"),
    }
}

async fn study<L: Lib>(lib: L, args: &[String]) {
    match args[0].as_str() {
        "thr" => thr(lib, &args[1..]).await,
        "lat" => lat(lib, &args[1..]).await,
        other => panic!("unknown study {other}"),
    }
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        eprintln!("usage: bench_rust_peers omq|zeromq|rzmq thr|lat ...");
        std::process::exit(2);
    }
    match args[0].as_str() {
        "omq" => study(Omq, &args[1..]).await,
        "zeromq" => study(ZeroMq, &args[1..]).await,
        "rzmq" => study(Rzmq::new(), &args[1..]).await,
        other => {
            eprintln!("unknown library {other}");
            std::process::exit(2);
        }
    }
    // Some runtimes keep background tasks alive; the result is printed, so leave now.
    std::io::stdout().flush().unwrap();
    std::process::exit(0);
}
