// A real libzmq peer for the ws:// interop tests: npm's `zeromq` (v6) ships
// libzmq 4.3.5 built with the draft API and ws support. One scenario per run,
// named by argv[2]; it prints "READY <endpoint>" once its socket is bound or
// connected, then one JSON line per message received (frames as latin1
// strings), and exits when done. Everything is bounded by timeouts.
"use strict";
const zmq = require(process.env.ZEROMQ_JS || "zeromq");

const [, , scenario, endpoint, arg] = process.argv;
const out = (line) => process.stdout.write(line + "\n");
const show = (frames) => out(JSON.stringify(frames.map((f) => Buffer.from(f).toString("latin1"))));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Timeouts only where the socket type has them (zeromq.js refuses others).
const RECV = { receiveTimeout: 10000 };
const SEND = { sendTimeout: 10000 };
const BOTH = { ...RECV, ...SEND };

function sock(Kind, opts = {}) {
  return new Kind({ linger: 0, ...opts });
}

const scenarios = {
  // libzmq binds a PULL; receives `arg` messages.
  async "pull-bind"() {
    const s = sock(zmq.Pull, RECV);
    await s.bind(endpoint);
    out("READY " + s.lastEndpoint);
    for (let i = 0; i < Number(arg); i++) show(await s.receive());
    s.close();
  },
  // libzmq connects a DEALER (routing id "js-dealer"), sends, prints the reply.
  async "dealer-connect"() {
    const s = sock(zmq.Dealer, { ...BOTH, routingId: "js-dealer" });
    s.connect(endpoint);
    out("READY " + endpoint);
    await s.send(["hello", "x".repeat(70000)]);
    show(await s.receive());
    s.close();
  },
  // libzmq binds a PUB and publishes two topics until stdin closes.
  async "pub-bind"() {
    const s = sock(zmq.Publisher, SEND);
    await s.bind(endpoint);
    out("READY " + s.lastEndpoint);
    let open = true;
    process.stdin.on("end", () => (open = false)).resume();
    for (let i = 0; open && i < 500; i++) {
      await s.send("sport:" + i);
      await s.send("weather:" + i);
      await sleep(20);
    }
    s.close();
  },
  // libzmq connects a SUB to `arg`-prefixed messages; prints the first one.
  async "sub-connect"() {
    const s = sock(zmq.Subscriber, RECV);
    s.subscribe(arg);
    s.connect(endpoint);
    out("READY " + endpoint);
    show(await s.receive());
    s.close();
  },
  // libzmq binds a CURVE server REP (secret key in `arg`, Z85) and echoes once.
  async "curve-rep-bind"() {
    const s = sock(zmq.Reply, { ...BOTH, curveServer: true, curveSecretKey: arg });
    await s.bind(endpoint);
    out("READY " + s.lastEndpoint);
    const msg = await s.receive();
    show(msg);
    await s.send(["echo", ...msg]);
    s.close();
  },
  // libzmq connects a PLAIN client REQ ("admin"/`arg`), prints the reply.
  async "plain-req-connect"() {
    const s = sock(zmq.Request, { ...BOTH, plainUsername: "admin", plainPassword: arg });
    s.connect(endpoint);
    out("READY " + endpoint);
    await s.send("over plain");
    show(await s.receive());
    s.close();
  },
};

// Exit only once stdout (a pipe: asynchronous in node) has taken every line.
const exit = (code) => process.stdout.write("", () => process.exit(code));
scenarios[scenario]().then(
  () => exit(0),
  (e) => {
    out("ERROR " + e.message);
    exit(1);
  },
);
