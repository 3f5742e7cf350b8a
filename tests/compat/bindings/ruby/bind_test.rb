# Helpers shared by the ffi-rzmq scripts. The binding is used unchanged:
# Debian's ffi-rzmq-core does `ffi_lib 'libzmq.so.5'` (dlopen by soname), so
# LD_LIBRARY_PATH=<dir of our libzmq.so.5> selects the library (run.sh sets it).
require 'ffi-rzmq'

$stdout.sync = true

module BindTest
  module_function

  # Print every libzmq-like file mapped into this process and the version the
  # library reports; run.sh checks the LIBZMQ_MAPPED lines.
  def report_lib(who = 'ruby')
    paths = File.readlines('/proc/self/maps').map { |l| l.split(' ', 6)[5].to_s.strip }
    paths.select { |p| File.basename(p) =~ /\Alib(zmq|oxmq)\b/ }.uniq.sort.each do |p|
      puts "LIBZMQ_MAPPED=#{p}"
    end
    v = LibZMQ.version
    puts "ZMQ_VERSION=#{v[:major]}.#{v[:minor]}.#{v[:patch]} (#{who} pid #{Process.pid})"
  end

  def fail_now(what)
    puts "not ok - #{what}"
    warn "FAIL: #{what}"
    exit! 1
  end

  def check(cond, what)
    fail_now(what) unless cond
    puts "ok - #{what}"
  end

  # Assert a ffi-rzmq return code is success.
  def rc!(rc, what)
    return rc if ZMQ::Util.resultcode_ok?(rc)
    fail_now("#{what}: rc=#{rc} errno=#{ZMQ::Util.errno} (#{ZMQ::Util.error_string})")
  end

  def guard_time(secs)
    Thread.new do
      sleep secs
      warn "FAIL: timed out after #{secs}s"
      exit! 2
    end
  end

  def ep_ipc(name)
    "ipc:///tmp/oxmq-bind-ruby-#{Process.pid}-#{name}"
  end

  def last_endpoint(sock)
    a = []
    rc!(sock.getsockopt(ZMQ::LAST_ENDPOINT, a), 'getsockopt LAST_ENDPOINT')
    a[0].to_s.delete("\0")
  end

  def cleanup
    Dir.glob("/tmp/oxmq-bind-ruby-#{Process.pid}-*").each { |f| File.unlink(f) rescue nil }
  end
end
