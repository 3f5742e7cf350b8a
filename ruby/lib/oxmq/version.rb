# frozen_string_literal: true

module ZMQ
  # The gem's version.
  OXMQ_VERSION = '0.1.0'
  # The libzmq API this library implements.
  LIBZMQ_VERSION = [4, 3, 5].freeze

  # [major, minor, patch] of the libzmq API implemented (rbczmq's ZMQ.version).
  def self.version
    LIBZMQ_VERSION
  end
end
