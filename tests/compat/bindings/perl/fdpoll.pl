#!/usr/bin/perl
# ZMQ_FD / ZMQ_EVENTS on ZMQ::FFI, the way its fd test and event-loop users
# drive it: wait on ->get_fd with IO::Select (level readiness of an
# edge-triggered signal), then drain while ->has_pollin. A missed edge (select
# times out while EVENTS says a message is waiting) is a failure.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use BindTest;
use IO::Select;
use Time::HiRes qw(time sleep);
use ZMQ::FFI qw(ZMQ_PUSH ZMQ_PULL ZMQ_REQ ZMQ_REP ZMQ_EVENTS ZMQ_POLLIN
                ZMQ_POLLOUT ZMQ_LINGER);

guard_time(60);
my $ctx = ZMQ::FFI->new();
report_lib($ctx);

# 1. PULL woken through its fd; a timer-driven PUSH sends 3 messages 0.1s apart.
{
    my $ep = ep_ipc('fd');
    my $push = $ctx->socket(ZMQ_PUSH);
    $push->connect($ep);
    my $pull = $ctx->socket(ZMQ_PULL);
    $pull->bind($ep);
    my $fd = $pull->get_fd();
    check($fd =~ /^\d+$/ && $fd > 2, "PULL ZMQ_FD is a file descriptor ($fd)");
    my $sel = IO::Select->new($fd);
    my @messages = qw(foo bar baz);
    my (@got, $sent);
    $sent = 0;
    my $next_send = time + 0.1;
    my $deadline = time + 10;
    while (@got < 3) {
        fail_now('timed out waiting for 3 messages') if time > $deadline;
        if ($sent < 3 && time >= $next_send) {
            $push->send($messages[$sent++]);
            $next_send = time + 0.1;
        }
        while ($pull->has_pollin) { push @got, $pull->recv() }
        last if @got == 3;
        my $wait = $sent < 3 ? $next_send - time : 2;
        $wait = 0 if $wait < 0;
        my @ready = $sel->can_read($wait);
        if (!@ready && $sent == 3 && @got < 3) {
            fail_now('missed edge: fd not readable but EVENTS has POLLIN') if $pull->has_pollin;
            fail_now('stalled: all sent, fd never readable, nothing received');
        }
    }
    check("@got" eq 'foo bar baz', "fd-driven PULL received [@got]");
    $_->set(ZMQ_LINGER, 'int', 0) for $push, $pull;
    $push->close;
    $pull->close;
}

# 2. REQ and REP both driven only by their fds, 200 exchanges over tcp.
{
    my $rep = $ctx->socket(ZMQ_REP);
    $rep->bind('tcp://127.0.0.1:*');
    my $ep = $rep->get(ZMQ::FFI::Constants::ZMQ_LAST_ENDPOINT(), 'string');
    $ep =~ s/\0.*//s;
    my $req = $ctx->socket(ZMQ_REQ);
    $req->connect($ep);
    my $sel = IO::Select->new($rep->get_fd, $req->get_fd);
    my ($done, $to_send, $pending_reply) = (0, 1, 0);
    my $N = 200;
    my $deadline = time + 20;
    while ($done < $N) {
        fail_now("timed out after $done exchanges") if time > $deadline;
        my $progress = 1;
        while ($progress) {
            $progress = 0;
            my $ev_req = $req->get(ZMQ_EVENTS, 'int');
            my $ev_rep = $rep->get(ZMQ_EVENTS, 'int');
            if ($to_send && ($ev_req & ZMQ_POLLOUT)) {
                $req->send("ping $done");
                ($to_send, $progress) = (0, 1);
            }
            if ($ev_rep & ZMQ_POLLIN) {
                my $m = $rep->recv();
                $rep->send("pong " . substr($m, 5));
                $progress = 1;
            }
            if ($ev_req & ZMQ_POLLIN) {
                my $r = $req->recv();
                fail_now("exchange $done: got '$r'") unless $r eq "pong $done";
                $done++;
                $to_send = $done < $N;
                $progress = 1;
            }
        }
        last if $done == $N;
        my @ready = $sel->can_read(2);
        unless (@ready) {
            my $ev = $req->get(ZMQ_EVENTS, 'int') | $rep->get(ZMQ_EVENTS, 'int');
            fail_now("missed edge after $done exchanges (EVENTS=$ev but no fd readable)")
                if $ev & ZMQ_POLLIN;
            fail_now("stalled after $done exchanges");
        }
    }
    check(1, "$N REQ/REP exchanges driven only by ZMQ_FD + ZMQ_EVENTS");
    $req->close;
    $rep->close;
}

# 3. POLLOUT: a bound PUSH with no peer cannot send; it can once a PULL connects.
{
    my $ep = ep_ipc('out');
    my $push = $ctx->socket(ZMQ_PUSH);
    $push->bind($ep);
    check(!$push->has_pollout, 'PUSH without peers has no POLLOUT');
    my $pull = $ctx->socket(ZMQ_PULL);
    $pull->connect($ep);
    check(wait_until(5, sub { $push->has_pollout }), 'PUSH gets POLLOUT once a PULL connects');
    $push->send('x');
    check(wait_until(5, sub { $pull->has_pollin }), 'and the message arrives');
    check($pull->recv eq 'x' && !$pull->has_pollin, 'drained: no more POLLIN');
    $push->close;
    $pull->close;
}

# 4. A zmq fd in the same IO::Select as a plain pipe.
{
    pipe(my $prd, my $pwr) or die;
    my $pull = $ctx->socket(ZMQ_PULL);
    $pull->bind("inproc://mix-$$");
    my $push = $ctx->socket(ZMQ_PUSH);
    $push->connect("inproc://mix-$$");
    my $sel = IO::Select->new($prd, $pull->get_fd);
    syswrite $pwr, "p";
    my %seen;
    my $deadline = time + 5;
    $push->send('z');
    while (keys %seen < 2 && time < $deadline) {
        $pull->has_pollin and $seen{zmq} = $pull->recv;
        last if keys %seen == 2;
        for my $h ($sel->can_read(1)) {
            if (ref $h) { sysread $prd, $seen{pipe}, 1 }
        }
    }
    check(($seen{zmq} // '') eq 'z' && ($seen{pipe} // '') eq 'p',
          'zmq fd and a pipe served by one IO::Select');
    $push->close;
    $pull->close;
}

$ctx->destroy;
unlink glob("/tmp/oxmq-bind-perl-$$-*");
print "fdpoll: all ok\n";
exit 0;
