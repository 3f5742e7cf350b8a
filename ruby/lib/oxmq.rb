# frozen_string_literal: true

# oxmq: ZeroMQ in Rust, with rbczmq's Ruby API.
#
#   require 'oxmq'            # or: require 'rbczmq'
#   ctx = ZMQ::Context.new
#   rep = ctx.socket(:REP)
#   port = rep.bind("tcp://127.0.0.1:*")
#
# The native extension (ext/oxmq, Rust) carries every message; this file and
# lib/oxmq/*.rb add what is pure API: constants, symbols, option accessors,
# ZMQ::Poller, ZMQ::Logger and the exception classes.
require 'oxmq/oxmq'
require 'oxmq/version'
require 'oxmq/constants'
require 'oxmq/error'
require 'oxmq/context'
require 'oxmq/socket'
require 'oxmq/monitor'
require 'oxmq/frame'
require 'oxmq/poller'
require 'oxmq/logger'
