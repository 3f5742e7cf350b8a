// A draft-socket peer on npm's `zeromq` (v6, whose prebuilt libzmq has the
// draft API), for interop with oxmq (tests/interop/draft/interop.sh).
// usage: node node_peer.js ROLE ENDPOINT ROUNDS
//   ROLE: server-bind | client-connect | gather-bind | scatter-connect
//         | channel-bind | channel-connect
// A SERVER answers each message to the routing id it came from. zeromq.js
// has no PEER class, and its generic Socket cannot send with a routing id,
// so PEER is not tested against it.
"use strict"
process.removeAllListeners("warning") // the "draft features are experimental" notice
const zmq = require("zeromq")
const draft = require("zeromq/draft")

const [role, ep, roundsArg] = process.argv.slice(2)
const rounds = Number(roundsArg || 300)
// The same bodies as tests/interop/capi/draft_peer.c ("%0*d" of 0 prints at least one digit).
const body = i => Buffer.from(`round-${i}-${"0".repeat(Math.max(1, i % 40))}`)

function fail(why) {
  console.error(`node_peer ${role}: ${why}`)
  process.exit(1)
}

// libzmq's type number; zeromq.js has no class for CHANNEL.
const CHANNEL = 20

async function main() {
  // Per-class options (a GATHER has no send timeout); the harness bounds the run.
  const opts = {linger: 2000}
  let s
  switch (role) {
    case "server-bind":
    case "peer-bind": {
      s = role === "server-bind" ? new draft.Server(opts) : new zmq.Socket(PEER)
      await s.bind(ep)
      for (let i = 0; i < rounds; i++) {
        const [msg, meta] = role === "server-bind" ? await s.receive() : [...(await s.receive()), null]
        if (!msg.equals(body(i))) fail(`round ${i}: got ${msg}`)
        await s.send(msg, meta || {})
      }
      break
    }
    case "client-connect":
    case "channel-connect": {
      s = role === "client-connect" ? new draft.Client(opts) : new zmq.Socket(CHANNEL)
      s.connect(ep)
      for (let i = 0; i < rounds; i++) {
        await s.send(body(i))
        const [msg] = await s.receive()
        if (!msg.equals(body(i))) fail(`round ${i}: got ${msg}`)
      }
      break
    }
    case "channel-bind": {
      s = new zmq.Socket(CHANNEL)
      await s.bind(ep)
      for (let i = 0; i < rounds; i++) {
        const [msg] = await s.receive()
        if (!msg.equals(body(i))) fail(`round ${i}: got ${msg}`)
        await s.send(msg)
      }
      break
    }
    case "gather-bind": {
      s = new draft.Gather(opts)
      await s.bind(ep)
      for (let i = 0; i < rounds; i++) {
        const [msg] = await s.receive()
        if (!msg.equals(body(i))) fail(`round ${i}: got ${msg}`)
      }
      break
    }
    case "scatter-connect": {
      s = new draft.Scatter(opts)
      s.connect(ep)
      for (let i = 0; i < rounds; i++) await s.send(body(i))
      break
    }
    default:
      fail("unknown role")
  }
  s.close()
  console.log(`node_peer ${role}: ${rounds} rounds`)
}

main().catch(e => fail(e.stack || e))
