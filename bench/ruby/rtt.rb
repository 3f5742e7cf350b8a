# REQ/REP round trips over tcp, server in a second process, on either Ruby
# binding: `ruby rtt.rb gem N` (the oxmq gem) or `ruby rtt.rb ffi N`
# (ffi-rzmq; LD_LIBRARY_PATH picks libzmq). Prints one JSON line.
side, n = ARGV[0], Integer(ARGV[1] || 5000)

# Each process makes its own context, after the fork (as libzmq requires).
def setup(side)
if side == 'gem'
  require 'oxmq'
  ctx = ZMQ::Context.new
  ctx.linger = 1000 # destroy flushes the last reply
  open_sock = ->(type) { ctx.socket(type) }
  bind = ->(s) { s.bind('tcp://127.0.0.1:*') }
  connect = ->(s, port) { s.connect("tcp://127.0.0.1:#{port}") }
  send = ->(s, m) { s.send(m) }
  recv = ->(s) { s.recv }
  finish = -> { ctx.destroy }
  rep_t, req_t = :REP, :REQ
else
  require 'ffi-rzmq'
  ctx = ZMQ::Context.new
  open_sock = ->(type) { s = ctx.socket(type); s.setsockopt(ZMQ::LINGER, 1000); s }
  bind = lambda do |s|
    s.bind('tcp://127.0.0.1:*')
    ep = []
    s.getsockopt(ZMQ::LAST_ENDPOINT, ep)
    ep.first.to_s[/:(\d+)/, 1].to_i
  end
  connect = ->(s, port) { s.connect("tcp://127.0.0.1:#{port}") }
  send = ->(s, m) { s.send_string(m) }
  recv = ->(s) { m = +''; s.recv_string(m); m }
  finish = -> { ctx.terminate }
  rep_t, req_t = ZMQ::REP, ZMQ::REQ
end
[open_sock, bind, connect, send, recv, finish, rep_t, req_t]
end

rd, wr = IO.pipe
pid = fork do
  rd.close
  open_sock, bind, _, send, recv, finish, rep_t, = setup(side)
  rep = open_sock.(rep_t)
  wr.puts bind.(rep)
  wr.close
  (n + 1).times { send.(rep, recv.(rep)) }
  rep.close
  finish.()
  exit!(0)
end
wr.close
port = Integer(rd.gets)
open_sock, _, connect, send, recv, finish, _, req_t = setup(side)
req = open_sock.(req_t)
connect.(req, port)
send.(req, 'warm')
recv.(req)
t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
n.times do
  send.(req, 'hello')
  recv.(req)
end
secs = Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0
Process.wait(pid)
printf("{\"side\":\"%s\",\"round_trips\":%d,\"seconds\":%.6f,\"us_per_round_trip\":%.2f}\n", side, n, secs, secs * 1e6 / n)
req.close
finish.()
