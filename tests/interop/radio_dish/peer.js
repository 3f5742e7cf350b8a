// A real draft RADIO/DISH peer: libzmq 4.3.5 built with drafts, as shipped
// in npm's `zeromq` 6 (installed at test time by run.sh, never committed).
//   node peer.js radio EP GROUP   stream "hello" in GROUP (bind tcp/ipc, connect udp)
//   node peer.js dish EP GROUP    join GROUP, receive one "hello" (connect tcp/ipc, bind udp)
"use strict"
process.removeAllListeners("warning") // zeromq.js warns that drafts are experimental
const zmq = require("zeromq/draft")

const sleep = ms => new Promise(r => setTimeout(r, ms))

async function main() {
  const [role, ep, group] = process.argv.slice(2)
  const udp = ep.startsWith("udp://")
  if (role === "radio") {
    const s = new zmq.Radio({linger: 0})
    if (udp) s.connect(ep)
    else await s.bind(ep)
    const end = Date.now() + 30000
    while (Date.now() < end) {
      await s.send("hello", {group})
      await sleep(10)
    }
    s.close()
    return
  }
  const s = new zmq.Dish({receiveTimeout: 10000, linger: 0})
  s.join(group)
  if (udp) await s.bind(ep)
  else s.connect(ep)
  const [msg, opts] = await s.receive()
  const got = opts.group.toString()
  if (msg.toString() !== "hello" || got !== group) {
    console.error(`unexpected message ${JSON.stringify(msg.toString())} in group ${JSON.stringify(got)}`)
    process.exit(1)
  }
  console.log(`libzmq ${require("zeromq").version} (draft) DISH got "hello" in group "${got}" from ${ep}`)
  s.close()
}

main().then(() => process.exit(0), e => {
  console.error(e)
  process.exit(1)
})
