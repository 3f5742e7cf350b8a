# Study 5 on the oxmq gem: the zguide weather station, rbczmq API.
#   weather_gem.rb server ENDPOINT ZIPRANGE   publish until SIGTERM, print the rate
#   weather_gem.rb client ENDPOINT N          SUB on "10001 ", average N temperatures
require 'oxmq'
$stdout.sync = true

def lib_fields
  format('"lib":"%s","module":"oxmq gem","module_version":"%s"',
         $LOADED_FEATURES.grep(/oxmq\.so\z/).first || '?', ZMQ::OXMQ_VERSION)
end

mode, ep, arg = ARGV
ctx = ZMQ::Context.new
if mode == 'server'
  range = Integer(arg)
  base = [10_001 - range / 2, 0].max
  pub = ctx.socket(:PUB)
  pub.bind(ep)
  puts "READY #{pub.last_endpoint}"
  stop = false
  trap('TERM') { stop = true }
  rng = Random.new(42)
  sent = 0
  t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  until stop
    pub.send(format('%05d %d %d', base + rng.rand(range), rng.rand(215) - 80, rng.rand(50) + 10))
    sent += 1
  end
  secs = Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0
  printf("{\"published\":%d,\"seconds\":%.6f,\"pub_rate\":%.3f,%s}\n", sent, secs, sent / secs, lib_fields)
else
  n = Integer(arg)
  t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
  sub = ctx.socket(:SUB)
  sub.connect(ep)
  sub.subscribe('10001 ')
  total = 0
  n.times do
    zip, temp, = sub.recv.split(' ')
    abort 'unfiltered update' unless zip == '10001'
    total += Integer(temp)
  end
  secs = Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0
  printf("{\"updates\":%d,\"seconds\":%.6f,\"avg_temp\":%.2f,%s}\n", n, secs, total.to_f / n, lib_fields)
end
ctx.destroy
