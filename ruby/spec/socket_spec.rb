# frozen_string_literal: true

require 'spec_helper'
require 'socket'

RSpec.describe ZMQ::Socket do
  def pair
    ep = inproc('pair')
    a = @ctx.socket(:PAIR)
    a.bind(ep)
    b = @ctx.socket(:PAIR)
    b.connect(ep)
    [a, b]
  end

  describe '#bind / #connect / #unbind / #disconnect' do
    it 'returns the port for tcp (ephemeral resolved), nil otherwise' do
      rep = @ctx.socket(:REP)
      port = rep.bind('tcp://127.0.0.1:*')
      expect(port).to be_a(Integer).and be > 0
      expect { TCPSocket.new('127.0.0.1', port).close }.not_to raise_error
      expect(rep.bind(inproc)).to be_nil
      expect(rep.to_s).to start_with('REP socket bound to')
      expect(rep.endpoint).to start_with('inproc://')
    end

    it 'connects and reports it' do
      req = @ctx.socket(:REQ)
      expect(req.connect('tcp://127.0.0.1:5999')).to be(true)
      expect(req.to_s).to eq('REQ socket connected to tcp://127.0.0.1:5999')
      expect(req.last_endpoint).to eq('tcp://127.0.0.1:5999')
    end

    it 'raises errno exceptions for bad endpoints' do
      s = @ctx.socket(:REP)
      expect { s.bind('bad uri') }.to raise_error(Errno::EINVAL)
      expect { s.connect('bad uri') }.to raise_error(Errno::EINVAL)
      expect { s.bind('nope://x') }.to raise_error(Errno::EPROTONOSUPPORT)
      expect { s.bind('tcp://1.2.3.4.5:1') }.to raise_error(ZMQ::Error)
      expect { s.bind(42) }.to raise_error(TypeError)
      other = @ctx.socket(:REP)
      port = other.bind('tcp://127.0.0.1:*')
      expect { s.bind("tcp://127.0.0.1:#{port}") }.to raise_error(Errno::EADDRINUSE)
    end

    it 'unbinds so the port is free again' do
      s = @ctx.socket(:PULL)
      port = s.bind('tcp://127.0.0.1:*')
      expect(s.unbind("tcp://127.0.0.1:#{port}")).to be(true)
      eventually { (TCPSocket.new('127.0.0.1', port).close && false) rescue true }
      expect { s.unbind('tcp://127.0.0.1:1') }.to raise_error(Errno::ENOENT)
    end

    it 'disconnects' do
      ep = inproc
      pull = @ctx.bind(:PULL, ep)
      push = @ctx.connect(:PUSH, ep)
      push.send('a')
      expect(pull.recv).to eq('a')
      expect(push.disconnect(ep)).to be(true)
      expect { push.disconnect(ep) }.to raise_error(Errno::ENOENT)
    end
  end

  describe '#send / #recv' do
    it 'round-trips strings, returning true and the string' do
      a, b = pair
      expect(a.send('ping')).to be(true)
      expect(b.recv).to eq('ping')
      b.send('')
      got = a.recv
      expect(got).to eq('')
      expect(got.encoding).to eq(Encoding::BINARY)
    end

    it 'carries binary and large data' do
      a, b = pair
      bin = (0..255).map(&:chr).join * 10
      a.send(bin)
      expect(b.recv.bytes).to eq(bin.bytes)
      big = 'x' * 3_000_000
      a.send(big)
      expect(b.recv).to eq(big)
    end

    it 'sends frozen large strings without a copy and releases them' do
      a, b = pair
      payload = ('z' * 100_000).freeze
      3.times { a.send(payload) }
      3.times { expect(b.recv).to eq(payload) }
      a.send('x') # a later call drains the release queue
      b.recv
      expect(ZMQ.__lent_strings).to eq(0)
    end

    it 'sendm sends multipart' do
      a, b = pair
      expect(a.sendm('batch')).to be(true)
      a.sendm('of')
      a.send('messages')
      expect(b.recv).to eq('batch')
      expect(b.rcvmore?).to be(true)
      expect(b.recv).to eq('of')
      expect(b.recv).to eq('messages')
      expect(b.rcvmore?).to be(false)
    end

    it 'recv_nonblock returns nil when nothing is there' do
      a, b = pair
      expect(b.recv_nonblock).to be_nil
      a.send('now')
      expect(eventually { b.recv_nonblock }).to eq('now')
    end

    it 'raises on type errors and wrong socket directions' do
      a, = pair
      expect { a.send(42) }.to raise_error(TypeError)
      expect { a.send(nil) }.to raise_error(TypeError)
      push = @ctx.socket(:PUSH)
      expect { push.recv }.to raise_error(Errno::ENOTSUP)
      pull = @ctx.socket(:PULL)
      expect { pull.send('x') }.to raise_error(ZMQ::Error)
    end

    it 'raises ZMQ::EFSM on REQ/REP misuse' do
      req = @ctx.socket(:REQ)
      expect { req.recv }.to raise_error(ZMQ::EFSM)
      rep = @ctx.socket(:REP)
      expect { rep.send('x') }.to raise_error(ZMQ::EFSM) { |e| expect(e.errno).to eq(ZMQ::HAUSNUMERO + 51) }
    end

    it 'times out with EAGAIN after RCVTIMEO / SNDTIMEO' do
      a, = pair
      a.rcvtimeo = 50
      t0 = Time.now
      expect { a.recv }.to raise_error(Errno::EAGAIN)
      expect(Time.now - t0).to be >= 0.04
      push = @ctx.socket(:PUSH)
      push.sndtimeo = 0
      expect { push.send('x') }.to raise_error(Errno::EAGAIN)
      expect { push.send('x') }.to raise_error(ZMQ::Error)
    end

    it 'raises ENOTSOCK on a closed socket, and close is idempotent' do
      a, = pair
      a.close
      expect(a).to be_closed
      a.close
      expect { a.send('x') }.to raise_error(Errno::ENOTSOCK)
      expect { a.recv }.to raise_error(ZMQ::Error)
      expect { a.linger }.to raise_error(Errno::ENOTSOCK)
      expect { a.bind(inproc) }.to raise_error(Errno::ENOTSOCK)
    end
  end

  describe 'frames and messages' do
    it 'send_frame / recv_frame / recv_frame_nonblock' do
      a, b = pair
      ping = ZMQ::Frame('ping')
      expect(a.send_frame(ping)).to be(true)
      expect(ping).to be_destroyed # consumed without REUSE
      f = b.recv_frame
      expect(f).to eq(ZMQ::Frame('ping'))
      expect(f.more?).to be(false)
      expect(b.recv_frame_nonblock).to be_nil
      b.send_frame(ZMQ::Frame('pong'))
      expect(eventually { a.recv_frame_nonblock }).to eq(ZMQ::Frame('pong'))
      expect { a.send_frame('str') }.to raise_error(TypeError)
      expect { a.send_frame(ping) }.to raise_error(ZMQ::Error)
    end

    it 'send_frame with MORE, REUSE (constants and symbols) and DONTWAIT' do
      a, b = pair
      f = ZMQ::Frame('again')
      3.times { a.send_frame(f, ZMQ::Frame::REUSE | ZMQ::Frame::MORE) }
      a.send_frame(f, :REUSE)
      a.send_frame(ZMQ::Frame('last'), ZMQ::Frame::DONTWAIT)
      got = Array.new(4) { b.recv_frame }
      expect(got.map(&:data)).to eq(%w[again] * 4)
      expect(got.map(&:more?)).to eq([true, true, true, false])
      expect(b.recv).to eq('last')
      expect { a.send_frame(f, :BOGUS) }.to raise_error(Errno::EINVAL)
      expect { a.send_frame(f, 64) }.to raise_error(Errno::EINVAL)
    end

    it 'send_message / recv_message over ROUTER/DEALER' do
      ep = inproc
      router = @ctx.bind(:ROUTER, ep)
      dealer = @ctx.socket(:DEALER)
      dealer.identity = 'xyz'
      dealer.connect(ep)
      msg = ZMQ::Message.new
      msg.addstr('header')
      msg.add(ZMQ::Frame('body'))
      expect(dealer.send_message(msg)).to be_nil
      expect(msg.size).to eq(0)
      got = router.recv_message
      expect(got).to be_a(ZMQ::Message)
      expect(got.to_a).to eq(%w[xyz header body])
      reply = ZMQ::Message('xyz', 'reply')
      router.send_message(reply)
      expect(dealer.recv_message.popstr).to eq('reply')
      expect { dealer.send_message(ZMQ::Message.new) }.to raise_error(Errno::EINVAL)
      expect { dealer.send_message('x') }.to raise_error(TypeError)
    end
  end

  describe 'options as accessors' do
    it 'reads and writes integer options' do
      s = @ctx.socket(:DEALER)
      { linger: 10, sndhwm: 50, rcvhwm: 60, rcvtimeo: 200, sndtimeo: 300, backlog: 200,
        reconnect_ivl: 200, reconnect_ivl_max: 5, maxmsgsize: 1024, sndbuf: 4096, rcvbuf: 8192,
        affinity: 1, rate: 50, recovery_ivl: 20, tcp_keepalive: 1, heartbeat_ivl: 100 }.each do |name, v|
        s.public_send("#{name}=", v)
        expect(s.public_send(name)).to eq(v), "#{name}"
      end
    end

    it 'has libzmq defaults' do
      s = @ctx.socket(:DEALER)
      expect(s.linger).to eq(-1)
      expect(s.sndhwm).to eq(1000)
      expect(s.rcvtimeo).to eq(-1)
      expect(s.recv_timeout).to be_nil
      expect(s.ipv6?).to be(false)
      expect(s.events).to eq(0)
    end

    it 'reads and writes boolean and string options' do
      s = @ctx.socket(:ROUTER)
      s.router_mandatory = true
      expect(s).not_to respond_to(:router_mandatory) # write-only in libzmq
      s.immediate = true
      expect(s.immediate?).to be(true)
      s.ipv6 = true
      expect(s.ipv6).to be(true)
      s.identity = 'anon'
      expect(s.identity).to eq('anon')
      expect { s.identity = '' }.to raise_error(ZMQ::Error)
      expect { s.identity = '*' * 256 }.to raise_error(Errno::EINVAL)
    end

    it 'rejects wrong types and values' do
      s = @ctx.socket(:PAIR)
      expect { s.linger = :x }.to raise_error(TypeError)
      expect { s.linger = -7 }.to raise_error(Errno::EINVAL)
      expect { s.ipv6 = 1 }.to raise_error(TypeError)
      expect { s.identity = 5 }.to raise_error(TypeError)
      expect { s.setsockopt(9999, 1) }.to raise_error(Errno::EINVAL)
      # The core's option table says what each number takes, whatever the value's class.
      linger, routing_id = ZMQ::SOCKET_OPTIONS.values_at(:linger, :routing_id).map(&:first)
      expect { s.setsockopt(linger, "\x00\x00\x00\x00") }.to raise_error(TypeError)
      expect { s.setsockopt(routing_id, 5) }.to raise_error(TypeError)
      expect { s.setsockopt(routing_id, true) }.to raise_error(TypeError)
      s.setsockopt(routing_id, 'id')
      expect(s.getsockopt(routing_id)).to eq('id')
      expect { s.getsockopt(9999) }.to raise_error(Errno::EINVAL)
      expect { s.recv_timeout = :x }.to raise_error(TypeError)
    end

    it 'has rbczmq timeouts in seconds and hwm' do
      s = @ctx.socket(:REP)
      s.recv_timeout = 0.25
      expect(s.rcvtimeo).to eq(250)
      expect(s.recv_timeout).to eq(0.25)
      s.send_timeout = 1
      expect(s.send_timeout).to eq(1.0)
      s.hwm = 7
      expect([s.sndhwm, s.rcvhwm, s.hwm]).to eq([7, 7, 7])
      s.verbose = true
      expect(s.verbose).to be(true)
    end

    it 'subscribes and unsubscribes' do
      ep = inproc
      pub = @ctx.bind(:PUB, ep)
      sub = @ctx.connect(:SUB, ep)
      expect(sub.subscribe('ruby')).to be(true)
      eventually do
        pub.send('python no')
        pub.send('ruby yes')
        sub.recv_nonblock
      end.then { |m| expect(m).to eq('ruby yes') }
      expect(sub.unsubscribe('ruby')).to be(true)
    end

    it 'has fd, events, readable?/writable?, type and inspect' do
      ep = inproc
      rep = @ctx.bind(:REP, ep)
      req = @ctx.connect(:REQ, ep)
      expect(req.fd).to be_a(Integer).and be >= 0
      expect(req.to_i).to eq(req.fd)
      expect(req).to be_writable
      req.send('m')
      expect(eventually { rep.readable? }).to be(true)
      expect(rep.type).to eq(ZMQ::REP)
      expect(rep.inspect).to include('REP')
    end
  end
end
