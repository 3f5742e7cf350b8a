# The rbczmq study's logger shape on either Ruby binding: a ::Logger writes N
# debug lines into a PUSH; a relay thread PULLs each line and re-broadcasts it
# on a PUB; a SUB thread counts them. All over tcp in one process, as the
# study's script does. `ruby logger.rb gem N` (the oxmq gem's ZMQ::Logger) or
# `ruby logger.rb ffi N` (ffi-rzmq; LD_LIBRARY_PATH picks the library).
# Prints one JSON line.
require 'logger'

side, n = ARGV[0], Integer(ARGV[1] || 10_000)

# A PUB drops lines to a subscriber that has not joined yet, and once HWMs
# fill: both HWMs are lifted, and a probe loop waits for the subscription.
if side == 'gem'
  require 'oxmq'
  ctx = ZMQ::Context.new
  pull = ctx.socket(:PULL)
  log_port = pull.bind('tcp://127.0.0.1:*')
  pub = ctx.socket(:PUB)
  pub.sndhwm = 0
  pub_port = pub.bind('tcp://127.0.0.1:*')
  sub = ctx.socket(:SUB)
  sub.rcvhwm = 0
  sub.subscribe('')
  sub.connect("tcp://127.0.0.1:#{pub_port}")
  push = ctx.socket(:PUSH)
  push.connect("tcp://127.0.0.1:#{log_port}")
  send = ->(s, m) { s.send(m) }
  recv = ->(s) { s.recv }
  poll = ->(s) { s.recv_nonblock }
  logger = ZMQ::Logger.new(push)
  finish = -> { ctx.destroy }
  lib = 'oxmq gem'
else
  require 'ffi-rzmq'
  ctx = ZMQ::Context.new
  port_of = lambda do |s|
    ep = []
    s.getsockopt(ZMQ::LAST_ENDPOINT, ep)
    ep.first.to_s[/:(\d+)/, 1].to_i
  end
  pull = ctx.socket(ZMQ::PULL)
  pull.bind('tcp://127.0.0.1:*')
  log_port = port_of.(pull)
  pub = ctx.socket(ZMQ::PUB)
  pub.setsockopt(ZMQ::SNDHWM, 0)
  pub.bind('tcp://127.0.0.1:*')
  pub_port = port_of.(pub)
  sub = ctx.socket(ZMQ::SUB)
  sub.setsockopt(ZMQ::RCVHWM, 0)
  sub.setsockopt(ZMQ::SUBSCRIBE, '')
  sub.connect("tcp://127.0.0.1:#{pub_port}")
  push = ctx.socket(ZMQ::PUSH)
  push.connect("tcp://127.0.0.1:#{log_port}")
  send = ->(s, m) { s.send_string(m) }
  recv = ->(s) { m = +''; s.recv_string(m); m }
  poll = ->(s) { m = +''; ZMQ::Util.resultcode_ok?(s.recv_string(m, ZMQ::DONTWAIT)) ? m : nil }
  # What ffi-rzmq users write in place of rbczmq's ZMQ::Logger: a ::Logger
  # whose device sends each formatted line.
  device = Object.new
  device.define_singleton_method(:write) { |line| push.send_string(line) }
  device.define_singleton_method(:close) {}
  logger = ::Logger.new(device)
  finish = lambda do
    [pull, pub, sub, push].each { |s| s.setsockopt(ZMQ::LINGER, 0); s.close }
    ctx.terminate
  end
  lib = File.readlines('/proc/self/maps').map { |l| l[%r{(/\S*/lib(?:zmq|oxmq)[^/\s]*)$}, 1] }.compact.first || '?'
end

probe = 0
loop do
  send.(pub, "probe #{probe += 1}")
  break if poll.(sub)

  sleep 0.01
end
nil while poll.(sub)

subscriber = Thread.new do
  count = 0
  count += 1 if recv.(sub).include?(' DEBUG -- ') while count < n # late probes are not log lines
  count
end
relay = Thread.new { n.times { send.(pub, recv.(pull)) } }

t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
n.times { |i| logger.debug("line #{i}") }
relay.join
received = subscriber.value
secs = Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0
abort "lines lost: #{received} of #{n}" unless received == n
printf("{\"side\":\"%s\",\"lines\":%d,\"seconds\":%.6f,\"lines_per_s\":%.1f,\"lib\":\"%s\"}\n",
       side, n, secs, n / secs, lib)
finish.()
