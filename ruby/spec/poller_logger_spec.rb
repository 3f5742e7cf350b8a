# frozen_string_literal: true

require 'spec_helper'
require 'socket'

RSpec.describe ZMQ::Poller do
  it 'polls sockets level-triggered, with readables and writables' do
    poller = ZMQ::Poller.new
    expect(poller.poll).to eq(0)
    ep = inproc
    rep = @ctx.bind(:REP, ep)
    req = @ctx.connect(:REQ, ep)
    expect { poller.poll(:invalid) }.to raise_error(TypeError)
    expect(poller.poll_nonblock).to eq(0)
    expect(poller.register_readable(rep)).to be(true)
    expect(poller.poll(0)).to eq(0)
    req.send('request')
    expect(poller.poll(1)).to eq(1)
    expect(poller.readables).to eq([rep])
    expect(poller.writables).to eq([])
    expect(poller.poll(1)).to eq(1) # level-triggered: still readable
    rep.recv
    expect(poller.register(req)).to be(true)
    rep.send('reply')
    expect(poller.poll(1)).to eq(1)
    expect(poller.readables).to eq([req])
    expect(poller.writables).to eq([])
    expect(poller.size).to eq(2)
  end

  it 'times out (seconds, Integer or Float) and returns 0' do
    poller = ZMQ::Poller.new
    poller.register_readable(@ctx.bind(:PULL, inproc))
    t0 = Time.now
    expect(poller.poll(0.1)).to eq(0)
    expect(Time.now - t0).to be_between(0.08, 2)
    expect(poller.readables).to eq([])
  end

  it 'polls IOs and descriptors' do
    poller = ZMQ::Poller.new
    r, w = IO.pipe
    poller.register(ZMQ::Pollitem(r, ZMQ::POLLIN))
    poller.register(ZMQ::Pollitem.new(w, ZMQ::POLLOUT))
    w.write('message')
    expect(poller.poll(1)).to eq(2)
    expect(poller.readables).to eq([r])
    expect(poller.writables).to eq([w])
    expect(r.read(7)).to eq('message')
    poller2 = ZMQ::Poller.new
    poller2.register(ZMQ::Pollitem(r.fileno, ZMQ::POLLIN))
    expect(poller2.poll(0)).to eq(0)
  ensure
    r&.close
    w&.close
  end

  it 'removes pollables and rejects bad ones' do
    poller = ZMQ::Poller.new
    ep = inproc
    rep = @ctx.bind(:REP, ep)
    req = @ctx.connect(:REQ, ep)
    poller.register(req)
    expect(poller.remove(req)).to be(true)
    expect(poller.remove(rep)).to be(false)
    item = ZMQ::Pollitem.new($stdin, ZMQ::POLLIN)
    poller.register(item)
    expect(poller.remove(item)).to be(true)
    poller.register(item)
    expect(poller.remove($stdin)).to be(true)
    expect { poller.register(Object.new) }.to raise_error(TypeError)
    expect { ZMQ::Pollitem(req, 0) }.to raise_error(ZMQ::Error)
    closed = @ctx.socket(:REP)
    closed.close
    expect { poller.register(closed) }.to raise_error(Errno::ENOTSOCK)
  end

  it 'a socket closed by another thread ends a blocking poll with ENOTSOCK' do
    pull = @ctx.bind(:PULL, inproc)
    poller = ZMQ::Poller.new
    poller.register_readable(pull)
    t = Thread.new { poller.poll(-1) }
    sleep 0.1
    pull.close
    expect { t.value }.to raise_error(Errno::ENOTSOCK)
  end
end

RSpec.describe ZMQ::Logger do
  it 'refuses sockets that cannot send log lines' do
    expect { ZMQ::Logger.new(@ctx.socket(ZMQ::REQ)) }.to raise_error(ZMQ::Logger::InvalidSocketError)
    expect { ZMQ::Logger.new(@ctx.socket(ZMQ::REQ)) }.to raise_error(ZMQ::Error)
    expect { ZMQ::Logger.new('x') }.to raise_error(ZMQ::Logger::InvalidSocketError)
    expect { ZMQ::Logger.new(@ctx.socket(ZMQ::PUSH)) }.not_to raise_error
  end

  it 'writes each line as one message' do
    reader = @ctx.socket(ZMQ::PULL)
    port = reader.bind('tcp://127.0.0.1:*')
    writer = @ctx.socket(ZMQ::PUSH)
    writer.connect("tcp://127.0.0.1:#{port}")
    logger = ZMQ::Logger.new(writer)
    expect(logger).to be_a(::Logger)
    expect(logger.debug('hellö world')).to be(true)
    logger.info('second')
    first = reader.recv.force_encoding(Encoding::UTF_8)
    expect(first).to match(/DEBUG.*hellö world/)
    expect(reader.recv).to match(/INFO.*second/)
    logger.level = ::Logger::WARN
    logger.info('dropped')
    logger.warn('kept')
    expect(reader.recv).to match(/WARN.*kept/)
  end
end
