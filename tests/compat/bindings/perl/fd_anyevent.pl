#!/usr/bin/perl
# The "nonblocking" example from ZMQ::FFI's own POD (and its t/fd.t): a PULL
# socket's ZMQ_FD watched by AnyEvent on EV, draining while has_pollin; a
# timer sends foo, bar, baz 0.1 s apart through a PUSH socket.
use 5.012;
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use BindTest;
use ZMQ::FFI qw(ZMQ_PUSH ZMQ_PULL);
use AnyEvent;
use EV;

guard_time(30);
my $endpoint = "ipc:///tmp/oxmq-bind-perl-zmq-ffi-$$";
my $ctx      = ZMQ::FFI->new();
report_lib($ctx);
my @messages = qw(foo bar baz);
my @got;

my $pull = $ctx->socket(ZMQ_PULL);
$pull->bind($endpoint);

my $fd = $pull->get_fd();

my $recv = 0;
my $w = AE::io $fd, 0, sub {
    while ( $pull->has_pollin ) {
        push @got, $pull->recv();
        $recv++;
        if ($recv == 3) {
            EV::break();
        }
    }
};

my $push = $ctx->socket(ZMQ_PUSH);
$push->connect($endpoint);

my $sent = 0;
my $t;
$t = AE::timer 0, .1, sub {
    $push->send($messages[$sent]);

    $sent++;
    if ($sent == 3) {
        undef $t;
    }
};

# Fail (instead of hanging) if the fd never fires for a queued message.
my $watchdog = AE::timer 10, 0, sub {
    fail_now("EV loop: only $recv of 3 messages seen (has_pollin now: "
             . ($pull->has_pollin ? 1 : 0) . ')');
};

EV::run();

check("@got" eq 'foo bar baz', "AnyEvent/EV io watcher on ZMQ_FD got [@got]");
undef $w;
$push->close;
$pull->close;
$ctx->destroy;
unlink "/tmp/oxmq-bind-perl-zmq-ffi-$$";
exit 0;
