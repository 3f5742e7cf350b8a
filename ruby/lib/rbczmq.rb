# frozen_string_literal: true

# Programs written for rbczmq run unchanged on oxmq.
require 'oxmq'
