#!/usr/bin/perl
# Study 5 on Perl ZMQ::FFI: the zguide weather station.
#   weather.pl server ENDPOINT ZIPRANGE   publish until SIGTERM, print the rate
#   weather.pl client ENDPOINT N          SUB on "10001 ", average N temperatures
use strict;
use warnings;
use Time::HiRes qw(time);
use ZMQ::FFI qw(ZMQ_PUB ZMQ_SUB ZMQ_LINGER ZMQ_LAST_ENDPOINT);
use FindBin;
require "$FindBin::Bin/lib.pl";
$| = 1;

my ($mode, $ep, $arg) = @ARGV;
my $ctx = ZMQ::FFI->new();
if ($mode eq 'server') {
    my $range = $arg;
    my $base = 10001 - int($range / 2);
    $base = 0 if $base < 0;
    my $pub = $ctx->socket(ZMQ_PUB);
    $pub->set(ZMQ_LINGER, 'int', 0);
    $pub->bind($ep);
    my $real = $pub->get(ZMQ_LAST_ENDPOINT, 'string');
    $real =~ s/\0.*//s;
    print "READY $real\n";
    my $stop = 0;
    local $SIG{TERM} = sub { $stop = 1 };
    srand(42);
    my $sent = 0;
    my $t0 = time;
    until ($stop) {
        my $zip = $base + int(rand($range));
        my $temp = int(rand(215)) - 80;
        my $rel = int(rand(50)) + 10;
        $pub->send(sprintf('%05d %d %d', $zip, $temp, $rel));
        $sent++;
    }
    my $secs = time - $t0;
    printf "{\"published\":%d,\"seconds\":%.6f,\"pub_rate\":%.3f,%s}\n", $sent, $secs, $sent / $secs, lib_fields($ctx);
    $pub->close;
} else {
    my $n = $arg;
    my $t0 = time;
    my $sub = $ctx->socket(ZMQ_SUB);
    $sub->connect($ep);
    $sub->subscribe('10001 ');
    my $total = 0;
    for (1 .. $n) {
        my ($zip, $temp, $rel) = split ' ', $sub->recv();
        die "unfiltered update\n" unless $zip eq '10001';
        $total += $temp;
    }
    my $secs = time - $t0;
    printf "{\"updates\":%d,\"seconds\":%.6f,\"avg_temp\":%.2f,%s}\n", $n, $secs, $total / $n, lib_fields($ctx);
    $sub->close;
}
$ctx->destroy;
