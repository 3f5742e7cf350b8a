// A real draft DGRAM peer: libzmq 4.3.5 built with drafts, as shipped in
// npm's `zeromq` 6 (installed at test time by run.sh, never committed).
//   node peer.js echo PORT        bind udp://127.0.0.1:PORT, answer one
//                                 datagram with "echo:" + its body
//   node peer.js ask PORT PEER    bind udp://127.0.0.1:PORT, send "ping" to
//                                 PEER (ip:port) until "echo:ping" comes back
//   node peer.js ws-echo PORT     bind ws://127.0.0.1:PORT/dgram, answer one
//                                 [a][b] with [a]["echo:" + b]
//   node peer.js ws-ask PORT      connect there, send [ask][ping], expect
//                                 [ask][echo:ping]
"use strict"
process.removeAllListeners("warning") // zeromq.js warns that drafts are experimental
const zmq = require("zeromq/draft")

async function main() {
  const [role, port, peer] = process.argv.slice(2)
  const version = require("zeromq").version
  if (role === "ws-echo" || role === "ws-ask") {
    // DGRAM over ws:// (ZWS, not raw): [a][b] travels as two frames.
    const s = new zmq.Datagram({receiveTimeout: 10000, linger: 1000})
    const ep = `ws://127.0.0.1:${port}/dgram`
    if (role === "ws-echo") {
      await s.bind(ep)
      const [a, b] = await s.receive()
      await s.send([a, "echo:" + b.toString()])
      await new Promise(r => setTimeout(r, 100))
      console.log(`libzmq ${version} (draft) DGRAM echoed [${a}][${b}] over ws`)
    } else {
      s.connect(ep)
      await s.send(["ask", "ping"])
      const [a, b] = await s.receive()
      if (a.toString() !== "ask" || b.toString() !== "echo:ping") {
        throw new Error(`unexpected [${JSON.stringify(a.toString())}, ${JSON.stringify(b.toString())}]`)
      }
      console.log(`libzmq ${version} (draft) DGRAM got [ask][echo:ping] over ws`)
    }
    s.close()
    return
  }
  if (role === "echo") {
    const s = new zmq.Datagram({receiveTimeout: 30000, linger: 1000})
    await s.bind(`udp://127.0.0.1:${port}`)
    const [addr, body] = await s.receive()
    // libzmq's address frame is "ip:port" and a NUL; reply to it as received.
    if (addr[addr.length - 1] !== 0) throw new Error(`address frame without NUL: ${addr.toString("hex")}`)
    await s.send([addr, "echo:" + body.toString()])
    await new Promise(r => setTimeout(r, 100))
    console.log(`libzmq ${version} (draft) DGRAM echoed "${body}" to ${addr.toString().slice(0, -1)}`)
    s.close()
    return
  }
  const s = new zmq.Datagram({receiveTimeout: 100, linger: 0})
  await s.bind(`udp://127.0.0.1:${port}`)
  for (let i = 0; i < 200; i++) {
    await s.send([peer, "ping"])
    let addr, body
    try {
      [addr, body] = await s.receive()
    } catch (e) {
      continue
    }
    if (addr.toString() !== peer + "\0" || body.toString() !== "echo:ping") {
      throw new Error(`unexpected [${JSON.stringify(addr.toString())}, ${JSON.stringify(body.toString())}]`)
    }
    console.log(`libzmq ${version} (draft) DGRAM got "echo:ping" from ${peer}`)
    s.close()
    return
  }
  throw new Error(`no answer from ${peer}`)
}

main().then(() => process.exit(0), e => {
  console.error(e)
  process.exit(1)
})
