# Shared by the Perl study programs: which libzmq-like file this process
# mapped and the version it reports, as JSON fields.
use strict;
use warnings;

sub lib_fields {
    my ($ctx) = @_;
    my $lib = '?';
    if (open my $fh, '<', '/proc/self/maps') {
        while (my $l = <$fh>) {
            if ($l =~ m{(/\S*/lib(?:zmq|oxmq)[^/\s]*)$}) { $lib = $1; last }
        }
        close $fh;
    }
    my ($M, $m, $p) = $ctx->version;
    return sprintf '"lib":"%s","zmq_version":"%d.%d.%d","module":"ZMQ::FFI","module_version":"%s"', $lib, $M, $m,
        $p, $ZMQ::FFI::VERSION // '?';
}
1;
