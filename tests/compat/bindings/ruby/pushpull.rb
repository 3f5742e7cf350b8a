#!/usr/bin/ruby
# PUSH/PULL on ffi-rzmq: ordered delivery with varied sizes over tcp, ipc and
# inproc; multipart via send_strings/recv_strings; a PUSH in another process;
# load balancing; DONTWAIT on an empty queue -> EAGAIN.
require_relative 'bind_test'
include BindTest

guard_time(60)
ctx = ZMQ::Context.new
report_lib

sizes = [0, 1, 7, 100, 255, 256, 8192, 100_000]
body = ->(i, sz) { (format('%08d', i) * (sz / 8 + 1))[0, sz] }

['tcp://127.0.0.1:*', ep_ipc('pp'), "inproc://pp-#{Process.pid}"].each do |addr|
  pull = ctx.socket(ZMQ::PULL)
  rc!(pull.bind(addr), "bind #{addr}")
  e = last_endpoint(pull)
  push = ctx.socket(ZMQ::PUSH)
  rc!(push.connect(e), "connect #{e}")
  n = 800
  n.times { |i| rc!(push.send_string(body.(i, sizes[i % sizes.size])), 'send') }
  n.times do |i|
    got = ''
    rc!(pull.recv_string(got), 'recv')
    want = body.(i, sizes[i % sizes.size])
    fail_now("#{e}: message #{i}: #{got.bytesize} bytes, want #{want.bytesize}") unless got == want
  end
  check(true, "#{e}: #{n} messages in order")

  rc!(push.send_strings(%w[a b c] + ['']), 'send_strings')
  parts = []
  rc!(pull.recv_strings(parts), 'recv_strings')
  check(parts == ['a', 'b', 'c', ''], "#{e}: multipart #{parts.inspect}")
  [push, pull].each { |s| s.setsockopt(ZMQ::LINGER, 0); s.close }
end

# Empty queue + DONTWAIT.
pull = ctx.socket(ZMQ::PULL)
rc!(pull.bind("inproc://empty-#{Process.pid}"), 'bind')
rc = pull.recv_string(+'', ZMQ::DONTWAIT)
check(rc == -1 && ZMQ::Util.errno == ZMQ::EAGAIN, "DONTWAIT on empty PULL: EAGAIN (#{ZMQ::Util.errno})")
pull.close

# A PUSH in a forked process, PULL here.
ep = ep_ipc('fork')
pull = ctx.socket(ZMQ::PULL)
rc!(pull.bind(ep), 'bind')
pid = fork do
  c = ZMQ::Context.new
  report_lib('push child')
  p = c.socket(ZMQ::PUSH)
  rc!(p.connect(ep), 'child connect')
  1000.times { |i| rc!(p.send_string("c#{i}"), 'child send') }
  p.close # default linger: everything is delivered before the context ends
  c.terminate
  exit! 0
end
ok = true
1000.times do |i|
  m = ''
  rc!(pull.recv_string(m), 'recv from child')
  ok &&= (m == "c#{i}")
end
Process.wait(pid)
check(ok && $?.exitstatus == 0, '1000 messages from a PUSH in another process (linger flushes on close)')
pull.close

# Load balancing: bound PUSH, two PULLs.
push = ctx.socket(ZMQ::PUSH)
rc!(push.bind(ep_ipc('lb')), 'bind lb')
pulls = 2.times.map { s = ctx.socket(ZMQ::PULL); rc!(s.connect(ep_ipc('lb')), 'connect lb'); s }
sleep 0.3
100.times { |i| rc!(push.send_string("m#{i}"), 'send lb') }
counts = [0, 0]
deadline = Time.now + 10
while counts.sum < 100 && Time.now < deadline
  pulls.each_with_index do |s, k|
    counts[k] += 1 while ZMQ::Util.resultcode_ok?(s.recv_string(+'', ZMQ::DONTWAIT))
  end
  sleep 0.005
end
check(counts.sum == 100 && counts.all?(&:positive?), "load balanced over 2 PULLs: #{counts.inspect}")
(pulls + [push]).each(&:close)

ctx.terminate
cleanup
puts 'pushpull: all ok'
exit 0
