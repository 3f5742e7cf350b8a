//! The Rust side of the benchmark suite (`bench/run.py`, `make bench`): the
//! same programs as `bench/c/*.c`, on oxmq's Rust API. Each subcommand takes
//! its parameters on argv and prints one JSON line; programs that bind first
//! print `READY <endpoint>` so the orchestrator can start the peer.
//!
//! ```text
//! bench_oxmq callcost COUNT
//! bench_oxmq thr recv ENDPOINT SIZE COUNT | thr send ENDPOINT SIZE COUNT copy|zc ACK_ENDPOINT
//! bench_oxmq thr inproc SIZE COUNT copy|zc
//! bench_oxmq lat server ENDPOINT SIZE COUNT | lat client ENDPOINT SIZE COUNT
//! bench_oxmq lat inproc SIZE COUNT
//! bench_oxmq inproc_pair COUNT
//! bench_oxmq weather server ENDPOINT ZIPRANGE | weather client ENDPOINT N
//! ```
//!
//! copy sends a borrowed slice (the library copies it into a message); zc
//! sends a clone of one refcounted `Bytes` (no copy of the body). The
//! throughput receiver also binds an ack PUSH (printed second on its READY
//! line) and the sender waits for its ack before closing, as in `bench/c/thr.c`.
//!
//! With `BENCH_CURVE=1` (study 9) the bound socket of `thr` and `lat` is a
//! CURVE server and the connecting one a CURVE client, with the fixed test keys
//! of `bench/c/common.h`; ack sockets stay NULL.

use bytes::Bytes;
use oxmq::{opt, Context, Socket, SocketType, DONTWAIT};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

const WARM: usize = 100;

fn arg(args: &[String], i: usize, dflt: usize) -> usize {
    args.get(i).and_then(|a| a.parse().ok()).unwrap_or(dflt)
}

fn lib_fields() -> String {
    let (a, b, c) = oxmq::ZMQ_VERSION;
    format!("\"lib\":\"oxmq (Rust API)\",\"zmq_version\":\"{a}.{b}.{c}\"")
}

const SERVER_SECRET: &[u8] = b"JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6";
const CLIENT_SECRET: &[u8] = b"D:)Q[IlAW!ahhC2ac:9*A}h:p?([4%wOTJ%JR%cs";

fn bench_curve() -> bool {
    std::env::var("BENCH_CURVE").map(|v| !v.is_empty() && v != "0").unwrap_or(false)
}

/// The Z85 public key of a Z85 secret key, derived by oxmq itself.
fn public_of(secret_z85: &[u8]) -> String {
    let secret: [u8; 32] = oxmq::security::z85_decode(secret_z85).unwrap().try_into().unwrap();
    oxmq::security::z85_encode(&oxmq::security::curve_public(&secret)).unwrap()
}

fn curve_server(sock: &Socket) {
    if bench_curve() {
        sock.set_option_int(opt::CURVE_SERVER, 1).unwrap();
        sock.set_option_bytes(opt::CURVE_SECRETKEY, SERVER_SECRET).unwrap();
    }
}

fn curve_client(sock: &Socket) {
    if bench_curve() {
        sock.set_option_bytes(opt::CURVE_SERVERKEY, public_of(SERVER_SECRET).as_bytes()).unwrap();
        sock.set_option_bytes(opt::CURVE_PUBLICKEY, public_of(CLIENT_SECRET).as_bytes()).unwrap();
        sock.set_option_bytes(opt::CURVE_SECRETKEY, CLIENT_SECRET).unwrap();
    }
}

/// `"mechanism":N,` for a result line, so a run shows which mechanism it used.
fn mechanism_field(sock: &Socket) -> String {
    format!("\"mechanism\":{},", sock.get_option_int(opt::MECHANISM).unwrap())
}

/// User + system CPU seconds of this whole process so far (messages per CPU-second).
fn cpu_s() -> f64 {
    // SAFETY: getrusage only writes into the zeroed struct we pass.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn ready(sock: &Socket) {
    println!("READY {}", sock.last_endpoint().unwrap());
    std::io::stdout().flush().unwrap();
}

fn callcost(n: usize) {
    let ctx = Context::new();
    let publisher = ctx.socket(SocketType::Pub).unwrap();
    publisher.set_option_int(opt::LINGER, 0).unwrap();
    let path = format!("/tmp/oxmq-bench-cc-{}", std::process::id());
    publisher.bind(&format!("ipc://{path}")).unwrap();
    let start = Instant::now();
    for _ in 0..n {
        publisher.send(&b"hello"[..], DONTWAIT).unwrap();
    }
    let secs = start.elapsed().as_secs_f64();
    println!("{{\"count\":{n},\"seconds\":{secs:.9},\"ns_per_call\":{:.3},{}}}", secs * 1e9 / n as f64, lib_fields());
    drop(publisher);
    ctx.term();
    let _ = std::fs::remove_file(path);
}

fn recv_loop(pull: &Socket, size: usize, count: usize) -> f64 {
    let first = pull.recv(0).unwrap();
    assert_eq!(first.len(), size, "size mismatch");
    let start = Instant::now();
    for _ in 1..count {
        pull.recv(0).unwrap();
    }
    start.elapsed().as_secs_f64()
}

