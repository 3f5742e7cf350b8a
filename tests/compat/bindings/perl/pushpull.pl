#!/usr/bin/perl
# PUSH/PULL on ZMQ::FFI: ordered delivery of varied sizes over tcp, ipc and
# inproc; load balancing across two PULLs; fair queueing from two PUSHes;
# non-blocking recv on an empty queue reports EAGAIN.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use BindTest;
use ZMQ::FFI qw(ZMQ_PUSH ZMQ_PULL ZMQ_LAST_ENDPOINT ZMQ_DONTWAIT ZMQ_LINGER);
use POSIX qw(EAGAIN);

guard_time(60);
my $ctx = ZMQ::FFI->new();
report_lib($ctx);

sub last_ep {
    my ($s) = @_;
    my $e = $s->get(ZMQ_LAST_ENDPOINT, 'string');
    $e =~ s/\0.*//s;
    return $e;
}

for my $transport (qw(tcp ipc inproc)) {
    my $pull = $ctx->socket(ZMQ_PULL);
    my $addr = $transport eq 'tcp'   ? 'tcp://127.0.0.1:*'
             : $transport eq 'ipc'   ? ep_ipc('pp')
             :                         "inproc://pp-$$";
    $pull->bind($addr);
    my $ep = $transport eq 'tcp' ? last_ep($pull) : $addr;
    my $push = $ctx->socket(ZMQ_PUSH);
    $push->connect($ep);
    my @sizes = (0, 1, 7, 100, 255, 256, 8192, 100_000, 1_000_000);
    my $n = 900;    # below the default HWM: all are queued before the first recv
    for my $i (0 .. $n - 1) {
        my $sz = $sizes[$i % @sizes];
        my $body = $sz ? substr(sprintf('%08d', $i) x (1 + $sz / 8), 0, $sz) : '';
        $push->send($body);
    }
    for my $i (0 .. $n - 1) {
        my $sz = $sizes[$i % @sizes];
        my $want = $sz ? substr(sprintf('%08d', $i) x (1 + $sz / 8), 0, $sz) : '';
        my $got = $pull->recv();
        if ($got ne $want) {
            fail_now("$transport: message $i: got " . length($got) . " bytes, want $sz");
        }
    }
    check(1, "$transport: $n messages in order, sizes 0..1MB");
    $pull->set(ZMQ_LINGER, 'int', 0);
    $push->set(ZMQ_LINGER, 'int', 0);
    $push->close;
    $pull->close;
}

# Empty queue + DONTWAIT -> EAGAIN (die_on_error off to read last_errno).
{
    my $pull = $ctx->socket(ZMQ_PULL);
    $pull->bind("inproc://empty-$$");
    $pull->die_on_error(0);
    my $r = $pull->recv(ZMQ_DONTWAIT);
    check(!defined $r && $pull->last_errno == EAGAIN,
          "DONTWAIT recv on empty PULL gives EAGAIN (errno " . $pull->last_errno . ")");
    $pull->die_on_error(1);
    $pull->close;
}

# Load balancing: one bound PUSH, two connected PULLs.
{
    my $push = $ctx->socket(ZMQ_PUSH);
    $push->bind(ep_ipc('lb'));
    my @pulls = map { my $s = $ctx->socket(ZMQ_PULL); $s->connect(ep_ipc('lb')); $s } 1 .. 2;
    Time::HiRes::sleep(0.3);    # both connections up
    $push->send("m$_") for 1 .. 100;
    my @count = (0, 0);
    my $got = 0;
    wait_until(10, sub {
        for my $k (0, 1) {
            while ($pulls[$k]->has_pollin) { $pulls[$k]->recv; $count[$k]++; $got++ }
        }
        $got == 100;
    });
    check($got == 100 && $count[0] > 0 && $count[1] > 0,
          "load balanced 100 messages over 2 PULLs: @count");
    $_->close for @pulls;
    $push->close;
}

# Fair queueing: two PUSHes into one PULL.
{
    my $pull = $ctx->socket(ZMQ_PULL);
    $pull->bind(ep_ipc('fq'));
    my @push = map { my $s = $ctx->socket(ZMQ_PUSH); $s->connect(ep_ipc('fq')); $s } 1 .. 2;
    for my $i (1 .. 50) { $push[0]->send("a$i"); $push[1]->send("b$i") }
    my (%seen, @order);
    for (1 .. 100) { my $m = $pull->recv; push @order, $m; $seen{substr $m, 0, 1}++ }
    my @a = grep { /^a/ } @order;
    check($seen{a} == 50 && $seen{b} == 50 && "@a" eq join(' ', map {"a$_"} 1 .. 50),
          "fair-queued 2x50 from two PUSHes, per-peer order kept");
    $_->close for @push;
    $pull->close;
}

$ctx->destroy;
unlink glob("/tmp/oxmq-bind-perl-$$-*");
print "pushpull: all ok\n";
exit 0;
