#!/usr/bin/perl
# Study 1 on Perl ZMQ::FFI: N non-blocking sends of 5 bytes on a PUB bound to
# ipc with no subscriber. Usage: callcost.pl COUNT. The library is the one
# ZMQ::FFI finds (FFI_CHECKLIB_PATH is searched first: that selects oxmq).
use strict;
use warnings;
use Time::HiRes qw(time);
use ZMQ::FFI qw(ZMQ_PUB ZMQ_DONTWAIT ZMQ_LINGER);
use FindBin;
require "$FindBin::Bin/lib.pl";

my $n = shift // 1_000_000;
my $ctx = ZMQ::FFI->new();
my $pub = $ctx->socket(ZMQ_PUB);
$pub->set(ZMQ_LINGER, 'int', 0);
my $path = "/tmp/oxmq-bench-cc-pl-$$";
$pub->bind("ipc://$path");
my $t0 = time;
for (1 .. $n) { $pub->send('hello', ZMQ_DONTWAIT) }
my $secs = time - $t0;
printf "{\"count\":%d,\"seconds\":%.9f,\"ns_per_call\":%.3f,%s}\n", $n, $secs, $secs * 1e9 / $n, lib_fields($ctx);
$pub->close;
$ctx->destroy;
unlink $path;
