# frozen_string_literal: true

require 'spec_helper'

RSpec.describe 'ZMQ::Socket#monitor' do
  def monitor(sock, events, version, sink = :PAIR, reader = :PAIR)
    ep = inproc('mon')
    sock.monitor(ep, events, version, sink)
    mon = @ctx.socket(reader)
    mon.rcvtimeo = 5000
    mon.subscribe('') if reader == :SUB
    mon.connect(ep)
    mon
  end

  def frames(sock)
    parts = [sock.recv]
    parts << sock.recv while sock.rcvmore?
    parts
  end

  def wait_for(mon, event, version = 2)
    50.times do
      e = ZMQ::Monitor.decode(frames(mon), version)
      return e if e.event == event
    end
    raise "event #{event} never came"
  end

  it 'version 1 is libzmq\'s two frames' do
    s = @ctx.socket(:DEALER)
    mon = monitor(s, ZMQ::EVENT_LISTENING, 1)
    port = s.bind('tcp://127.0.0.1:*')
    e = ZMQ::Monitor.decode(frames(mon), 1)
    expect([e.event, e.local]).to eq([ZMQ::EVENT_LISTENING, "tcp://127.0.0.1:#{port}"])
  end

  it 'version 2 names both ends and the peer\'s routing id' do
    server = @ctx.socket(:ROUTER)
    client = @ctx.socket(:DEALER)
    server.identity = 'srv'
    client.identity = 'ruby-client-long-id'
    smon = monitor(server, ZMQ::EVENT_ALL_V2, 2)
    cmon = monitor(client, ZMQ::EVENT_ALL_V2, 2, :PUSH, :PULL)
    port = server.bind('tcp://127.0.0.1:*')
    ep = "tcp://127.0.0.1:#{port}"
    client.connect(ep)
    client.send('hi')
    expect(frames(server)).to eq(%w[ruby-client-long-id hi])

    listening = wait_for(smon, ZMQ::EVENT_LISTENING)
    expect([listening.local, listening.remote, listening.routing_id]).to eq([ep, '', nil])
    connected = wait_for(cmon, ZMQ::EVENT_CONNECTED)
    expect(connected.remote).to eq(ep)
    expect(connected.local).to start_with('tcp://127.0.0.1:')
    accepted = wait_for(smon, ZMQ::EVENT_ACCEPTED)
    expect([accepted.local, accepted.remote]).to eq([ep, connected.local])
    expect(wait_for(cmon, ZMQ::EVENT_HANDSHAKE_SUCCEEDED).routing_id).to eq('srv')
    expect(wait_for(smon, ZMQ::EVENT_HANDSHAKE_SUCCEEDED).routing_id).to eq('ruby-client-long-id')
    client.close
    gone = wait_for(smon, ZMQ::EVENT_DISCONNECTED)
    expect([gone.routing_id, gone.value]).to eq(['ruby-client-long-id', accepted.value])
  end

  it 'reports drops (no route, HWM) and a pipe reaching its HWM' do
    router = @ctx.socket(:ROUTER)
    dealer = @ctx.socket(:DEALER)
    router.sndhwm = 1
    dealer.rcvhwm = 1
    dealer.identity = 'D'
    mon = monitor(router, ZMQ::EVENT_MSG_DROPPED | ZMQ::EVENT_HWM_REACHED, 2)
    ep = inproc('drops')
    router.bind(ep)
    dealer.connect(ep)
    dealer.send('x')
    expect(frames(router)).to eq(%w[D x])

    router.sendm('nobody')
    router.send('m')
    e = ZMQ::Monitor.decode(frames(mon), 2)
    expect([e.event, e.value, e.routing_id]).to eq([ZMQ::EVENT_MSG_DROPPED, ZMQ::DROP_NO_ROUTE, 'nobody'])
    # inproc: SNDHWM + the peer's RCVHWM = 2 fit; the third is dropped.
    3.times do
      router.sendm('D')
      router.send('m')
    end
    full = ZMQ::Monitor.decode(frames(mon), 2)
    expect([full.event, full.value, full.routing_id]).to eq([ZMQ::EVENT_HWM_REACHED, 2, 'D'])
    dropped = ZMQ::Monitor.decode(frames(mon), 2)
    expect([dropped.event, dropped.value, dropped.routing_id]).to eq([ZMQ::EVENT_MSG_DROPPED, ZMQ::DROP_HWM, 'D'])
  end

  it 'refuses a sink type libzmq refuses, and v2 events with version 1' do
    s = @ctx.socket(:DEALER)
    expect { s.monitor(inproc, ZMQ::EVENT_ALL_V2, 2, :DEALER) }.to raise_error(ZMQ::Error)
    expect { s.monitor(inproc, ZMQ::EVENT_ALL_V2, 1) }.to raise_error(ZMQ::Error)
  end
end
