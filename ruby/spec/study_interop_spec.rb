# frozen_string_literal: true

require 'spec_helper'
require 'open3'
require 'rbconfig'

ROOT = File.expand_path('..', __dir__)

# Runs a Ruby script in a child process that loads the oxmq under test.
def run_ruby(*args, env: {})
  # Bounded: a script that hangs fails the spec instead of the whole run.
  Open3.capture2e(env, 'timeout', '-k', '5', '120', RbConfig.ruby, *SpecHelpers.oxmq_load_args, *args)
end

RSpec.describe 'the rbczmq study scripts, unchanged (require "rbczmq")' do
  it 'REQ/REP server and 5000 round trips' do
    out, st = run_ruby(File.join(ROOT, 'study/reqrep.rb'))
    expect(st).to be_success, out
    expect(out).to include('round trips: 5000')
  end

  it 'logger: 10,000 debug lines over PUSH, PULL reader, PUB re-broadcast to SUB' do
    out, st = run_ruby(File.join(ROOT, 'study/logger.rb'))
    expect(st).to be_success, out
    expect(out).to include('logged: 10000, relayed and received: 10000')
  end

  it 'Message/Frame multipart over ROUTER/DEALER' do
    out, st = run_ruby(File.join(ROOT, 'study/multipart.rb'))
    expect(st).to be_success, out
    expect(out).to include('alpha got: reply to body 0', 'beta got: reply to body 1', 'alpha got 2 frames: stamp, stamp')
  end
end

# ffi-rzmq (Debian's ruby-ffi-rzmq) on Debian's real libzmq, in its own
# process (both gems define ZMQ), talking to this gem over tcp.
RSpec.describe 'interop with ffi-rzmq on libzmq' do
  # The peer: binds `type` on an ephemeral port, prints it, then runs `script`.
  def ffi_peer(type, script)
    code = <<~RUBY
      require 'ffi-rzmq'
      # oxmq's drop-in libzmq.so.5 reports 4.3.5; Debian's is another 4.x.
      v = LibZMQ.version
      abort "not Debian's libzmq: \#{v}" if v[:major] != 4 || v == { major: 4, minor: 3, patch: 5 }
      ctx = ZMQ::Context.new
      s = ctx.socket(ZMQ::#{type})
      s.setsockopt(ZMQ::LINGER, 1000)
      rc = s.bind('tcp://127.0.0.1:*')
      raise "bind: \#{ZMQ::Util.error_string}" unless ZMQ::Util.resultcode_ok?(rc)
      ep = []
      s.getsockopt(ZMQ::LAST_ENDPOINT, ep)
      puts ep.first.to_s[/:(\\d+)/, 1]
      $stdout.flush
      #{script}
      s.close
      ctx.terminate
    RUBY
    io = IO.popen([RbConfig.ruby, '-e', code], 'r+', err: %i[child out])
    port = io.gets.to_s.strip
    raise "peer failed: #{port} #{io.read}" unless port =~ /\A\d+\z/

    [io, Integer(port)]
  end

  def finish(io)
    rest = io.read
    io.close
    expect($?.success?).to be(true), rest
    rest
  end

  it 'REQ (oxmq) to REP (ffi-rzmq)' do
    io, port = ffi_peer('REP', <<~RUBY)
      3.times { m = ''; s.recv_string(m); s.send_string("ffi:" + m) }
    RUBY
    req = @ctx.connect(:REQ, "tcp://127.0.0.1:#{port}")
    3.times do |i|
      req.send("hello #{i}")
      expect(req.recv).to eq("ffi:hello #{i}")
    end
    finish(io)
  end

  it 'PUSH (ffi-rzmq) to PULL (oxmq), multipart, binary and large' do
    io, port = ffi_peer('PUSH', <<~RUBY)
      s.send_strings(['part1', "\\x00\\xffbin".b, 'x' * 100_000])
      s.send_string('done')
      sleep 0.5
    RUBY
    pull = @ctx.connect(:PULL, "tcp://127.0.0.1:#{port}")
    msg = pull.recv_message
    expect(msg.to_a).to eq(['part1', "\x00\xffbin".b, 'x' * 100_000])
    expect(pull.recv).to eq('done')
    finish(io)
  end

  it 'DEALER (oxmq, identity) to ROUTER (ffi-rzmq) and back' do
    io, port = ffi_peer('ROUTER', <<~RUBY)
      parts = []
      s.recv_strings(parts)
      s.send_strings([parts[0], 'echo', *parts[1..]])
      puts "router saw \#{parts.inspect}"
    RUBY
    dealer = @ctx.socket(:DEALER)
    dealer.identity = 'rb-dealer'
    dealer.connect("tcp://127.0.0.1:#{port}")
    dealer.send_message(ZMQ::Message('a', 'b'))
    expect(dealer.recv_message.to_a).to eq(%w[echo a b])
    expect(finish(io)).to include('router saw ["rb-dealer", "a", "b"]')
  end

  it 'PUB (ffi-rzmq) to SUB (oxmq) with a subscription' do
    io, port = ffi_peer('PUB', <<~RUBY)
      300.times { |i| s.send_string("skip \#{i}"); s.send_string("news \#{i}"); sleep 0.01 }
    RUBY
    sub = @ctx.socket(:SUB)
    sub.subscribe('news')
    sub.connect("tcp://127.0.0.1:#{port}")
    got = Array.new(5) { sub.recv }
    expect(got).to all(start_with('news '))
    finish(io)
  end
end
