# Study 1 on the oxmq gem (native, rbczmq API): N sends of 5 bytes on a PUB
# bound to ipc with no subscriber (a PUB send never blocks: it drops).
# Usage: ruby callcost_gem.rb COUNT.
require 'oxmq'

n = (ARGV[0] || 1_000_000).to_i
ctx = ZMQ::Context.new
pub = ctx.socket(:PUB)
path = "/tmp/oxmq-bench-cc-rbgem-#{Process.pid}"
pub.bind("ipc://#{path}")
msg = 'hello'
t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
i = 0
while i < n
  pub.send(msg)
  i += 1
end
secs = Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0
lib = $LOADED_FEATURES.grep(/oxmq\.so\z/).first || '?'
printf("{\"count\":%d,\"seconds\":%.9f,\"ns_per_call\":%.3f,\"lib\":\"%s\",\"zmq_version\":\"%s\",\"module\":\"oxmq gem %s\"}\n",
       n, secs, secs * 1e9 / n, lib, ZMQ.version.join('.'), ZMQ::OXMQ_VERSION)
ctx.destroy
File.unlink(path) rescue nil
