# Study 1 on Ruby ffi-rzmq: N non-blocking sends of 5 bytes on a PUB bound to
# ipc with no subscriber. Usage: ruby callcost.rb COUNT. ffi-rzmq dlopens
# 'libzmq.so.5', so LD_LIBRARY_PATH selects oxmq's library.
require 'ffi-rzmq'

n = (ARGV[0] || 1_000_000).to_i
ctx = ZMQ::Context.new
pub = ctx.socket(ZMQ::PUB)
pub.setsockopt(ZMQ::LINGER, 0)
path = "/tmp/oxmq-bench-cc-rb-#{Process.pid}"
rc = pub.bind("ipc://#{path}")
abort "bind failed: #{ZMQ::Util.error_string}" unless ZMQ::Util.resultcode_ok?(rc)
msg = 'hello'
flag = ZMQ::DONTWAIT
t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
i = 0
while i < n
  pub.send_string(msg, flag)
  i += 1
end
secs = Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0
lib = File.readlines('/proc/self/maps').map { |l| l[%r{(/\S*/lib(?:zmq|oxmq)[^/\s]*)$}, 1] }.compact.first || '?'
printf("{\"count\":%d,\"seconds\":%.9f,\"ns_per_call\":%.3f,\"lib\":\"%s\",\"zmq_version\":\"%s\",\"module\":\"ffi-rzmq\"}\n",
       n, secs, secs * 1e9 / n, lib, LibZMQ.version.values.join('.'))
pub.close
ctx.terminate
File.unlink(path) rescue nil
