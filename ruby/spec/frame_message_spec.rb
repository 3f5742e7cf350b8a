# frozen_string_literal: true

require 'spec_helper'

RSpec.describe ZMQ::Frame do
  it 'is made by ZMQ::Frame(data) and Frame.new' do
    f = ZMQ::Frame('data')
    expect(f.data).to eq('data')
    expect(f.size).to eq(4)
    expect(f.more?).to be(false)
    expect(ZMQ::Frame.new.size).to eq(0)
    expect(ZMQ::Frame().data).to eq('')
    expect { ZMQ::Frame(42) }.to raise_error(TypeError)
  end

  it 'compares by content and has more=, dup, to_s, inspect, destroy' do
    f = ZMQ::Frame('x')
    expect(f).to eq(ZMQ::Frame('x'))
    expect(f).not_to eq(ZMQ::Frame('y'))
    expect(f.eql?(ZMQ::Frame('x'))).to be(true)
    expect(f.hash).to eq(ZMQ::Frame('x').hash)
    f.more = true
    expect(f.more?).to be(true)
    d = f.dup
    expect(d).to eq(f)
    expect(f.to_s).to eq('x')
    expect(f.inspect).to eq('ZMQ::Frame("x")')
    f.destroy
    expect(f).to be_destroyed
    expect { f.data }.to raise_error(ZMQ::Error)
    expect(d.data).to eq('x')
  end
end

RSpec.describe ZMQ::Message do
  it 'push prepends, add appends, pop takes the front (czmq order)' do
    m = ZMQ::Message.new
    expect(m.push(ZMQ::Frame('body'))).to be(true)
    expect([m.size, m.content_size]).to eq([1, 4])
    expect(m.push(ZMQ::Frame('header'))).to be(true)
    expect([m.size, m.content_size]).to eq([2, 10])
    expect(m.add(ZMQ::Frame('tail'))).to be(true)
    expect(m.pop).to eq(ZMQ::Frame('header'))
    expect(m.pop).to eq(ZMQ::Frame('body'))
    expect(m.pop).to eq(ZMQ::Frame('tail'))
    expect(m.pop).to be_nil
    expect([m.size, m.content_size]).to eq([0, 0])
  end

  it 'has pushstr, addstr, popstr' do
    m = ZMQ::Message.new
    expect(m.pushstr('body')).to be(true)
    expect(m.pushstr('header')).to be(true)
    expect(m.addstr('tail')).to be(true)
    expect([m.popstr, m.popstr, m.popstr, m.popstr]).to eq(['header', 'body', 'tail', nil])
    expect { m.pushstr(1) }.to raise_error(TypeError)
    expect { m.push('str') }.to raise_error(TypeError)
  end

  it 'has first, last, to_a, each, ==, dup, destroy' do
    m = ZMQ::Message.new
    expect(m.first).to be_nil
    expect(m.last).to be_nil
    m = ZMQ::Message('a', 'b', 'c')
    expect(m.first).to eq(ZMQ::Frame('a'))
    expect(m.last).to eq(ZMQ::Frame('c'))
    expect(m.size).to eq(3) # first/last do not remove
    expect(m.to_a).to eq(%w[a b c])
    expect(m.map(&:data)).to eq(%w[a b c])
    expect(m).to eq(ZMQ::Message('a', 'b', 'c'))
    expect(m).not_to eq(ZMQ::Message('a', 'b'))
    d = m.dup
    m.destroy
    expect(m.size).to eq(0)
    expect(d.size).to eq(3)
    expect(m.inspect).to eq('ZMQ::Message()')
  end

  it 'keeps frames usable after adding them' do
    f = ZMQ::Frame('shared')
    m = ZMQ::Message.new
    m.add(f)
    m.add(f)
    expect(m.to_a).to eq(%w[shared shared])
    expect(f.data).to eq('shared')
    f.destroy
    expect { m.add(f) }.to raise_error(ZMQ::Error)
  end
end
