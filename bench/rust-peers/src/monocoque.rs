//! monocoque (crate monocoque-rs 0.4: ZMTP over a small runtime facade) as a
//! peer of the throughput and latency studies: the same argv and JSON lines as
//! `bench_rust_peers` (`bench_monocoque monocoque thr|lat ...`).
//!
//! Built as its README recommends for same-host benchmarks: the tokio backend
//! (feature `runtime-tokio`, the one its author publishes 64 B throughput on)
//! on its single-threaded `LocalRuntime`; write coalescing on the throughput
//! sender, flushed after the burst ("turn on coalescing for small-message
//! throughput"); `recv_into` on the throughput receiver (its allocation-free
//! receive for hot loops); eager sends (its default) for the latency study.
//!
//! monocoque's sockets wrap one accepted or connected stream, so the bound
//! side listens itself, prints `READY` with the resolved endpoints, then
//! accepts and wraps each stream. tcp and ipc; it has no inproc transport
//! across processes, so those cells fail with that reason.

use bytes::Bytes;
use monocoque::rt::{LocalRuntime, TcpListener, TcpStream, UnixListener, UnixStream};
use monocoque::zmq::{PullSocket, PushSocket, RepSocket, ReqSocket};
use monocoque::SocketOptions;
use std::io::Write;
use std::time::Instant;

const WARM: usize = 100;

fn arg(args: &[String], i: usize, dflt: usize) -> usize {
    args.get(i).and_then(|s| s.parse().ok()).unwrap_or(dflt)
}

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

const LIB: &str = concat!(
    "\"lib\":\"monocoque-rs\",\"module\":\"monocoque-rs (tokio backend)\",\"module_version\":\"",
    env!("MONOCOQUE_VERSION"),
    "\""
);

enum Listener {
    Tcp(TcpListener),
    Ipc(UnixListener, String),
}

enum Stream {
    Tcp(TcpStream),
    Ipc(UnixStream),
}

async fn listen(ep: &str) -> Listener {
    if let Some(addr) = ep.strip_prefix("tcp://") {
        Listener::Tcp(TcpListener::bind(addr.replace(":*", ":0")).await.expect("listen"))
    } else if let Some(path) = ep.strip_prefix("ipc://") {
        let _ = std::fs::remove_file(path);
        Listener::Ipc(UnixListener::bind(path).await.expect("listen"), ep.to_string())
    } else {
        panic!("bench_monocoque: monocoque has no cross-process inproc transport: {ep}")
    }
}

impl Listener {
    fn endpoint(&self) -> String {
        match self {
            Listener::Tcp(l) => format!("tcp://{}", l.local_addr().expect("local_addr")),
            Listener::Ipc(_, ep) => ep.clone(),
        }
    }
    async fn accept(&self) -> Stream {
        match self {
            Listener::Tcp(l) => Stream::Tcp(l.accept().await.expect("accept").0),
            Listener::Ipc(l, _) => Stream::Ipc(l.accept().await.expect("accept").0),
        }
    }
}

async fn dial(ep: &str) -> Stream {
    if let Some(addr) = ep.strip_prefix("tcp://") {
        Stream::Tcp(TcpStream::connect(addr).await.expect("connect"))
    } else if let Some(path) = ep.strip_prefix("ipc://") {
        Stream::Ipc(UnixStream::connect(path).await.expect("connect"))
    } else {
        panic!("bench_monocoque: monocoque has no cross-process inproc transport: {ep}")
    }
}

/// Runs `$body` with `$name` bound to a socket of type `$ty` over the stream,
/// whichever transport it is (the socket types are generic over the stream).
macro_rules! with_socket {
    ($ty:ident, $stream:expr, $opts:expr, |$name:ident| $body:expr) => {
        match $stream {
            Stream::Tcp(s) => {
                // from_tcp_*: the TCP path also sets TCP_NODELAY.
                #[allow(unused_mut)]
                let mut $name = $ty::from_tcp_with_options(s, $opts).await.expect("handshake");
                $body
            }
            Stream::Ipc(s) => {
                #[allow(unused_mut)]
                let mut $name = $ty::with_options(s, $opts).await.expect("handshake");
                $body
            }
        }
    };
}

fn ack_ep(ep: &str) -> String {
    if ep.starts_with("tcp://") {
        "tcp://127.0.0.1:*".into()
    } else {
        format!("{ep}-ack")
    }
}

fn first_len(m: Option<Vec<Bytes>>) -> usize {
    m.expect("connection closed").first().map(|b| b.len()).unwrap_or(0)
}

fn eager() -> SocketOptions {
    SocketOptions::default()
}