fn send_loop(push: &Socket, size: usize, count: usize, zc: bool) -> f64 {
    let body = Bytes::from(vec![b'x'; size]);
    let start = Instant::now();
    if zc {
        for _ in 0..count {
            push.send(body.clone(), 0).unwrap();
        }
    } else {
        for _ in 0..count {
            push.send_slice(&body, 0).unwrap();
        }
    }
    start.elapsed().as_secs_f64()
}

fn thr(args: &[String]) {
    let ctx = Context::new();
    match args[0].as_str() {
        "recv" => {
            let (size, count) = (arg(args, 2, 100), arg(args, 3, 1000));
            let pull = ctx.socket(SocketType::Pull).unwrap();
            curve_server(&pull);
            pull.bind(&args[1]).unwrap();
            let ack = ctx.socket(SocketType::Push).unwrap();
            if args[1].starts_with("tcp://") {
                ack.bind("tcp://127.0.0.1:*").unwrap();
            } else {
                ack.bind(&format!("{}-ack", args[1])).unwrap();
            }
            println!("READY {} {}", pull.last_endpoint().unwrap(), ack.last_endpoint().unwrap());
            std::io::stdout().flush().unwrap();
            let secs = recv_loop(&pull, size, count);
            ack.send(&b"done"[..], 0).unwrap();
            let rate = (count - 1) as f64 / secs;
            println!(
                "{{\"count\":{count},\"seconds\":{secs:.9},\"msgs_per_s\":{rate:.3},\"mb_per_s\":{:.3},\"cpu_s\":{:.6},{}{}}}",
                rate * size as f64 / 1e6,
                cpu_s(),
                mechanism_field(&pull),
                lib_fields()
            );
        }
        "send" => {
            let (size, count) = (arg(args, 2, 100), arg(args, 3, 1000));
            let zc = args.get(4).map(|m| m == "zc").unwrap_or(false);
            let push = ctx.socket(SocketType::Push).unwrap();
            curve_client(&push);
            push.connect(&args[1]).unwrap();
            let ack = ctx.socket(SocketType::Pull).unwrap();
            if let Some(ep) = args.get(5) {
                ack.connect(ep).unwrap();
            }
            let secs = send_loop(&push, size, count, zc);
            if args.get(5).is_some() {
                ack.recv(0).unwrap();
            }
            println!(
                "{{\"count\":{count},\"send_seconds\":{secs:.9},\"send_calls_per_s\":{:.3},\"cpu_s\":{:.6},{}}}",
                count as f64 / secs,
                cpu_s(),
                lib_fields()
            );
            std::io::stdout().flush().unwrap();
            drop(push); // default linger: term waits until everything is delivered
        }
        "inproc" => {
            let (size, count) = (arg(args, 1, 100), arg(args, 2, 1000));
            let zc = args.get(3).map(|m| m == "zc").unwrap_or(false);
            let pull = ctx.socket(SocketType::Pull).unwrap();
            pull.bind("inproc://thr").unwrap();
            let push = ctx.socket(SocketType::Push).unwrap();
            push.connect("inproc://thr").unwrap();
            let receiver = std::thread::spawn(move || recv_loop(&pull, size, count));
            let ssecs = send_loop(&push, size, count, zc);
            let secs = receiver.join().unwrap();
            let rate = (count - 1) as f64 / secs;
            println!(
                "{{\"count\":{count},\"seconds\":{secs:.9},\"msgs_per_s\":{rate:.3},\"mb_per_s\":{:.3},\
                 \"send_seconds\":{ssecs:.9},\"send_calls_per_s\":{:.3},\"cpu_s\":{:.6},{}}}",
                rate * size as f64 / 1e6,
                count as f64 / ssecs,
                cpu_s(),
                lib_fields()
            );
            drop(push);
        }
        other => panic!("thr: unknown mode {other}"),
    }
    ctx.term();
}

fn serve(rep: &Socket, count: usize) {
    for _ in 0..count + WARM {
        let m = rep.recv(0).unwrap();
        rep.send(m, 0).unwrap();
    }
}

fn client(req: &Socket, size: usize, count: usize) {
    let body = vec![b'x'; size];
    let mut rt = Vec::with_capacity(count);
    for i in 0..count + WARM {
        let start = Instant::now();
        req.send_slice(&body, 0).unwrap();
        let m = req.recv(0).unwrap();
        let dt = start.elapsed().as_secs_f64();
        assert_eq!(m.len(), size, "size mismatch");
        if i >= WARM {
            rt.push(dt);
        }
    }
    let sum: f64 = rt.iter().sum();
    rt.sort_by(|a, b| a.partial_cmp(b).unwrap());
    println!(
        "{{\"count\":{count},\"seconds\":{sum:.9},\"mean_us\":{:.3},\"p50_us\":{:.3},\"p99_us\":{:.3},{}{}}}",
        sum / count as f64 * 1e6,
        rt[count / 2] * 1e6,
        rt[(count as f64 * 0.99) as usize] * 1e6,
        mechanism_field(req),
        lib_fields()
    );
}

