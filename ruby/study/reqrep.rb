# rbczmq study 1: a REQ/REP server in a thread, and a client timing 5000
# round trips over tcp. Uses rbczmq's API only (runs unchanged on rbczmq).
require 'rbczmq'

ROUNDS = Integer(ENV.fetch('ROUNDS', 5000))

ctx = ZMQ::Context.new
server = ctx.socket(:REP)
port = server.bind('tcp://127.0.0.1:*')

server_thread = Thread.new do
  ROUNDS.times do
    req = server.recv
    server.send("re:#{req}")
  end
end

client = ctx.socket(:REQ)
client.connect("tcp://127.0.0.1:#{port}")

started = Time.now
ROUNDS.times do |i|
  client.send("ping #{i}")
  reply = client.recv
  raise "bad reply #{reply.inspect}" unless reply == "re:ping #{i}"
end
elapsed = Time.now - started
server_thread.join

puts "round trips: #{ROUNDS}"
puts format('elapsed: %.3f s, %.1f us per round trip', elapsed, elapsed * 1e6 / ROUNDS)
ctx.destroy
