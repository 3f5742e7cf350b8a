# frozen_string_literal: true

require 'spec_helper'

RSpec.describe ZMQ::Context do
  it 'makes sockets from constants, symbols and strings' do
    expect(@ctx.socket(ZMQ::REP).type).to eq(ZMQ::REP)
    expect(@ctx.socket(:PUSH).type).to eq(ZMQ::PUSH)
    expect(@ctx.socket(:pull).type).to eq(ZMQ::PULL)
    expect(@ctx.socket('DEALER').type_str).to eq('DEALER')
    expect(@ctx.socket(:XREP).type).to eq(ZMQ::ROUTER)
  end

  it 'rejects unknown socket types' do
    expect { @ctx.socket(:NOPE) }.to raise_error(Errno::EINVAL)
    expect { @ctx.socket(42) }.to raise_error(ZMQ::Error)
    expect { @ctx.socket(3.5) }.to raise_error(TypeError)
    expect { @ctx.socket(nil) }.to raise_error(TypeError)
  end

  it 'binds and connects in one call' do
    ep = inproc
    rep = @ctx.bind(:REP, ep)
    req = @ctx.connect(:REQ, ep)
    req.send('x')
    expect(rep.recv).to eq('x')
    expect(rep.context).to equal(@ctx)
  end

  it 'destroys: sockets close, further use raises' do
    ctx = ZMQ::Context.new
    s = ctx.socket(:PUB)
    s.bind(inproc)
    ctx.destroy
    expect(ctx).to be_destroyed
    expect(s).to be_closed
    expect { s.send('x') }.to raise_error(Errno::ENOTSOCK)
    expect { ctx.socket(:PUB) }.to raise_error(ZMQ::ETERM)
    expect { ctx.destroy }.not_to raise_error
  end

  it 'has a linger applied at destroy (0 by default, as czmq)' do
    expect(@ctx.linger).to eq(0)
    @ctx.linger = 100
    expect(@ctx.linger).to eq(100)
    expect { @ctx.linger = -5 }.to raise_error(Errno::EINVAL)
    expect { @ctx.linger = :x }.to raise_error(TypeError)
  end

  it 'destroy does not wait for unsent messages with the default linger' do
    ctx = ZMQ::Context.new
    push = ctx.socket(:PUSH)
    push.connect('tcp://127.0.0.1:1') # nobody there
    push.send('lost')
    t0 = Time.now
    ctx.destroy
    expect(Time.now - t0).to be < 2
  end

  it 'has io threads' do
    expect(@ctx.iothreads).to eq(1)
    @ctx.iothreads = 2
    expect(@ctx.iothreads).to eq(2)
  end

  it 'ZMQ.context is a process-wide default, renewed after destroy' do
    c = ZMQ.context
    expect(ZMQ.context).to equal(c)
    c.destroy
    expect(ZMQ.context).not_to equal(c)
    ZMQ.context.destroy
  end

  it 'reports its version' do
    expect(ZMQ.version).to eq([4, 3, 5])
    expect(ZMQ::OXMQ_VERSION).to match(/\A\d+\.\d+\.\d+\z/)
  end
end
