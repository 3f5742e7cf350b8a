# rbczmq study 3: ZMQ::Message and ZMQ::Frame multipart over ROUTER/DEALER.
require 'rbczmq'

ctx = ZMQ::Context.new
router = ctx.socket(:ROUTER)
port = router.bind('tcp://127.0.0.1:*')

dealers = %w[alpha beta].map do |name|
  d = ctx.socket(:DEALER)
  d.identity = name
  d.connect("tcp://127.0.0.1:#{port}")
  d
end

dealers.each_with_index do |d, i|
  msg = ZMQ::Message.new
  msg.addstr('header')
  msg.add(ZMQ::Frame("body #{i}"))
  msg.add(ZMQ::Frame(''))
  d.send_message(msg)
end

2.times do
  request = router.recv_message
  identity = request.popstr
  header = request.pop
  body = request.pop
  trailer = request.pop
  raise 'bad request' unless header == ZMQ::Frame('header') && trailer.size.zero? && request.size.zero?

  puts "#{identity}: #{header.data} / #{body.data} (#{body.size} bytes)"
  reply = ZMQ::Message.new
  reply.pushstr("reply to #{body.data}")
  reply.pushstr(identity)
  router.send_message(reply)
end

dealers.each do |d|
  frame = d.recv_frame
  puts "#{d.identity} got: #{frame.data} (more: #{frame.more?})"
end

# Frames sent one by one, with MORE and REUSE.
stamp = ZMQ::Frame('stamp')
router.sendm('alpha')
router.send_frame(stamp, ZMQ::Frame::MORE | ZMQ::Frame::REUSE)
router.send_frame(stamp, ZMQ::Frame::REUSE)
parts = dealers[0].recv_message
puts "alpha got #{parts.size} frames: #{parts.to_a.join(', ')}"
raise 'bad multipart' unless parts.to_a == %w[stamp stamp]

ctx.destroy
