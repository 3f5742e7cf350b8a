package BindTest;
# Helpers shared by the ZMQ::FFI scripts. The binding itself is used unchanged:
# ZMQ::FFI->new() finds libzmq through FFI::CheckLib (FFI_CHECKLIB_PATH is
# searched first; LD_LIBRARY_PATH comes *after* the system dirs, so it does not
# override /usr/lib/x86_64-linux-gnu/libzmq.so.5). run.sh sets FFI_CHECKLIB_PATH.
use strict;
use warnings;
use Exporter 'import';
use Time::HiRes ();

our @EXPORT = qw(report_lib check fail_now guard_time ep_ipc wait_until);

$| = 1;

# Print every libzmq-like file mapped into this process and the version the
# library reports. run.sh checks the LIBZMQ_MAPPED lines.
sub report_lib {
    my ($ctx, $who) = @_;
    $who //= 'perl';
    open my $fh, '<', '/proc/self/maps' or die "maps: $!";
    my %seen;
    while (my $l = <$fh>) {
        chomp $l;
        my @f = split ' ', $l, 6;
        next unless @f == 6;
        my ($base) = $f[5] =~ m{([^/]+)$};
        next unless defined $base && $base =~ /^lib(zmq|oxmq)\b/;
        $seen{$f[5]} = 1;
    }
    close $fh;
    print "LIBZMQ_MAPPED=$_\n" for sort keys %seen;
    my ($M, $m, $p) = $ctx->version;
    print "ZMQ_VERSION=$M.$m.$p ($who pid $$)\n";
}

sub check {
    my ($cond, $what) = @_;
    fail_now($what) unless $cond;
    print "ok - $what\n";
}

sub fail_now {
    my ($what) = @_;
    print "not ok - $what\n";
    print STDERR "FAIL: $what\n";
    exit 1;
}

# Hard bound on a script's run time (the runner has its own timeout too).
sub guard_time {
    my ($secs) = @_;
    $SIG{ALRM} = sub { print STDERR "FAIL: timed out after ${secs}s\n"; exit 2 };
    alarm $secs;
}

sub ep_ipc {
    my ($name) = @_;
    return "ipc:///tmp/oxmq-bind-perl-$$-$name";
}

# Poll a condition for up to $secs seconds.
sub wait_until {
    my ($secs, $cond) = @_;
    my $end = Time::HiRes::time() + $secs;
    while (Time::HiRes::time() < $end) {
        return 1 if $cond->();
        Time::HiRes::sleep(0.005);
    }
    return $cond->();
}

1;
