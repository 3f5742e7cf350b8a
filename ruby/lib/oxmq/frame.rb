# frozen_string_literal: true

module ZMQ
  # One frame of a message (czmq's zframe).
  class Frame
    MORE = 1
    REUSE = 2
    DONTWAIT = 4

    def self.new(data = nil)
      raise TypeError, "frame data must be a String, not #{data.class}" unless data.nil? || data.is_a?(String)

      __new(data)
    end

    # Frame send flags from an Integer or Symbol(s).
    def self.flags(flags)
      case flags
      when Integer then flags
      when Symbol then const_get(flags.to_s.upcase)
      when Array then flags.sum { |f| self.flags(f) }
      when nil then 0
      else raise TypeError, "frame flags must be an Integer or Symbol, not #{flags.class}"
      end
    rescue NameError
      raise ZMQ::Error.for_errno(Errno::EINVAL::Errno, "Invalid argument: unknown frame flag #{flags.inspect}")
    end

    alias eql? ==
    alias to_s data
    alias to_str data

    def hash
      data.hash
    end

    def inspect
      destroyed? ? '#<ZMQ::Frame (destroyed)>' : "ZMQ::Frame(#{data.inspect})"
    end
  end

  # A message: a list of frames (czmq's zmsg). push/pushstr prepend,
  # add/addstr append, pop/popstr take from the front.
  class Message
    include Enumerable

    def self.new
      __new
    end

    def each(&block)
      frames.each(&block)
    end

    alias eql? ==

    def inspect
      "ZMQ::Message(#{to_a.map(&:inspect).join(', ')})"
    end
  end

  # ZMQ::Frame("data")
  def self.Frame(data = nil) # rubocop:disable Naming/MethodName
    Frame.new(data)
  end

  # ZMQ::Message("a", "b"): a message with those frames.
  def self.Message(*parts) # rubocop:disable Naming/MethodName
    m = Message.new
    parts.each { |p| m.addstr(p) }
    m
  end
end
