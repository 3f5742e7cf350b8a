#!/usr/bin/perl
# The classic weather station (zguide wuserver/wuclient) on ZMQ::FFI:
# a PUB server process publishing "%05d %d %d" updates over tcp, and a SUB
# client process filtering on zip code "10001 " and averaging N updates.
use strict;
use warnings;
use FindBin;
use lib "$FindBin::Bin/lib";
use BindTest;
use POSIX ();
use ZMQ::FFI qw(ZMQ_PUB ZMQ_SUB ZMQ_LAST_ENDPOINT ZMQ_DONTWAIT);

guard_time(60);
my $N = 100;

pipe(my $rd, my $wr) or die "pipe: $!";
my $pid = fork // die "fork: $!";

if ($pid == 0) {
    # ---- client ----
    close $wr;
    my $endpoint = <$rd>;
    chomp $endpoint;
    my $ctx = ZMQ::FFI->new();
    report_lib($ctx, 'client');
    my $sub = $ctx->socket(ZMQ_SUB);
    $sub->connect($endpoint);
    $sub->subscribe('10001 ');
    my ($total, $n) = (0, 0);
    while ($n < $N) {
        my $update = $sub->recv();
        my ($zip, $temp, $hum) = split ' ', $update;
        unless ($update =~ /^10001 -?\d+ \d+$/ && $zip eq '10001') {
            print STDERR "FAIL: unfiltered update '$update'\n";
            POSIX::_exit(1);
        }
        $total += $temp;
        $n++;
    }
    printf "client: average temperature for zip 10001 over %d updates: %.1fF\n", $n, $total / $n;
    $sub->close;
    $ctx->destroy;
    POSIX::_exit(0);
}

# ---- server ----
close $rd;
my $ctx = ZMQ::FFI->new();
report_lib($ctx, 'server');
my $pub = $ctx->socket(ZMQ_PUB);
$pub->bind('tcp://127.0.0.1:*');
my $endpoint = $pub->get(ZMQ_LAST_ENDPOINT, 'string');
$endpoint =~ s/\0.*//s;
check($endpoint =~ m{^tcp://127\.0\.0\.1:\d+$}, "LAST_ENDPOINT is $endpoint");
print {$wr} "$endpoint\n";
close $wr;

srand(42);
my ($sent, $status) = (0, undef);
while (1) {
    # zips 10000..10099 so that 10001 comes up often enough; 100010 would
    # also start with "10001" but never gets the trailing space.
    my $zip  = 10000 + int(rand(100));
    my $temp = int(rand(215)) - 80;
    my $hum  = int(rand(50)) + 10;
    $pub->send(sprintf('%05d %d %d', $zip, $temp, $hum));
    $pub->send(sprintf('%06d %d %d', 100010, 0, 0)) if $sent % 50 == 0;
    $sent++;
    if ($sent % 500 == 0) {
        my $r = waitpid($pid, POSIX::WNOHANG());
        if ($r == $pid) { $status = $?; last }
        Time::HiRes::sleep(0.001);
    }
}
print "server: published $sent updates\n";
$pub->close;
$ctx->destroy;
check($status == 0, "client exited 0 (status $status)");
exit 0;
