//! monocoque (crate monocoque-rs: ZMTP on io_uring through compio) as a peer of
//! the throughput and latency studies: the same argv and JSON lines as
//! `bench_rust_peers` (`bench_monocoque monocoque thr|lat ...`).
//!
//! monocoque's sockets are built on one accepted or connected stream (its
//! `bind` accepts one peer before it returns), so the bound side here listens
//! with compio, prints `READY` with the resolved endpoints, then accepts and
//! wraps each stream (`from_tcp`). tcp only: its ipc sockets are another
//! type (`PushSocket<UnixStream>`, ...) that this harness does not wire up yet,
//! and it has no inproc transport; those cells fail with that reason.

use bytes::Bytes;
use compio::net::{TcpListener, TcpStream};
use monocoque::zmq::{PullSocket, PushSocket, RepSocket, ReqSocket};
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

const LIB: &str = "\"lib\":\"monocoque-rs\",\"module\":\"monocoque-rs\",\"module_version\":\"0.1\"";

enum Listener {
    Tcp(TcpListener),
}

enum Stream {
    Tcp(TcpStream),
}

async fn listen(ep: &str) -> Listener {
    if let Some(addr) = ep.strip_prefix("tcp://") {
        Listener::Tcp(TcpListener::bind(addr.replace(":*", ":0")).await.expect("listen"))
    } else {
        panic!("bench_monocoque: tcp only (ipc not wired in this harness, no inproc in monocoque): {ep}")
    }
}

impl Listener {
    fn endpoint(&self) -> String {
        match self {
            Listener::Tcp(l) => format!("tcp://{}", l.local_addr().expect("local_addr")),
        }
    }
    async fn accept(&self) -> Stream {
        match self {
            Listener::Tcp(l) => Stream::Tcp(l.accept().await.expect("accept").0),
        }
    }
}

async fn dial(ep: &str) -> Stream {
    if let Some(addr) = ep.strip_prefix("tcp://") {
        Stream::Tcp(TcpStream::connect(addr).await.expect("connect"))
    } else {
        panic!("bench_monocoque: tcp only (ipc not wired in this harness, no inproc in monocoque): {ep}")
    }
}

macro_rules! wrap {
    ($ty:ty, $stream:expr) => {
        match $stream {
            Stream::Tcp(s) => <$ty>::from_tcp(s).await.expect("handshake"),
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

async fn thr(args: &[String]) {
    match args[0].as_str() {
        "recv" => {
            let (size, count) = (arg(args, 2, 100), arg(args, 3, 1000));
            let data = listen(&args[1]).await;
            let ack = listen(&ack_ep(&args[1])).await;
            println!("READY {} {}", data.endpoint(), ack.endpoint());
            std::io::stdout().flush().unwrap();
            let mut pull = wrap!(PullSocket, data.accept().await);
            let mut ack = wrap!(PushSocket, ack.accept().await);
            let first = first_len(pull.recv().await.expect("recv"));
            assert_eq!(first, size, "size mismatch");
            let start = Instant::now();
            for _ in 1..count {
                pull.recv().await.expect("recv").expect("connection closed");
            }
            let secs = start.elapsed().as_secs_f64();
            ack.send(vec![Bytes::from_static(b"done")]).await.expect("ack");
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
            let mut push = wrap!(PushSocket, dial(&args[1]).await);
            let mut ack = wrap!(PullSocket, dial(&args[5]).await);
            let body = Bytes::from(vec![b'x'; size]);
            let start = Instant::now();
            for _ in 0..count {
                let m = if zc { body.clone() } else { Bytes::copy_from_slice(&body) };
                push.send(vec![m]).await.expect("send");
            }
            let secs = start.elapsed().as_secs_f64();
            ack.recv().await.expect("ack");
            println!(
                "{{\"count\":{count},\"send_seconds\":{secs:.9},\"send_calls_per_s\":{:.3},\"cpu_s\":{:.6},{LIB}}}",
                count as f64 / secs,
                cpu_seconds()
            );
        }
        other => panic!("monocoque has no inproc transport (thr {other})"),
    }
}

async fn lat(args: &[String]) {
    match args[0].as_str() {
        "server" => {
            let l = listen(&args[1]).await;
            println!("READY {}", l.endpoint());
            std::io::stdout().flush().unwrap();
            let mut rep = wrap!(RepSocket, l.accept().await);
            let body = Bytes::from(vec![b'x'; arg(args, 2, 100)]);
            for _ in 0..arg(args, 3, 1000) + WARM {
                rep.recv().await.expect("recv").expect("connection closed");
                rep.send(vec![body.clone()]).await.expect("send");
            }
            println!("{{\"served\":true}}");
        }
        "client" => {
            let (size, count) = (arg(args, 2, 100), arg(args, 3, 1000));
            let mut req = wrap!(ReqSocket, dial(&args[1]).await);
            let body = vec![b'x'; size];
            let mut rt = Vec::with_capacity(count);
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
            let sum: f64 = rt.iter().sum();
            rt.sort_by(|a, b| a.partial_cmp(b).unwrap());
            println!(
                "{{\"count\":{count},\"seconds\":{sum:.9},\"mean_us\":{:.3},\"p50_us\":{:.3},\"p99_us\":{:.3},{LIB}}}",
                sum / count as f64 * 1e6,
                rt[count / 2] * 1e6,
                rt[(count as f64 * 0.99) as usize] * 1e6
            );
        }
        other => panic!("monocoque has no inproc transport (lat {other})"),
    }
}

#[compio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        eprintln!("usage: bench_monocoque monocoque thr|lat ...");
        std::process::exit(2);
    }
    match args[1].as_str() {
        "thr" => thr(&args[2..]).await,
        "lat" => lat(&args[2..]).await,
        other => panic!("unknown study {other}"),
    }
    std::io::stdout().flush().unwrap();
    std::process::exit(0);
}
