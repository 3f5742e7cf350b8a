#!/usr/bin/perl
# REQ/REP on ZMQ::FFI: a REP server in a forked process (ipc), 1000 round
# trips; the same in-process over inproc and tcp; REQ's state machine
# (a second send before recv fails with EFSM).
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use BindTest;
use POSIX ();
use ZMQ::FFI qw(ZMQ_REQ ZMQ_REP ZMQ_LAST_ENDPOINT ZMQ_LINGER ZMQ_RCVTIMEO);

guard_time(60);
my $N = 1000;
my $ep = ep_ipc('rr');

pipe(my $rd, my $wr) or die "pipe: $!";
my $pid = fork // die "fork: $!";
if ($pid == 0) {
    close $rd;
    my $ctx = ZMQ::FFI->new();
    report_lib($ctx, 'rep server');
    my $rep = $ctx->socket(ZMQ_REP);
    $rep->bind($ep);
    print {$wr} "ready\n";
    close $wr;
    while (1) {
        my $req = $rep->recv();
        if ($req eq 'quit') { $rep->send('bye'); last }
        $rep->send("re:$req");
    }
    # ZMQ::FFI's default LINGER is 0: without this, 'bye' could be dropped
    # by close before it has left.
    $rep->set_linger(-1);
    $rep->close;
    $ctx->destroy;
    POSIX::_exit(0);
}
close $wr;
<$rd>;    # server bound
my $ctx = ZMQ::FFI->new();
report_lib($ctx, 'req client');
my $req = $ctx->socket(ZMQ_REQ);
$req->connect($ep);
for my $i (1 .. $N) {
    $req->send("hello $i");
    my $r = $req->recv();
    fail_now("round trip $i: got '$r'") unless $r eq "re:hello $i";
}
check(1, "$N round trips with a REP in another process over ipc");
$req->send('quit');
check($req->recv() eq 'bye', 'server said bye');
waitpid($pid, 0);
check($? == 0, "rep server exited 0");
$req->close;

# In-process over inproc and tcp.
for my $addr ("inproc://rr-$$", 'tcp://127.0.0.1:*') {
    my $rep = $ctx->socket(ZMQ_REP);
    $rep->bind($addr);
    my $e = $rep->get(ZMQ_LAST_ENDPOINT, 'string');
    $e =~ s/\0.*//s;
    my $rq = $ctx->socket(ZMQ_REQ);
    $rq->connect($e);
    for my $i (1 .. 200) {
        $rq->send("q$i");
        my $q = $rep->recv();
        $rep->send(uc $q);
        my $a = $rq->recv();
        fail_now("$addr: round trip $i got '$a'") unless $a eq uc "q$i";
    }
    check(1, "200 round trips in-process over $e");

    # EFSM: REQ may not send twice in a row.
    $rq->send('once');
    $rq->die_on_error(0);
    $rq->send('twice');
    my $errno = $rq->last_errno;
    check($errno == 156384763, "second send on REQ fails with EFSM ($errno)");
    $rq->die_on_error(1);
    check($rep->recv() eq 'once', 'REP got the first request only');

    # (REP holds an unanswered request: close both without lingering.)
    $rq->set(ZMQ_LINGER, 'int', 0);
    $rep->set(ZMQ_LINGER, 'int', 0);
    $rq->close;
    $rep->close;
}

{
    my $rq = $ctx->socket(ZMQ_REQ);
    $rq->set(ZMQ_RCVTIMEO, 'int', 100);
    check($rq->get(ZMQ_RCVTIMEO, 'int') == 100, 'RCVTIMEO reads back 100');
    $rq->set(ZMQ_LINGER, 'int', 0);
    $rq->connect(ep_ipc('nobody'));
    $rq->send('anyone?');
    $rq->die_on_error(0);
    my $t0 = Time::HiRes::time();
    my $r = $rq->recv();
    my $dt = Time::HiRes::time() - $t0;
    check(!defined $r && $rq->last_errno == POSIX::EAGAIN() && $dt > 0.05 && $dt < 5,
          sprintf('recv with RCVTIMEO=100 and no peer: EAGAIN after %.3fs', $dt));
    $rq->close;
}

$ctx->destroy;
unlink glob("/tmp/oxmq-bind-perl-$$-*");
print "reqrep: all ok\n";
exit 0;
