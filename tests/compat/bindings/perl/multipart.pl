#!/usr/bin/perl
# Multipart messages on ZMQ::FFI (send_multipart / recv_multipart):
# DEALER with an identity -> ROUTER (identity frame prepended), ROUTER reply
# routed back by identity, empty and binary (NUL-bearing) frames, large
# frames, many frames, PUSH/PULL and PUB/SUB multipart, RCVMORE.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use BindTest;
use ZMQ::FFI qw(ZMQ_DEALER ZMQ_ROUTER ZMQ_PUSH ZMQ_PULL ZMQ_PUB ZMQ_SUB
                ZMQ_RCVMORE ZMQ_LINGER ZMQ_SNDMORE ZMQ_LAST_ENDPOINT);

guard_time(60);
my $ctx = ZMQ::FFI->new();
report_lib($ctx);

sub same {
    my ($got, $want) = @_;
    return 0 unless @$got == @$want;
    for my $i (0 .. $#$want) { return 0 unless $got->[$i] eq $want->[$i] }
    return 1;
}

for my $addr (ep_ipc('rd'), 'tcp://127.0.0.1:*', "inproc://rd-$$") {
    my $r = $ctx->socket(ZMQ_ROUTER);
    $r->bind($addr);
    my $e = $r->get(ZMQ_LAST_ENDPOINT, 'string');
    $e =~ s/\0.*//s;
    my $d = $ctx->socket(ZMQ_DEALER);
    $d->set_identity('dealer');
    check($d->get_identity eq 'dealer', 'identity reads back');
    $d->connect($e);

    $d->send_multipart([qw(ABC DEF GHI)]);
    my @got = $r->recv_multipart;
    check(same(\@got, [qw(dealer ABC DEF GHI)]), "$e: ROUTER got [@got]");

    my @parts = ('', "bin\0ary\0", 'x' x 70_000, '', 'last');
    $r->send_multipart(['dealer', @parts]);
    @got = $d->recv_multipart;
    check(same(\@got, \@parts), "$e: reply routed back by identity, 5 frames incl. empty/binary/70kB");

    my @many = map { "frame$_" } 1 .. 200;
    $d->send_multipart(\@many);
    @got = $r->recv_multipart;
    check(same(\@got, ['dealer', @many]), "$e: 200-frame message");

    # Frame by frame with explicit SNDMORE and RCVMORE.
    $d->send('one', ZMQ_SNDMORE);
    $d->send('two');
    my $id = $r->recv;
    check($r->get(ZMQ_RCVMORE, 'int') == 1, 'RCVMORE after identity');
    my $one = $r->recv;
    check($one eq 'one' && $r->get(ZMQ_RCVMORE, 'int') == 1, 'RCVMORE after first frame');
    my $two = $r->recv;
    check($two eq 'two' && $r->get(ZMQ_RCVMORE, 'int') == 0, 'no RCVMORE after last frame');

    $_->set(ZMQ_LINGER, 'int', 0) for $r, $d;
    $d->close;
    $r->close;
}

# Two DEALERs with identities: ROUTER routes each reply to the right one.
{
    my $r = $ctx->socket(ZMQ_ROUTER);
    $r->bind("inproc://two-$$");
    my %d;
    for my $name (qw(alice bob)) {
        $d{$name} = $ctx->socket(ZMQ_DEALER);
        $d{$name}->set_identity($name);
        $d{$name}->connect("inproc://two-$$");
        $d{$name}->send_multipart(['', "hi from $name"]);
    }
    for (1 .. 2) {
        my ($who, $empty, $body) = $r->recv_multipart;
        check($body eq "hi from $who" && $empty eq '', "ROUTER got envelope from $who");
        $r->send_multipart([$who, '', "hello $who"]);
    }
    for my $name (qw(alice bob)) {
        my @m = $d{$name}->recv_multipart;
        check(same(\@m, ['', "hello $name"]), "$name got its own reply");
        $d{$name}->close;
    }
    $r->close;
}

# PUSH/PULL and PUB/SUB multipart (topic in the first frame).
{
    my $pull = $ctx->socket(ZMQ_PULL);
    $pull->bind(ep_ipc('mp'));
    my $push = $ctx->socket(ZMQ_PUSH);
    $push->connect(ep_ipc('mp'));
    $push->send_multipart([ "k$_", "v$_", '' ]) for 1 .. 100;
    my $ok = 1;
    for (1 .. 100) { my @m = $pull->recv_multipart; $ok &&= same(\@m, ["k$_", "v$_", '']) }
    check($ok, 'PUSH/PULL: 100 three-frame messages');
    $push->close;
    $pull->close;

    my $pub = $ctx->socket(ZMQ_PUB);
    $pub->bind("inproc://ps-$$");
    my $sub = $ctx->socket(ZMQ_SUB);
    $sub->connect("inproc://ps-$$");
    $sub->subscribe('topic.a');
    wait_until(5, sub { $pub->send_multipart(['topic.a', 'probe']); $sub->has_pollin });
    while ($sub->has_pollin) { $sub->recv_multipart }
    $pub->send_multipart(['topic.b', 'nope']);
    $pub->send_multipart(['topic.a', 'yes', 'more']);
    my @m = $sub->recv_multipart;
    check(same(\@m, ['topic.a', 'yes', 'more']), 'SUB got only the subscribed multipart message');
    $sub->close;
    $pub->close;
}

$ctx->destroy;
unlink glob("/tmp/oxmq-bind-perl-$$-*");
print "multipart: all ok\n";
exit 0;
