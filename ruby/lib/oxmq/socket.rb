# frozen_string_literal: true

module ZMQ
  # A ZeroMQ socket, made by Context#socket. #send/#recv work with Strings,
  # #send_frame/#recv_frame with ZMQ::Frame, #send_message/#recv_message
  # with ZMQ::Message. #recv raises on failure (never returns an error code);
  # the *_nonblock variants return nil when nothing is there. Options are
  # accessors (sock.linger = 0, sock.rcvhwm, sock.identity = "x", ...).
  class Socket
    attr_reader :context, :endpoint

    # Bind; returns the port for tcp:// endpoints (ephemeral "*" resolved), else nil.
    def bind(endpoint)
      __bind(endpoint)
      @endpoint = endpoint
      @state = :bound
      last = last_endpoint
      last.start_with?('tcp://') ? last[/:(\d+)\z/, 1].to_i : nil
    end

    # Publish this socket's events (libzmq's zmq_socket_monitor, and with
    # version 2 its draft zmq_socket_monitor_versioned) on a socket of
    # sink_type (:PAIR, :PUB or :PUSH) bound at the inproc:// endpoint; nil
    # stops. Read them with a PAIR (SUB, PULL) connected there and decode
    # each with ZMQ::Monitor.decode(strings, version).
    def monitor(endpoint, events = EVENT_ALL, version = 1, sink_type = :PAIR)
      type = sink_type.is_a?(Integer) ? sink_type : ZMQ::SOCKET_TYPES.fetch(sink_type.to_s.upcase.to_sym)
      __monitor(endpoint, events, version, type)
    end

    def connect(endpoint)
      __connect(endpoint)
      @endpoint = endpoint
      @state = :connected
      true
    end

    def unbind(endpoint)
      __unbind(endpoint)
      true
    end

    def disconnect(endpoint)
      __disconnect(endpoint)
      true
    end

    # send_frame(frame, flags = 0): flags ZMQ::Frame::MORE | REUSE | DONTWAIT,
    # or a Symbol (:MORE, :REUSE, :DONTWAIT). Without REUSE the frame is consumed.
    def send_frame(frame, flags = 0)
      raise TypeError, "expected a ZMQ::Frame, not #{frame.class}" unless frame.is_a?(ZMQ::Frame)

      __send_frame(frame, ZMQ::Frame.flags(flags))
    end

    def type_str
      SOCKET_TYPE_NAMES[type]
    end

    def to_s
      case @state
      when :bound then "#{type_str} socket bound to #{@endpoint}"
      when :connected then "#{type_str} socket connected to #{@endpoint}"
      else "#{type_str} socket"
      end
    end

    def inspect
      "#<ZMQ::Socket:#{type_str}#{closed? ? ' (closed)' : ''}#{@endpoint ? " #{@endpoint}" : ''}>"
    end

    def to_i
      fd
    end

    def readable?
      (events & ZMQ::POLLIN) != 0
    end

    def writable?
      (events & ZMQ::POLLOUT) != 0
    end

    def subscribe(topic)
      setsockopt(ZMQ::SUBSCRIBE, String(topic))
      true
    end

    def unsubscribe(topic)
      setsockopt(ZMQ::UNSUBSCRIBE, String(topic))
      true
    end

    # ZMQ 2's single high-water mark: both directions.
    def hwm=(n)
      self.sndhwm = n
      self.rcvhwm = n
    end

    def hwm
      sndhwm
    end

    # rbczmq's recv/send timeouts in seconds (nil: none); they are
    # RCVTIMEO/SNDTIMEO underneath.
    def recv_timeout
      t = rcvtimeo
      t.negative? ? nil : t / 1000.0
    end

    def recv_timeout=(secs)
      raise TypeError, "timeout must be Numeric, not #{secs.class}" unless secs.nil? || secs.is_a?(Numeric)

      self.rcvtimeo = secs.nil? ? -1 : (secs * 1000).to_i
    end

    def send_timeout
      t = sndtimeo
      t.negative? ? nil : t / 1000.0
    end

    def send_timeout=(secs)
      raise TypeError, "timeout must be Numeric, not #{secs.class}" unless secs.nil? || secs.is_a?(Numeric)

      self.sndtimeo = secs.nil? ? -1 : (secs * 1000).to_i
    end

    # Accepted for rbczmq compatibility (czmq's verbose tracing); no effect.
    attr_writer :verbose

    def verbose
      @verbose || false
    end

    ZMQ::SOCKET_OPTIONS.each do |name, (num, kind)|
      case kind
      when :int
        define_method(name) { getsockopt(num) }
        define_method("#{name}=") do |v|
          raise TypeError, "#{name} must be an Integer, not #{v.class}" unless v.is_a?(Integer)

          setsockopt(num, v)
        end
      when :bool, :bool_w
        if kind == :bool
          define_method(name) { getsockopt(num) != 0 }
          alias_method "#{name}?", name
        end
        define_method("#{name}=") do |v|
          raise TypeError, "#{name} must be true or false, not #{v.class}" unless [true, false].include?(v)

          setsockopt(num, v)
        end
      when :bytes, :bytes_w
        define_method(name) { getsockopt(num) } if kind == :bytes
        define_method("#{name}=") do |v|
          raise TypeError, "#{name} must be a String, not #{v.class}" unless v.is_a?(String)

          setsockopt(num, v)
        end
      when :bytes_r
        define_method(name) { getsockopt(num) }
      end
    end
  end
end
