# frozen_string_literal: true

require_relative 'lib/oxmq/version'

# A platform gem: `make ruby` compiles the extension (Rust, ext/oxmq) into
# lib/oxmq/oxmq.so first, so installing needs neither a compiler nor the network.
Gem::Specification.new do |s|
  s.name = 'oxmq'
  s.version = ZMQ::OXMQ_VERSION
  s.platform = Gem::Platform.local
  s.summary = 'ZeroMQ in Rust, with the rbczmq API (require "oxmq" or "rbczmq")'
  s.description = 'A native Ruby binding of oxmq, a ZeroMQ implementation in Rust. ' \
                  'Blocking calls release the GVL and are interruptible; sockets closed ' \
                  'by GC, context termination or other threads are never freed twice.'
  s.authors = ['oxmq developers']
  s.license = 'MPL-2.0'
  s.homepage = 'https://example.invalid/oxmq'
  s.files = Dir['lib/**/*.rb'] + ['lib/oxmq/oxmq.so']
  s.require_paths = ['lib']
  # The extension is built against this Ruby's ABI.
  s.required_ruby_version = "~> #{RUBY_VERSION[/\A\d+\.\d+/]}.0"
end
