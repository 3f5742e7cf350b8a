# frozen_string_literal: true

require 'spec_helper'

# Memory safety and the GVL: the ownership bugs rbczmq had, made impossible.
RSpec.describe 'safety' do
  describe 'GC' do
    it 'survives GC.stress around socket churn' do
      # GC at every allocation: slow, so a few rounds only.
      GC.stress = true
      begin
        4.times do |i|
          ep = inproc("gc#{i}")
          a = @ctx.socket(:PAIR)
          a.bind(ep)
          b = @ctx.socket(:PAIR)
          b.connect(ep)
          a.send("m#{i}")
          expect(b.recv).to eq("m#{i}")
          f = ZMQ::Frame("f#{i}")
          b.send_frame(f)
          expect(a.recv_frame.data).to eq("f#{i}")
          a.send_message(ZMQ::Message('x', 'y'))
          expect(b.recv_message.to_a).to eq(%w[x y])
          b.close if i.even? # the others are left to the GC
        end
      ensure
        GC.stress = false
      end
      GC.start
    end

    it 'collects unreferenced sockets and contexts without blocking' do
      t0 = Time.now
      200.times do
        c = ZMQ::Context.new
        s = c.socket(:PUSH)
        s.connect('tcp://127.0.0.1:1') # a pending message and nobody to take it:
        s.send('never delivered')       # the default LINGER would wait forever
      end
      GC.start
      GC.start
      expect(Time.now - t0).to be < 10
    end

    it 'keeps a socket working when its context object is collected' do
      pub = ZMQ::Context.new.socket(:PUB)
      GC.start
      pub.bind(inproc)
      GC.start
      expect(pub.send('test')).to be(true)
      pub.close
    end

    it 'lends frozen strings to the core and lets them go once sent' do
      ep = inproc
      pull = @ctx.bind(:PULL, ep)
      push = @ctx.connect(:PUSH, ep)
      50.times { |i| push.send(("#{i}" * 10_000).freeze) }
      GC.start
      50.times { |i| expect(pull.recv).to eq("#{i}" * 10_000) }
      push.send('flush')
      pull.recv
      expect(ZMQ.__lent_strings).to eq(0)
    end
  end

  describe 'threads' do
    it 'runs other threads while one blocks in recv (GVL released)' do
      ep = inproc
      pull = @ctx.bind(:PULL, ep)
      push = @ctx.connect(:PUSH, ep)
      t = Thread.new { pull.recv }
      counter = 0
      deadline = Time.now + 0.2
      counter += 1 while Time.now < deadline
      expect(counter).to be > 1000
      push.send('late')
      expect(t.value).to eq('late')
    end

    it 'moves messages between threads over inproc' do
      ep = inproc
      pull = @ctx.bind(:PULL, ep)
      producers = Array.new(4) do |n|
        Thread.new do
          push = @ctx.connect(:PUSH, ep)
          250.times { |i| push.send("#{n}:#{i}") }
          push.close
        end
      end
      got = Array.new(1000) { pull.recv }
      producers.each(&:join)
      expect(got.size).to eq(1000)
      expect(got.group_by { |m| m.split(':').first }.transform_values(&:size)).to eq('0' => 250, '1' => 250, '2' => 250, '3' => 250)
    end

    it 'a socket closed by another thread wakes its blocked reader with ENOTSOCK' do
      pull = @ctx.bind(:PULL, inproc)
      t = Thread.new { pull.recv }
      sleep 0.1
      pull.close
      expect { t.value }.to raise_error(Errno::ENOTSOCK)
    end

    it 'Context#destroy wakes blocked threads with ETERM and frees each socket once' do
      ctx = ZMQ::Context.new
      socks = Array.new(4) { |i| ctx.bind(:PULL, "inproc://destroy-#{i}-#{object_id}") }
      threads = socks.map { |s| Thread.new { s.recv } }
      sleep 0.1
      socks[0].close # closed by its owner at the same time
      ctx.destroy
      errors = threads.map { |t| t.value rescue $! } # rubocop:disable Style/RescueModifier
      expect(errors).to all(be_a(ZMQ::Error).or(be_a(Errno::ENOTSOCK)))
      expect(errors.count { |e| e.is_a?(ZMQ::ETERM) }).to be >= 3
      socks.each(&:close)
      GC.start
    end

    it 'survives close/destroy/GC racing from many threads' do
      30.times do
        ctx = ZMQ::Context.new
        socks = Array.new(6) { |i| s = ctx.socket(:PAIR); s.bind("inproc://race-#{i}-#{object_id}"); s }
        ts = socks.map { |s| Thread.new { (s.recv_nonblock rescue nil); s.close } }
        ts << Thread.new { ctx.destroy }
        ts << Thread.new { GC.start }
        ts.each(&:join)
        socks.each { |s| expect { s.send('x') }.to raise_error(Errno::ENOTSOCK) }
      end
    end
  end

  describe 'interrupts' do
    it 'Thread#raise interrupts a blocked recv' do
      pull = @ctx.bind(:PULL, inproc)
      t = Thread.new { pull.recv }
      sleep 0.1
      t.raise(ArgumentError, 'wake up')
      expect { t.value }.to raise_error(ArgumentError, 'wake up')
      expect { pull.recv_nonblock }.not_to raise_error # still usable
    end

    it 'Timeout interrupts a blocked recv and send' do
      pull = @ctx.bind(:PULL, inproc)
      t0 = Time.now
      expect { Timeout.timeout(0.2) { pull.recv } }.to raise_error(Timeout::Error)
      expect(Time.now - t0).to be < 2
      push = @ctx.socket(:PUSH)
      push.sndhwm = 1
      push.connect(inproc) # nobody bound: sends queue up to the HWM, then block
      expect { Timeout.timeout(0.2) { loop { push.send('x') } } }.to raise_error(Timeout::Error)
    end

    it 'Thread#kill ends a blocked recv' do
      pull = @ctx.bind(:PULL, inproc)
      t = Thread.new { pull.recv }
      sleep 0.1
      t.kill
      expect(t.join(2)).to eq(t)
    end

    it 'a signal (SIGINT, as Ctrl-C) raises Interrupt in a blocked recv' do
      # In a child process: RSpec traps SIGINT in its own.
      # 'DEFAULT' (raise Interrupt): a test runner started in the background
      # may hand the child SIGINT ignored.
      script = <<~RUBY
        trap('INT', 'DEFAULT')
        require 'oxmq'
        ctx = ZMQ::Context.new
        pull = ctx.bind(:PULL, 'inproc://sigint')
        $stdout.puts 'blocking'; $stdout.flush
        begin
          pull.recv
        rescue Interrupt
          puts 'interrupted'
        end
        ctx.destroy
      RUBY
      io = IO.popen([RbConfig.ruby, *SpecHelpers.oxmq_load_args, '-e', script], 'r')
      done = false
      begin
        expect(io.gets).to eq("blocking\n")
        sleep 0.2
        Process.kill('INT', io.pid)
        expect(io.gets).to eq("interrupted\n")
        done = true
      ensure
        Process.kill('KILL', io.pid) unless done
        io.close
      end
      expect($?.success?).to be(true)
    end

    it 'a trapped signal runs its handler and the recv carries on' do
      ran = false
      old = trap('USR1') { ran = true }
      ep = inproc
      pull = @ctx.bind(:PULL, ep)
      push = @ctx.connect(:PUSH, ep)
      Thread.new do
        sleep 0.1
        Process.kill('USR1', Process.pid)
        sleep 0.2
        push.send('after signal')
      end
      expect(pull.recv).to eq('after signal')
      expect(ran).to be(true)
    ensure
      trap('USR1', old || 'DEFAULT')
    end
  end

  describe 'fork' do
    def threads_named(prefix)
      Dir.glob('/proc/self/task/*/comm').count do |f|
        File.read(f).start_with?(prefix)
      rescue SystemCallError
        false # the thread has gone
      end
    end

    # Contexts, each with its I/O thread running, left to the GC: made in a
    # method of their own, so that no reference stays on the stack.
    def leave_contexts(n)
      n.times { ZMQ::Context.new.socket(:PUSH).bind('tcp://127.0.0.1:*') }
      nil
    end

    it "drops a fork child's garbage, though the parent's reaper thread is not in the child" do
      # The parent has a reaper (thread names keep 15 characters).
      eventually(10) do
        leave_contexts(2)
        GC.start
        threads_named('oxmq-ruby-reap').positive?
      end
      pid = fork do
        leave_contexts(8)
        running = threads_named('ZMQbg/IO')
        ok = running.positive? && begin
          eventually(10) do
            GC.start
            threads_named('ZMQbg/IO') < running
          end
        rescue RuntimeError
          false
        end
        exit!(ok ? 0 : 1)
      end
      _, status = Process.wait2(pid)
      expect(status.exitstatus).to eq(0), 'the child never dropped its contexts'
    end
  end
end
