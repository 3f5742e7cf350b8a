# frozen_string_literal: true

module ZMQ
  # Marks the Errno::* exceptions this gem raises, so that `rescue ZMQ::Error`
  # catches them as well.
  module ErrnoError; end

  # Every failure of this gem. libzmq's own errno values raise the subclasses
  # below (ZMQ::ETERM, ZMQ::EFSM, ...); POSIX ones raise Errno::* (EINVAL,
  # EAGAIN, ENOTSOCK, EADDRINUSE, EPROTONOSUPPORT, ...), which
  # `rescue ZMQ::Error` also catches.
  class Error < StandardError
    attr_reader :errno

    def initialize(message = nil, errno = nil)
      super(message)
      @errno = errno
    end

    def self.===(other)
      super || (self == ZMQ::Error && ZMQ::ErrnoError === other)
    end

    # The exception for a libzmq errno value (called by the extension).
    def self.for_errno(errno, message)
      if (cls = ZMQ_ERRNO_CLASSES[errno])
        cls.new(message, errno)
      else
        e = SystemCallError.new(nil, errno)
        e = SystemCallError.new(message, errno) unless e.message == message
        e.extend(ZMQ::ErrnoError)
        e
      end
    end
  end

  HAUSNUMERO = 156_384_712
  # libzmq's errno values that POSIX does not have.
  class EFSM < Error; end
  class ENOCOMPATPROTO < Error; end
  class ETERM < Error; end
  class EMTHREAD < Error; end
  ZMQ_ERRNO_CLASSES = {
    HAUSNUMERO + 51 => EFSM, HAUSNUMERO + 52 => ENOCOMPATPROTO,
    HAUSNUMERO + 53 => ETERM, HAUSNUMERO + 54 => EMTHREAD
  }.freeze
end