async fn thr(args: &[String]) {
    match args[0].as_str() {
        "recv" => {
            let (size, count) = (arg(args, 2, 100), arg(args, 3, 1000));
            let data = listen(&args[1]).await;
            let ack = listen(&ack_ep(&args[1])).await;
            println!("READY {} {}", data.endpoint(), ack.endpoint());
            std::io::stdout().flush().unwrap();
            let data = data.accept().await;
            let ack = ack.accept().await;
            // The ack goes out while the data socket is still open.
            let secs = with_socket!(PullSocket, data, eager(), |pull| {
                let first = first_len(pull.recv().await.expect("recv"));
                assert_eq!(first, size, "size mismatch");
                let start = Instant::now();
                // The README's allocation-free receive for a hot loop: one `Vec` reused.
                let mut frames = Vec::new();
                for _ in 1..count {
                    assert!(pull.recv_into(&mut frames).await.expect("recv"), "connection closed");
                }
                let secs = start.elapsed().as_secs_f64();
                with_socket!(PushSocket, ack, eager(), |ack| {
                    ack.send(vec![Bytes::from_static(b"done")]).await.expect("ack");
                });
                secs
            });
            let rate = (count - 1) as f64 / secs;
            println!(
                "{{\"count\":{count},\"seconds\":{secs:.9},\"msgs_per_s\":{rate:.3},\"mb_per_s\":{:.3},\
                 \"cpu_s\":{:.6},{LIB}}}",
                rate * size as f64 / 1e6,
                cpu_seconds()
            );
        }
        "send" => {
            let (size, count) = (arg(args, 2, 100), arg(args, 3, 1000));
            let zc = args.get(4).map(|m| m == "zc").unwrap_or(false);
            let data = dial(&args[1]).await;
            let ack = dial(&args[5]).await;
            let body = Bytes::from(vec![b'x'; size]);
            // The README's throughput setting: coalesce writes, flush after the burst.
            let coalesce = SocketOptions::default().with_write_coalescing(true);
            // The data socket stays open until the receiver acknowledges the last message.
            let secs = with_socket!(PushSocket, data, coalesce, |push| {
                let start = Instant::now();
                for _ in 0..count {
                    let m = if zc { body.clone() } else { Bytes::copy_from_slice(&body) };
                    push.send_one(m).await.expect("send");
                }
                push.flush().await.expect("flush");
                let secs = start.elapsed().as_secs_f64();
                with_socket!(PullSocket, ack, eager(), |ack| {
                    ack.recv().await.expect("ack");
                });
                secs
            });
            println!(
                "{{\"count\":{count},\"send_seconds\":{secs:.9},\"send_calls_per_s\":{:.3},\"cpu_s\":{:.6},{LIB}}}",
                count as f64 / secs,
                cpu_seconds()
            );
        }
        other => panic!("monocoque has no cross-process inproc transport (thr {other})"),
    }
}

async fn lat(args: &[String]) {
    match args[0].as_str() {
        "server" => {
            let l = listen(&args[1]).await;
            println!("READY {}", l.endpoint());
            std::io::stdout().flush().unwrap();
            let body = Bytes::from(vec![b'x'; arg(args, 2, 100)]);
            let n = arg(args, 3, 1000) + WARM;
            with_socket!(RepSocket, l.accept().await, eager(), |rep| {
                for _ in 0..n {
                    rep.recv().await.expect("recv").expect("connection closed");
                    rep.send(vec![body.clone()]).await.expect("send");
                }
            });
            println!("{{\"served\":true}}");
        }
        "client" => {
            let (size, count) = (arg(args, 2, 100), arg(args, 3, 1000));
            let body = vec![b'x'; size];
            let mut rt = Vec::with_capacity(count);
            with_socket!(ReqSocket, dial(&args[1]).await, eager(), |req| {
                for i in 0..count + WARM {
                    let start = Instant::now();
                    req.send(vec![Bytes::copy_from_slice(&body)]).await.expect("send");
                    let n = first_len(req.recv().await.expect("recv"));
                    let dt = start.elapsed().as_secs_f64();
                    assert_eq!(n, size, "size mismatch");
                    if i >= WARM {
                        rt.push(dt);
                    }
                }
            });
            let sum: f64 = rt.iter().sum();
            rt.sort_by(|a, b| a.partial_cmp(b).unwrap());
            println!(
                "{{\"count\":{count},\"seconds\":{sum:.9},\"mean_us\":{:.3},\"p50_us\":{:.3},\"p99_us\":{:.3},{LIB}}}",
                sum / count as f64 * 1e6,
                rt[count / 2] * 1e6,
                rt[(count as f64 * 0.99) as usize] * 1e6
            );
        }
        other => panic!("monocoque has no cross-process inproc transport (lat {other})"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        eprintln!("usage: bench_monocoque monocoque thr|lat ...");
        std::process::exit(2);
    }
    let rt = LocalRuntime::new().expect("runtime");
    rt.block_on(async {
        match args[1].as_str() {
            "thr" => thr(&args[2..]).await,
            "lat" => lat(&args[2..]).await,
            other => panic!("unknown study {other}"),
        }
    });
    std::io::stdout().flush().unwrap();
    std::process::exit(0);
}
