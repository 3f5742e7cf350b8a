# frozen_string_literal: true

module ZMQ
  # A context: sockets are made from it; #destroy closes them all (with the
  # context's #linger, 0 unless set, as czmq) and terminates it.
  class Context
    def self.new(io_threads = 1)
      ctx = __new
      ctx.iothreads = io_threads if io_threads != 1
      ctx
    end

    # A socket of `type`: ZMQ::REQ, :REQ, :req or "REQ".
    def socket(type)
      s = __socket(ZMQ.socket_type(type))
      s.instance_variable_set(:@context, self)
      s
    end

    # A socket of `type` bound to `endpoint` (rbczmq).
    def bind(type, endpoint)
      s = socket(type)
      s.bind(endpoint)
      s
    end

    # A socket of `type` connected to `endpoint` (rbczmq).
    def connect(type, endpoint)
      s = socket(type)
      s.connect(endpoint)
      s
    end

    def iothreads=(n)
      __set(ZMQ::IO_THREADS, Integer(n))
    end

    def iothreads
      __get(ZMQ::IO_THREADS)
    end

    alias term destroy
  end

  # The process-wide default context (rbczmq's ZMQ.context).
  def self.context
    @context = Context.new if @context.nil? || @context.destroyed?
    @context
  end

  # The socket type number for an Integer, Symbol or String.
  def self.socket_type(type)
    case type
    when Integer
      raise ZMQ::Error.for_errno(Errno::EINVAL::Errno, "Invalid argument: unknown socket type #{type}") unless SOCKET_TYPE_NAMES[type] && type >= 0

      type
    when Symbol, String
      SOCKET_TYPES.fetch(type.to_s.upcase.to_sym) do
        raise ZMQ::Error.for_errno(Errno::EINVAL::Errno, "Invalid argument: unknown socket type #{type.inspect}")
      end
    else
      raise TypeError, "socket type must be an Integer, Symbol or String, not #{type.class}"
    end
  end
end
