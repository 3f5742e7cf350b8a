#!/usr/bin/perl
# The Perl half of the mixed test: ZMQ::FFI, unchanged, on whatever libzmq
# FFI::CheckLib finds (run.sh: FFI_CHECKLIB_PATH=<oxmq lib dir>).
#   peer.pl PUSH_EP REP_EP SUB_EP
# 1. PUSH (connect) -> python PULL: 1000 single-part + 100 multipart messages
# 2. REP (bind) <- python REQ: answers until "quit"
# 3. SUB (connect, "A") <- python PUB: 20 filtered updates, then reports
#    "SUBDONE <n>" over the PUSH socket.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/../perl/lib";
use BindTest;
use ZMQ::FFI qw(ZMQ_PUSH ZMQ_REP ZMQ_SUB);

guard_time(60);
my ($push_ep, $rep_ep, $sub_ep) = @ARGV;
die "usage: $0 PUSH_EP REP_EP SUB_EP\n" unless $sub_ep;

my $ctx = ZMQ::FFI->new();
report_lib($ctx, 'perl peer');

my $push = $ctx->socket(ZMQ_PUSH);
$push->connect($push_ep);
$push->send("perl $_") for 1 .. 1000;
$push->send_multipart(["mp $_", '', "\0bin\0", 'x' x 5000]) for 1 .. 100;

my $rep = $ctx->socket(ZMQ_REP);
$rep->bind($rep_ep);
my $n = 0;
while (1) {
    my @req = $rep->recv_multipart;
    if ($req[0] eq 'quit') { $rep->send('bye'); last }
    $rep->send_multipart([ map { "perl:$_" } @req ]);
    $n++;
}
print "perl peer: answered $n requests\n";

my $sub = $ctx->socket(ZMQ_SUB);
$sub->connect($sub_ep);
$sub->subscribe('A');
my $got = 0;
while ($got < 20) {
    my $m = $sub->recv;
    BindTest::fail_now("unfiltered '$m'") unless $m =~ /^A /;
    $got++;
}
$push->send("SUBDONE $got");
print "perl peer: received $got filtered updates\n";

# ZMQ::FFI sets LINGER=0 on every new socket (its documented default), which
# would discard SUBDONE if it has not left yet: linger until it is delivered.
$push->set_linger(-1);
$_->close for $sub, $rep, $push;
$ctx->destroy;
exit 0;
