# frozen_string_literal: true

require 'spec_helper'

# Socket#stats (oxmq only): counters as a Hash, each kind of drop forced.
RSpec.describe 'ZMQ::Socket#stats' do
  COUNTERS = %i[msgs_in bytes_in msgs_out bytes_out queued_in queued_out
                drops_hwm drops_no_route drops_conflate drops_oversize].freeze

  def drain(sock)
    n = 0
    n += 1 while sock.recv_nonblock
    n
  end

  def tcp_pair(pull_opts = {})
    pull = @ctx.socket(:PULL)
    pull_opts.each { |k, v| pull.public_send("#{k}=", v) }
    port = pull.bind('tcp://127.0.0.1:*')
    push = @ctx.socket(:PUSH)
    push.linger = 0
    push.connect("tcp://127.0.0.1:#{port}")
    [pull, push, port]
  end

  it 'counts traffic per socket and per peer' do
    pull, push, port = tcp_pair
    push.send('hello')
    push.sendm('ab')
    push.send('cde')
    expect(pull.recv).to eq('hello')
    expect(pull.recv).to eq('ab')
    expect(pull.recv).to eq('cde')
    st = pull.stats
    expect(st.keys).to include(*COUNTERS, :reconnects, :handshake_failed_auth, :peers)
    expect(st.values_at(:msgs_in, :bytes_in, :msgs_out)).to eq([2, 10, 0])
    expect(st[:peers].size).to eq(1)
    peer = st[:peers][0]
    expect(peer[:endpoint]).to eq("tcp://127.0.0.1:#{port}")
    expect(peer[:remote_address]).to eq('127.0.0.1')
    expect(peer[:routing_id]).to be_nil
    expect(peer.values_at(:msgs_in, :bytes_in)).to eq([2, 10])
    expect(push.stats.values_at(:msgs_out, :bytes_out)).to eq([2, 10])
    expect(pull.getsockopt(ZMQ::STATS_MSGS_IN)).to eq(2)
    expect { pull.setsockopt(ZMQ::STATS_MSGS_IN, 0) }.to raise_error(Errno::EINVAL)
  end

  it 'counts PUB drops at the HWM against the subscriber' do
    ep = inproc('stats-pub')
    pub = @ctx.socket(:PUB)
    pub.sndhwm = 4
    pub.bind(ep)
    sub = @ctx.socket(:SUB)
    sub.rcvhwm = 4
    sub.setsockopt(ZMQ::SUBSCRIBE, '')
    sub.connect(ep)
    100.times { pub.send('m') }
    got = drain(sub)
    expect(got).to be_between(1, 99)
    st = pub.stats
    expect(st[:drops_hwm]).to eq(100 - got)
    expect(st[:peers][0][:drops_hwm]).to eq(100 - got)
  end

  it 'counts ROUTER sends to an unknown id as no-route drops' do
    router = @ctx.socket(:ROUTER)
    router.bind(inproc('stats-router'))
    router.sendm('nobody')
    router.send('x')
    expect(router.stats[:drops_no_route]).to eq(1)
  end

  it 'counts messages CONFLATE replaced' do
    ep = inproc('stats-conflate')
    pull = @ctx.socket(:PULL)
    pull.conflate = true
    pull.bind(ep)
    push = @ctx.socket(:PUSH)
    push.connect(ep)
    5.times { |i| push.send(i.to_s) }
    expect(pull.recv).to eq('4')
    expect(pull.stats[:drops_conflate]).to eq(4)
  end

  it 'counts what a conflating sender replaced before its peer took it' do
    ep = inproc('stats-conflate-out')
    pull = @ctx.socket(:PULL)
    pull.bind(ep)
    push = @ctx.socket(:PUSH)
    push.conflate = true
    push.connect(ep)
    3.times { |i| push.send(i.to_s) }
    expect(pull.recv).to eq('2')
    st = push.stats
    expect(st[:drops_conflate]).to eq(2)
    expect(st[:peers][0].values_at(:drops_conflate, :msgs_out)).to eq([2, 3])
  end

  it 'counts a frame over MAXMSGSIZE as an oversize drop' do
    pull, push, = tcp_pair(maxmsgsize: 10)
    push.send('x' * 100)
    expect(eventually(10) { pull.stats[:drops_oversize] >= 1 }).to be(true)
  end

  it 'counts reconnects' do
    probe = @ctx.socket(:PULL)
    port = probe.bind('tcp://127.0.0.1:*')
    probe.close
    dealer = @ctx.socket(:DEALER)
    dealer.linger = 0
    dealer.reconnect_ivl = 10
    dealer.connect("tcp://127.0.0.1:#{port}")
    expect(eventually(10) { dealer.stats[:reconnects] >= 3 }).to be(true)
  end

  it 'counts PLAIN refused by ZAP as an auth failure' do
    zap = @ctx.socket(:REP)
    zap.rcvtimeo = 100
    zap.bind('inproc://zeromq.zap.01')
    stop = false
    handler = Thread.new do
      until stop
        begin
          req = zap.recv_message
        rescue Errno::EAGAIN
          next
        end
        req.popstr
        id = req.popstr
        zap.sendm('1.0')
        zap.sendm(id)
        zap.sendm('400')
        zap.sendm('no')
        zap.sendm('')
        zap.send('')
      end
    end
    server = @ctx.socket(:PULL)
    server.setsockopt(44, 1) # PLAIN_SERVER
    port = server.bind('tcp://127.0.0.1:*')
    client = @ctx.socket(:PUSH)
    client.linger = 0
    client.setsockopt(45, 'u') # PLAIN_USERNAME
    client.setsockopt(46, 'wrong') # PLAIN_PASSWORD
    client.connect("tcp://127.0.0.1:#{port}")
    expect(eventually(10) { server.stats[:handshake_failed_auth] >= 1 }).to be(true)
    expect(server.stats[:peers]).to eq([])
  ensure
    stop = true
    handler&.join
  end
end
