#!/usr/bin/ruby
# REQ/REP on ffi-rzmq: a REP server in a forked process (ipc), 500 round
# trips; in-process over tcp and inproc; recvmsg/sendmsg with ZMQ::Message;
# REQ's state machine (EFSM).
require_relative 'bind_test'
include BindTest

guard_time(60)
ep = ep_ipc('rr')
rd, wr = IO.pipe
pid = fork do
  rd.close
  ctx = ZMQ::Context.new
  report_lib('rep server')
  rep = ctx.socket(ZMQ::REP)
  rc!(rep.bind(ep), 'bind')
  wr.puts 'ready'
  wr.close
  loop do
    msg = ''
    rc!(rep.recv_string(msg), 'server recv')
    if msg == 'quit'
      rc!(rep.send_string('bye'), 'server send bye')
      break
    end
    rc!(rep.send_string("re:#{msg}"), 'server send')
  end
  rep.close
  ctx.terminate
  exit! 0
end
wr.close
rd.gets

ctx = ZMQ::Context.new
report_lib('req client')
req = ctx.socket(ZMQ::REQ)
rc!(req.connect(ep), 'connect')
500.times do |i|
  rc!(req.send_string("hello #{i}"), 'send')
  r = ''
  rc!(req.recv_string(r), 'recv')
  fail_now("round trip #{i}: got #{r.inspect}") unless r == "re:hello #{i}"
end
check(true, '500 round trips with a REP in another process over ipc')
rc!(req.send_string('quit'), 'send quit')
r = ''
rc!(req.recv_string(r), 'recv bye')
check(r == 'bye', 'server said bye')
Process.wait(pid)
check($?.exitstatus == 0, 'rep server exited 0')
req.close

['tcp://127.0.0.1:*', "inproc://rr-#{Process.pid}"].each do |addr|
  rep = ctx.socket(ZMQ::REP)
  rc!(rep.bind(addr), "bind #{addr}")
  e = last_endpoint(rep)
  rq = ctx.socket(ZMQ::REQ)
  rc!(rq.connect(e), "connect #{e}")
  100.times do |i|
    rc!(rq.sendmsg(ZMQ::Message.new("q#{i}")), 'sendmsg')
    m = ZMQ::Message.new
    rc!(rep.recvmsg(m), 'recvmsg')
    body = m.copy_out_string
    m.close
    rc!(rep.send_string(body.upcase), 'send reply')
    a = ''
    rc!(rq.recv_string(a), 'recv reply')
    fail_now("#{e}: round trip #{i} got #{a.inspect}") unless a == "Q#{i}"
  end
  check(true, "100 round trips in-process over #{e} (Message objects)")

  rc!(rq.send_string('once'), 'send once')
  rc = rq.send_string('twice')
  check(rc == -1 && ZMQ::Util.errno == ZMQ::EFSM,
        "second send on REQ fails with EFSM (errno #{ZMQ::Util.errno})")
  got = ''
  rc!(rep.recv_string(got), 'recv once')
  check(got == 'once', 'REP got the first request only')
  rc!(rq.setsockopt(ZMQ::LINGER, 0), 'linger')
  rc!(rep.setsockopt(ZMQ::LINGER, 0), 'linger')
  rq.close
  rep.close
end

# RCVTIMEO with nobody answering -> EAGAIN.
rq = ctx.socket(ZMQ::REQ)
rc!(rq.setsockopt(ZMQ::RCVTIMEO, 100), 'set RCVTIMEO')
a = []
rc!(rq.getsockopt(ZMQ::RCVTIMEO, a), 'get RCVTIMEO')
check(a[0] == 100, "RCVTIMEO reads back #{a[0]}")
rc!(rq.setsockopt(ZMQ::LINGER, 0), 'linger')
rc!(rq.connect(ep_ipc('nobody')), 'connect nobody')
rc!(rq.send_string('anyone?'), 'send')
t0 = Time.now
rc = rq.recv_string(+'')
dt = Time.now - t0
check(rc == -1 && ZMQ::Util.errno == ZMQ::EAGAIN && dt > 0.05 && dt < 5,
      format('recv with RCVTIMEO=100: EAGAIN after %.3fs', dt))
rq.close
ctx.terminate
cleanup
puts 'reqrep: all ok'
exit 0
