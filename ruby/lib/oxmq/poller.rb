# frozen_string_literal: true

module ZMQ
  # What a Poller watches: a ZMQ::Socket, an IO (or anything with #fileno)
  # or a raw descriptor, and the events of interest.
  class Pollitem
    attr_reader :pollable, :events

    def self.coerce(pollable, events = nil)
      return pollable if pollable.is_a?(Pollitem) && events.nil?

      new(pollable.is_a?(Pollitem) ? pollable.pollable : pollable, events)
    end

    def initialize(pollable, events = nil)
      events ||= ZMQ::POLLIN | ZMQ::POLLOUT
      raise TypeError, "events must be an Integer, not #{events.class}" unless events.is_a?(Integer)
      unless pollable.is_a?(ZMQ::Socket) || pollable.is_a?(Integer) || pollable.respond_to?(:fileno)
        raise TypeError, "#{pollable.class} cannot be polled (expected a ZMQ::Socket, an IO or a descriptor)"
      end
      if events.zero? || (events & ~(ZMQ::POLLIN | ZMQ::POLLOUT)) != 0
        raise ZMQ::Error.for_errno(Errno::EINVAL::Errno, "Invalid argument: poll events #{events}")
      end

      @pollable = pollable
      @events = events
    end

    # What ZMQ.__poll takes: the socket, or the descriptor.
    def target
      case @pollable
      when ZMQ::Socket, Integer then @pollable
      else @pollable.fileno
      end
    end
  end

  def self.Pollitem(pollable, events = nil) # rubocop:disable Naming/MethodName
    Pollitem.new(pollable, events)
  end

  # Level-triggered multiplexing over sockets and IOs (rbczmq's ZMQ::Poller).
  # The wait releases the GVL and is interruptible.
  class Poller
    attr_reader :readables, :writables
    attr_accessor :verbose

    def initialize
      @items = []
      @readables = []
      @writables = []
    end

    def size
      @items.size
    end

    # Watch `pollable` for `events` (default POLLIN | POLLOUT); true.
    def register(pollable, events = nil)
      item = Pollitem.coerce(pollable, events)
      raise ZMQ::Error.for_errno(Errno::ENOTSOCK::Errno, nil) if item.pollable.is_a?(ZMQ::Socket) && item.pollable.closed?

      @items.reject! { |i| i.pollable.equal?(item.pollable) }
      @items << item
      true
    end

    def register_readable(pollable)
      register(pollable, ZMQ::POLLIN)
    end

    def register_writable(pollable)
      register(pollable, ZMQ::POLLOUT)
    end

    # Stop watching a pollable (or a Pollitem's); whether it was registered.
    def remove(pollable)
      target = pollable.is_a?(Pollitem) ? pollable.pollable : pollable
      !@items.reject! { |i| i.pollable.equal?(target) || i.equal?(pollable) }.nil?
    end

    # Wait up to `timeout` seconds (Integer or Float; -1: forever; default 0)
    # and return how many pollables are ready; see #readables and #writables.
    def poll(timeout = 0)
      timeout = 0 if timeout.nil?
      raise TypeError, "wrong timeout type #{timeout.inspect} (expected Integer or Float)" unless timeout.is_a?(Integer) || timeout.is_a?(Float)

      @readables = []
      @writables = []
      return 0 if @items.empty?

      ms = timeout.negative? ? -1 : (timeout * 1000).ceil
      revents = ZMQ.__poll(@items.map { |i| [i.target, i.events] }, ms)
      ready = 0
      @items.each_with_index do |item, idx|
        ev = revents[idx]
        next if ev.zero?

        ready += 1
        @readables << item.pollable if (ev & ZMQ::POLLIN) != 0
        @writables << item.pollable if (ev & ZMQ::POLLOUT) != 0
      end
      ready
    end

    def poll_nonblock
      poll(0)
    end
  end
end
