// SPDX-License-Identifier: BSD-3-Clause
// Runs the C99 consumer (argv[1]) against a throwaway redis-server and checks
// its exit status, its output and what it left in Redis.
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "redis_server.hpp"

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s <consumer>\n", argv[0]);
        return 2;
    }
    RedisServer server;
    if (!server.start()) {
        fprintf(stderr, "cannot start redis-server\n");
        return 2;
    }
    int fds[2];
    if (pipe(fds) != 0)
        return 2;
    pid_t pid = fork();
    if (pid < 0)
        return 2;
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        execl(argv[1], argv[1], server.url(), (char *)nullptr);
        _exit(127);
    }
    close(fds[1]);
    char out[1024];
    size_t len = 0;
    ssize_t n;
    while ((n = read(fds[0], out + len, sizeof(out) - 1 - len)) > 0)
        len += (size_t)n;
    out[len] = 0;
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    fputs(out, stdout);

    int failures = 0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "FAILED: consumer exit status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        failures++;
    }
    if (!strstr(out, ": ok\n")) {
        fprintf(stderr, "FAILED: consumer did not report ok\n");
        failures++;
    }
    // Nothing left behind: the lock hash and the unlock latch are gone (the
    // latch DEL is not waited for, so allow it a moment). A semaphore's
    // counter stays by design: its one permit, free again.
    if (redis_integer(server, "GET c99-consumer-sem") != 1) {
        fprintf(stderr, "FAILED: the semaphore's permit is not back\n");
        failures++;
    }
    redis_integer(server, "DEL c99-consumer-sem");
    long long keys = -1;
    for (int i = 0; i < 100 && keys != 0; i++) {
        keys = redis_integer(server, "DBSIZE");
        if (keys != 0)
            sleep_ms(10);
    }
    if (keys != 0) {
        fprintf(stderr, "FAILED: %lld keys left in Redis\n", keys);
        failures++;
    }
    printf("%s\n", failures ? "c99 consumer test FAILED" : "c99 consumer test passed");
    return failures ? 1 : 0;
}
