# frozen_string_literal: true

require 'timeout'
require 'rbczmq'

module SpecHelpers
  # How a child Ruby finds oxmq: the source tree's lib/ (with the extension
  # `make ruby-so` put there), or, when make ruby-test runs the installed gem
  # (OXMQ_EXPECT_GEM_HOME), nothing: the child inherits GEM_HOME/GEM_PATH.
  def self.oxmq_load_args
    ENV['OXMQ_EXPECT_GEM_HOME'] ? [] : ['-I', File.expand_path('../lib', __dir__)]
  end

  # A fresh inproc endpoint name.
  def inproc(tag = 'ep')
    @inproc_seq = (@inproc_seq || 0) + 1
    "inproc://spec-#{tag}-#{Process.pid}-#{object_id}-#{@inproc_seq}"
  end

  # Wait until the block is truthy (connections are made in the background).
  def eventually(limit = 5)
    deadline = Time.now + limit
    loop do
      v = yield
      return v if v
      raise 'condition not met in time' if Time.now > deadline

      sleep 0.01
    end
  end
end

Thread.report_on_exception = false

RSpec.configure do |c|
  c.include SpecHelpers
  # No example may hang the suite: a stuck call must be interruptible, and
  # this proves it on every example.
  c.around(:each) { |ex| Timeout.timeout(30) { ex.run } }
  c.before(:each) { @ctx = ZMQ::Context.new }
  c.after(:each) { @ctx.destroy }
  c.before(:suite) do
    so = $LOADED_FEATURES.grep(/oxmq\.so\z/).first
    warn "oxmq extension: #{so}"
    # make ruby-test runs the gem installed from the built .gem into a
    # throwaway GEM_HOME (mk/ruby.mk); anything else loaded would be untested.
    home = ENV['OXMQ_EXPECT_GEM_HOME']
    if home && !File.realpath(so.to_s).start_with?(File.realpath(home) + '/')
      abort "oxmq extension #{so.inspect} is not the gem installed in #{home}"
    end
  end
end