fn lat(args: &[String]) {
    let ctx = Context::new();
    match args[0].as_str() {
        "server" => {
            let rep = ctx.socket(SocketType::Rep).unwrap();
            curve_server(&rep);
            rep.bind(&args[1]).unwrap();
            ready(&rep);
            serve(&rep, arg(args, 3, 1000));
            println!("{{\"served\":true}}");
        }
        "client" => {
            let req = ctx.socket(SocketType::Req).unwrap();
            curve_client(&req);
            req.connect(&args[1]).unwrap();
            client(&req, arg(args, 2, 100), arg(args, 3, 1000));
        }
        "inproc" => {
            let (size, count) = (arg(args, 1, 100), arg(args, 2, 1000));
            let rep = ctx.socket(SocketType::Rep).unwrap();
            rep.bind("inproc://lat").unwrap();
            let req = ctx.socket(SocketType::Req).unwrap();
            req.connect("inproc://lat").unwrap();
            let server = std::thread::spawn(move || serve(&rep, count));
            client(&req, size, count);
            server.join().unwrap();
        }
        other => panic!("lat: unknown mode {other}"),
    }
    ctx.term();
}

fn inproc_pair(n: usize) {
    let ctx = Context::new();
    let tx = ctx.socket(SocketType::Pair).unwrap();
    tx.bind("inproc://pair").unwrap();
    let start = Instant::now();
    let rx_ctx = ctx.clone();
    let receiver = std::thread::spawn(move || {
        let rx = rx_ctx.socket(SocketType::Pair).unwrap();
        rx.connect("inproc://pair").unwrap();
        for i in 0..n as u32 {
            let m = rx.recv(0).unwrap();
            assert_eq!(m.as_slice(), i.to_le_bytes(), "out of order");
        }
    });
    for i in 0..n as u32 {
        tx.send(&i.to_le_bytes()[..], 0).unwrap();
    }
    receiver.join().unwrap();
    let secs = start.elapsed().as_secs_f64();
    println!("{{\"count\":{n},\"seconds\":{secs:.9},\"msgs_per_s\":{:.3},{}}}", n as f64 / secs, lib_fields());
    drop(tx);
    ctx.term();
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_term(_sig: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

fn weather(args: &[String]) {
    let ctx = Context::new();
    if args[0] == "server" {
        let range = arg(args, 2, 100_000) as u64;
        let base = 10001u64.saturating_sub(range / 2);
        // SAFETY: installs an async-signal-safe handler that only stores to an atomic.
        unsafe {
            libc::signal(libc::SIGTERM, on_term as extern "C" fn(libc::c_int) as libc::sighandler_t);
        }
        let publisher = ctx.socket(SocketType::Pub).unwrap();
        publisher.set_option_int(opt::LINGER, 0).unwrap();
        publisher.bind(&args[1]).unwrap();
        ready(&publisher);
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut rand = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut sent = 0u64;
        let start = Instant::now();
        let mut update = String::with_capacity(32);
        while !STOP.load(Ordering::Relaxed) {
            let zip = base + rand() % range;
            let temp = (rand() % 215) as i64 - 80;
            let rel = rand() % 50 + 10;
            update.clear();
            use std::fmt::Write as _;
            write!(update, "{zip:05} {temp} {rel}").unwrap();
            publisher.send(update.as_bytes(), 0).unwrap();
            sent += 1;
        }
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{{\"published\":{sent},\"seconds\":{secs:.6},\"pub_rate\":{:.3},{}}}",
            sent as f64 / secs,
            lib_fields()
        );
    } else {
        let n = arg(args, 2, 100);
        let start = Instant::now();
        let sub = ctx.socket(SocketType::Sub).unwrap();
        sub.connect(&args[1]).unwrap();
        sub.set_option_bytes(opt::SUBSCRIBE, b"10001 ").unwrap();
        let mut total = 0i64;
        for _ in 0..n {
            let m = sub.recv(0).unwrap();
            let text = std::str::from_utf8(m.as_slice()).unwrap();
            let mut fields = text.split(' ');
            assert_eq!(fields.next(), Some("10001"), "bad update {text}");
            total += fields.next().unwrap().parse::<i64>().unwrap();
        }
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{{\"updates\":{n},\"seconds\":{secs:.6},\"avg_temp\":{:.2},{}}}",
            total as f64 / n as f64,
            lib_fields()
        );
    }
    ctx.term();
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(cmd) = args.first() else {
        eprintln!("usage: bench_oxmq callcost|thr|lat|inproc_pair|weather ...");
        std::process::exit(2);
    };
    let rest = &args[1..];
    match cmd.as_str() {
        "callcost" => callcost(arg(rest, 0, 10_000_000)),
        "thr" => thr(rest),
        "lat" => lat(rest),
        "inproc_pair" => inproc_pair(arg(rest, 0, 1 << 20)),
        "weather" => weather(rest),
        other => {
            eprintln!("unknown study {other}");
            std::process::exit(2);
        }
    }
}
