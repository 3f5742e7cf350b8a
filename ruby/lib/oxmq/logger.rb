# frozen_string_literal: true

require 'logger'

module ZMQ
  # A ::Logger whose every line is sent as one message on a socket
  # (PUB, XPUB, PUSH, DEALER or PAIR).
  class Logger < ::Logger
    class InvalidSocketError < ZMQ::Error; end

    VALID_SOCKET_TYPES = [ZMQ::PUB, ZMQ::XPUB, ZMQ::PUSH, ZMQ::DEALER, ZMQ::PAIR].freeze

    # The log device: one send per line.
    class Device
      def initialize(socket)
        @socket = socket
      end

      def write(line)
        @socket.send(line)
      end

      def close; end
    end

    def initialize(socket, level = ::Logger::DEBUG)
      unless socket.is_a?(ZMQ::Socket) && VALID_SOCKET_TYPES.include?(socket.type)
        raise InvalidSocketError, "#{socket.inspect} cannot carry log lines (use a PUB, XPUB, PUSH, DEALER or PAIR socket)"
      end

      super(nil)
      @logdev = Device.new(socket)
      self.level = level
    end
  end
end
