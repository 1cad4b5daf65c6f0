// SPDX-License-Identifier: BSD-3-Clause
// The port's SIGPIPE guard (port/port.h): a write to a socket whose peer has
// closed it, made while the guard is up, fails with EPIPE and does not end
// the process; the signal it raised is discarded when the guard comes down,
// and the thread's mask is what it was. The blocking face raises the guard on
// every thread that runs the loop (a Redis that closes a connection while a
// gateway writes to it must not kill the gateway).
#include <errno.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.hpp"
#include "port.h"

namespace
{

bool sigpipe_pending()
{
    sigset_t pending;
    return sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE);
}

bool sigpipe_blocked()
{
    sigset_t mask;
    return pthread_sigmask(SIG_BLOCK, nullptr, &mask) == 0 && sigismember(&mask, SIGPIPE);
}

} // namespace

TEST_CASE(a_write_to_a_closed_socket_under_the_guard_is_epipe_not_death)
{
    REQUIRE(!edgelock_port_sigpipe_ignored()); // the default: it would kill us
    int sv[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    close(sv[1]);
    edgelock_port_sigpipe g;
    edgelock_port_sigpipe_block(&g);
    CHECK(sigpipe_blocked());
    errno = 0;
    ssize_t n = write(sv[0], "PING\r\n", 6);
    CHECK(n == -1 && errno == EPIPE);
    CHECK(sigpipe_pending()); // raised, held back
    edgelock_port_sigpipe_restore(&g);
    CHECK(!sigpipe_pending()); // discarded
    CHECK(!sigpipe_blocked()); // the mask as it was
    close(sv[0]);
}

TEST_CASE(a_caller_that_blocked_it_already_keeps_its_own)
{
    sigset_t pipe_only, before;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    REQUIRE(pthread_sigmask(SIG_BLOCK, &pipe_only, &before) == 0);
    edgelock_port_sigpipe g;
    edgelock_port_sigpipe_block(&g);
    raise(SIGPIPE);
    edgelock_port_sigpipe_restore(&g);
    CHECK(sigpipe_blocked()); // still theirs
    CHECK(sigpipe_pending()); // and so is what was raised
    struct timespec now = {0, 0};
    CHECK(sigtimedwait(&pipe_only, nullptr, &now) == SIGPIPE);
    pthread_sigmask(SIG_SETMASK, &before, nullptr);
}

TEST_CASE(a_process_that_ignores_it_needs_no_guard)
{
    struct sigaction ign = {}, old = {};
    ign.sa_handler = SIG_IGN;
    REQUIRE(sigaction(SIGPIPE, &ign, &old) == 0);
    CHECK(edgelock_port_sigpipe_ignored());
    sigaction(SIGPIPE, &old, nullptr);
    CHECK(!edgelock_port_sigpipe_ignored());
}

// The plain connections' write with hiredis 1.x: no guard up, SIGPIPE at its
// default (death), and a write to a closed socket is an error, not a signal.
TEST_CASE(a_quiet_send_to_a_closed_socket_is_an_error_without_a_signal)
{
    REQUIRE(!edgelock_port_sigpipe_ignored());
    REQUIRE(!sigpipe_blocked());
    int sv[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    char err[128] = "";
    CHECK_EQ(edgelock_port_send_quiet(sv[0], "PING\r\n", 6, err, sizeof(err)), 6);
    close(sv[1]);
    CHECK_EQ(edgelock_port_send_quiet(sv[0], "PING\r\n", 6, err, sizeof(err)), -1);
    CHECK(err[0] != '\0'); // "Broken pipe", for the connection's log
    CHECK(!sigpipe_pending());
    close(sv[0]);
}

// A socket that cannot take more now: 0, "try again", as hiredis expects.
TEST_CASE(a_quiet_send_to_a_full_socket_says_try_again)
{
    int sv[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == 0);
    static char block[65536];
    char err[128] = "";
    long n = 1;
    for (int i = 0; i < 1000 && n > 0; i++)
        n = edgelock_port_send_quiet(sv[0], block, sizeof(block), err, sizeof(err));
    CHECK_EQ(n, 0);
    close(sv[0]);
    close(sv[1]);
}
