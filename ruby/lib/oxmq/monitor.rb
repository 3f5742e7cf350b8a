# frozen_string_literal: true

module ZMQ
  # Decoding the events Socket#monitor publishes.
  module Monitor
    # One event. routing_id is the peer's (version 2, where oxmq knows it),
    # else nil; version 1 has only local (libzmq's single endpoint).
    Event = Struct.new(:event, :value, :values, :local, :remote, :routing_id)

    # strings: the frames of one event (e.g. from recv_message's frames).
    # Version 1: a 6-byte u16 id + u32 value, and an endpoint. Version 2
    # (libzmq's draft layout): u64 id, u64 count, count u64 values, local
    # and remote endpoints; oxmq appends the routing id after the first
    # value as its length and then its bytes, 8 per value.
    def self.decode(strings, version = 1)
      return decode_v1(strings) if version == 1

      bad = -> { raise ArgumentError, "not a version-2 monitor event: #{strings.inspect}" }
      bad.call if strings.size < 4 || strings[0].bytesize != 8 || strings[1].bytesize != 8
      event = strings[0].unpack1('Q')
      count = strings[1].unpack1('Q')
      bad.call unless strings.size == 4 + count && strings[2, count].all? { |v| v.bytesize == 8 }
      values = strings[2, count].map { |v| v.unpack1('Q') }
      routing_id = nil
      if count >= 2
        raw = strings[4, count - 2].join.b
        bad.call unless raw.bytesize == (values[1] + 7) / 8 * 8
        routing_id = raw.byteslice(0, values[1])
      end
      Event.new(event, values[0], values, strings[2 + count], strings[3 + count], routing_id)
    end

    def self.decode_v1(strings)
      unless strings.size == 2 && strings[0].bytesize == 6
        raise ArgumentError, "not a version-1 monitor event: #{strings.inspect}"
      end

      event, value = strings[0].unpack('SL')
      Event.new(event, value, [value], strings[1], nil, nil)
    end
  end
end
