#!/usr/bin/perl
# listen-exec.pl ADDR PORT[,PORT...] PROGRAM ARGS... - open listening TCP sockets on ADDR with
# a backlog of 4096, hand them over as fds 3, 4, ... with LISTEN_FDS/LISTEN_PID (systemd socket
# activation), then exec PROGRAM in place (same PID).
# Why: ngIRCd 26.1 calls listen(sock, 10); a burst of more than ~20 simultaneous connects to
# one port then loses connections (the client sees the socket closed before 001). ngIRCd takes
# inherited sockets as they are (sd_listen_fds) and never calls listen() on them.
# Only perl-base modules (Socket, POSIX), so it runs on any Debian.
use strict;
use warnings;
use Socket qw(PF_INET SOCK_STREAM SOL_SOCKET SO_REUSEADDR inet_aton pack_sockaddr_in);
use POSIX qw(dup2);

my ($addr, $ports, @cmd) = @ARGV;
die "usage: $0 ADDR PORT[,PORT...] PROGRAM ARGS...\n" unless $addr && $ports && @cmd;
die "listen-exec: loopback only\n" unless $addr =~ /^127\./;
$^F = 1023;    # no close-on-exec for the sockets created below
my @socks;
for my $port (split /,/, $ports) {
  socket(my $s, PF_INET, SOCK_STREAM, 0) or die "socket: $!\n";
  setsockopt($s, SOL_SOCKET, SO_REUSEADDR, 1) or die "setsockopt: $!\n";
  bind($s, pack_sockaddr_in($port, inet_aton($addr))) or die "bind $addr:$port: $!\n";
  listen($s, 4096) or die "listen $addr:$port: $!\n";
  push @socks, $s;
}
# Move them to 3, 4, ... (above every fd they might already occupy, then down).
my @high = map { my $fd = POSIX::dup(fileno($_)); die "dup: $!\n" unless defined $fd; $fd } @socks;
close($_) for @socks;
for my $i (0 .. $#high) {
  my $want = 3 + $i;
  defined dup2($high[$i], $want) or die "dup2: $!\n";
}
POSIX::close($_) for grep { $_ >= 3 + @high } @high;
$ENV{LISTEN_FDS} = scalar @high;
$ENV{LISTEN_PID} = $$;
exec { $cmd[0] } @cmd or die "exec $cmd[0]: $!\n";
