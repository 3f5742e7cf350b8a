# rbczmq study 2: a ZMQ::Logger writing 10,000 debug lines over PUSH; a PULL
# reader takes them and re-broadcasts each on a PUB; a SUB counts them.
require 'rbczmq'

LINES = Integer(ENV.fetch('LINES', 10_000))

ctx = ZMQ::Context.new
pull = ctx.socket(:PULL)
log_port = pull.bind('tcp://127.0.0.1:*')
pub = ctx.socket(:PUB)
# PUB drops what a slow subscriber cannot take once the HWMs fill: lift them so
# every line arrives, and bound each receive so a loss fails instead of hanging.
pub.sndhwm = 0
pub_port = pub.bind('tcp://127.0.0.1:*')

sub = ctx.socket(:SUB)
sub.rcvhwm = 0
sub.rcvtimeo = 10_000
sub.subscribe('')
sub.connect("tcp://127.0.0.1:#{pub_port}")

# PUB drops messages to a subscriber that has not joined yet: wait for it.
probe = 0
loop do
  pub.send("probe #{probe += 1}")
  break if sub.recv_nonblock

  sleep 0.01
end
nil while sub.recv_nonblock

push = ctx.socket(:PUSH)
push.connect("tcp://127.0.0.1:#{log_port}")
logger = ZMQ::Logger.new(push)

subscriber = Thread.new do
  count = 0
  while count < LINES
    line = sub.recv
    count += 1 if line.include?(' DEBUG -- ') # late probes are not log lines
  end
  count
end

relay = Thread.new do
  LINES.times { pub.send(pull.recv) }
end

started = Time.now
LINES.times { |i| logger.debug("line #{i}") }
relay.join
received = subscriber.value
elapsed = Time.now - started

puts "logged: #{LINES}, relayed and received: #{received}"
puts format('elapsed: %.3f s, %.0f lines/s', elapsed, LINES / elapsed)
raise 'lines lost' unless received == LINES

ctx.destroy
