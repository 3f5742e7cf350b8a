#!/usr/bin/ruby
# ZMQ::Poller (zmq_poll) on ffi-rzmq: REQ/REP driven by readables/writables
# (as in the gem's reqrep_poll example), a timeout with nothing ready, two
# PULL sockets where only the one with data is readable, a raw file
# descriptor polled next to a socket, deregistration.
require_relative 'bind_test'
include BindTest

guard_time(60)
ctx = ZMQ::Context.new
report_lib

# 1. REQ/REP over tcp driven by the poller only.
rep = ctx.socket(ZMQ::REP)
rc!(rep.bind('tcp://127.0.0.1:*'), 'bind')
req = ctx.socket(ZMQ::REQ)
rc!(req.connect(last_endpoint(rep)), 'connect')
[req, rep].each { |s| rc!(s.setsockopt(ZMQ::LINGER, 100), 'linger') }
poller = ZMQ::Poller.new
poller.register(req, ZMQ::POLLIN | ZMQ::POLLOUT)
poller.register_readable(rep)
done = 0
n = 200
deadline = Time.now + 20
while done < n
  fail_now("stalled after #{done} exchanges") if Time.now > deadline
  rc = poller.poll(2000)
  rc!(rc, 'poll')
  fail_now("poll timed out after #{done} exchanges") if rc.zero?
  if poller.writables.include?(req)
    rc!(req.send_string("ping #{done}", ZMQ::DONTWAIT), 'req send')
  end
  if poller.readables.include?(rep)
    m = ''
    rc!(rep.recv_string(m, ZMQ::DONTWAIT), 'rep recv')
    rc!(rep.send_string(m.sub('ping', 'pong'), ZMQ::DONTWAIT), 'rep send')
  end
  if poller.readables.include?(req)
    r = ''
    rc!(req.recv_string(r, ZMQ::DONTWAIT), 'req recv')
    fail_now("exchange #{done}: got #{r.inspect}") unless r == "pong #{done}"
    done += 1
  end
end
check(true, "#{n} REQ/REP exchanges driven by ZMQ::Poller")
req.close
rep.close

# 2. Timeout: nothing ready.
pull = ctx.socket(ZMQ::PULL)
rc!(pull.bind(ep_ipc('idle')), 'bind idle')
poller = ZMQ::Poller.new
poller.register_readable(pull)
t0 = Time.now
rc = poller.poll(150)
dt = Time.now - t0
check(rc == 0 && poller.readables.empty? && dt > 0.1 && dt < 3,
      format('poll(150) with nothing ready returns 0 after %.3fs', dt))

# 3. Two PULLs, only one gets data.
pull2 = ctx.socket(ZMQ::PULL)
rc!(pull2.bind(ep_ipc('busy')), 'bind busy')
poller.register_readable(pull2)
push = ctx.socket(ZMQ::PUSH)
rc!(push.connect(ep_ipc('busy')), 'connect busy')
rc!(push.send_string('hello'), 'send busy')
rc = poller.poll(5000)
check(rc == 1 && poller.readables == [pull2], "only the PULL with data is readable (rc=#{rc})")
m = ''
rc!(pull2.recv_string(m), 'recv busy')
check(m == 'hello', 'and it has the message')
rc = poller.poll(100)
check(rc == 0, 'after draining, nothing is readable')

# 4. A raw fd (pipe) next to a socket.
rd, wr = IO.pipe
fdwrap = Struct.new(:posix_fileno).new(rd.fileno)
poller.register_readable(fdwrap)
rc = poller.poll(100)
check(rc == 0, 'pipe with nothing written is not readable')
wr.write('x')
rc = poller.poll(5000)
check(rc == 1 && poller.readables == [fdwrap], 'pipe fd reported readable by zmq_poll')
rd.read(1)
rc!(push.send_string('again'), 'send again')
rc = poller.poll(5000)
# the socket may become ready a moment later; poll again if only partially seen
rc = poller.poll(5000) if rc.zero?
check(poller.readables == [pull2], 'socket readable, drained pipe not')
rc!(pull2.recv_string(+''), 'recv again')

# 5. Deregister.
check(poller.deregister_readable(pull2), 'deregister pull2')
rc!(push.send_string('ignored'), 'send ignored')
sleep 0.1
rc = poller.poll(100)
check(rc == 0, 'deregistered socket is no longer reported')
check(poller.size == 2, "poller has 2 items left (#{poller.size})")

[push, pull, pull2].each { |s| s.setsockopt(ZMQ::LINGER, 0); s.close }
ctx.terminate
cleanup
puts 'poll: all ok'
exit 0
