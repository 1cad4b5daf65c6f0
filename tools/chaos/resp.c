// SPDX-License-Identifier: BSD-3-Clause
/* The checker's blocking RESP client (resp.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "resp.h"

static int64_t mono_ms(void)
{
    return mono_us() / 1000;
}

void resp_init(struct resp_conn *c, uint16_t port, int timeout_ms)
{
    c->fd = -1;
    c->port = port;
    c->timeout_ms = timeout_ms;
    c->len = 0;
    c->used = 0;
}

void resp_close(struct resp_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
    c->len = 0;
}

/* Waits for `events` on the socket until the deadline. 1 ready, 0 not. */
static int wait_fd(int fd, short events, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline - mono_ms();
        if (left <= 0)
            return 0;
        struct pollfd p = {fd, events, 0};
        int n = poll(&p, 1, (int)left);
        if (n > 0)
            return 1;
        if (n < 0 && errno != EINTR)
            return 0;
    }
}

static int do_connect(struct resp_conn *c, int64_t deadline)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in a;
    memset(&a, 0, sizeof(a));
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(c->port);
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
        int err = 0;
        socklen_t el = sizeof(err);
        if (errno != EINPROGRESS || !wait_fd(fd, POLLOUT, deadline) ||
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) != 0 || err != 0) {
            close(fd);
            return -1;
        }
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    c->fd = fd;
    c->len = 0;
    return 0;
}

static int send_all(struct resp_conn *c, const char *p, size_t n, int64_t deadline)
{
    while (n > 0) {
        ssize_t w = send(c->fd, p, n, MSG_NOSIGNAL);
        if (w > 0) {
            p += w;
            n -= (size_t)w;
        } else if (w < 0 && errno == EINTR) {
            continue;
        } else if (w < 0 && errno == EAGAIN) {
            if (!wait_fd(c->fd, POLLOUT, deadline))
                return -1;
        } else {
            return -1;
        }
    }
    return 0;
}

/* Parses one reply at buf[*pos..len) into *node. 1 complete, 0 more bytes
 * needed, -1 malformed or over the node pool. */
static int parse(struct resp_conn *c, size_t *pos, struct resp_reply *node)
{
    const char *line = c->buf + *pos;
    const char *end = memchr(line, '\n', c->len - *pos);
    if (!end)
        return 0;
    if (end == line || end[-1] != '\r')
        return -1;
    size_t line_len = (size_t)(end - line) - 1; /* without \r */
    size_t next = *pos + line_len + 2;
    char type = line[0];
    int64_t num = 0;
    if (type == ':' || type == '$' || type == '*') {
        int neg = line[1] == '-';
        for (size_t i = 1 + (size_t)neg; i < line_len; i++) {
            if (line[i] < '0' || line[i] > '9' || num > INT64_MAX / 10 - 10)
                return -1;
            num = num * 10 + (line[i] - '0');
        }
        if (neg)
            num = -num;
    }
    switch (type) {
    case '+':
    case '-':
        node->type = type == '+' ? RESP_STATUS : RESP_ERROR;
        node->str = line + 1;
        node->len = line_len - 1;
        *pos = next;
        return 1;
    case ':':
        node->type = RESP_INTEGER;
        node->integer = num;
        *pos = next;
        return 1;
    case '$':
        if (num < 0) {
            node->type = RESP_NIL;
            *pos = next;
            return 1;
        }
        if ((size_t)num > RESP_BUF_BYTES)
            return -1;
        if (c->len - next < (size_t)num + 2)
            return 0;
        node->type = RESP_STRING;
        node->str = c->buf + next;
        node->len = (size_t)num;
        *pos = next + (size_t)num + 2;
        return 1;
    case '*': {
        if (num < 0) {
            node->type = RESP_NIL;
            *pos = next;
            return 1;
        }
        if ((size_t)num > RESP_MAX_NODES - c->used)
            return -1;
        struct resp_reply *elems = c->nodes + c->used;
        c->used += (size_t)num;
        node->type = RESP_ARRAY;
        node->n = (size_t)num;
        node->elems = elems;
        *pos = next;
        for (size_t i = 0; i < (size_t)num; i++) {
            int r = parse(c, pos, &elems[i]);
            if (r <= 0)
                return r;
        }
        return 1;
    }
    default: return -1;
    }
}

int resp_call(struct resp_conn *c, struct resp_reply *out, const char *const *argv)
{
    int64_t deadline = mono_ms() + c->timeout_ms;
    if (c->fd < 0 && do_connect(c, deadline) != 0)
        return -1;
    char req[4096];
    size_t n = 0, argc = 0;
    while (argv[argc] && argc < RESP_MAX_ARGS)
        argc++;
    int w = snprintf(req, sizeof(req), "*%zu\r\n", argc);
    n = (size_t)w;
    for (size_t i = 0; i < argc; i++) {
        size_t al = strlen(argv[i]);
        w = snprintf(req + n, sizeof(req) - n, "$%zu\r\n", al);
        if (w < 0 || n + (size_t)w + al + 2 > sizeof(req))
            goto fail;
        n += (size_t)w;
        memcpy(req + n, argv[i], al);
        n += al;
        memcpy(req + n, "\r\n", 2);
        n += 2;
    }
    c->len = 0;
    if (send_all(c, req, n, deadline) != 0)
        goto fail;
    for (;;) {
        if (c->len > 0) {
            size_t pos = 0;
            c->used = 0;
            int r = parse(c, &pos, out);
            if (r > 0 && pos == c->len)
                return 0;
            if (r != 0)
                goto fail; /* malformed, or bytes nobody asked for */
        }
        if (c->len == sizeof(c->buf) || !wait_fd(c->fd, POLLIN, deadline))
            goto fail;
        ssize_t got = recv(c->fd, c->buf + c->len, sizeof(c->buf) - c->len, 0);
        if (got < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (got <= 0)
            goto fail;
        c->len += (size_t)got;
    }
fail:
    resp_close(c);
    return -1;
}

int resp_callv(struct resp_conn *c, struct resp_reply *out, ...)
{
    const char *argv[RESP_MAX_ARGS + 1];
    size_t n = 0;
    va_list ap;
    va_start(ap, out);
    for (const char *a = va_arg(ap, const char *); a && n < RESP_MAX_ARGS; a = va_arg(ap, const char *))
        argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    return resp_call(c, out, argv);
}

int resp_info_field(const struct resp_reply *info, const char *field, char *out, size_t cap)
{
    if (info->type != RESP_STRING)
        return -1;
    size_t fl = strlen(field);
    const char *p = info->str, *end = info->str + info->len;
    while (p < end) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol)
            eol = end;
        if ((size_t)(eol - p) > fl && memcmp(p, field, fl) == 0 && p[fl] == ':') {
            const char *v = p + fl + 1, *ve = eol;
            if (ve > v && ve[-1] == '\r')
                ve--;
            if ((size_t)(ve - v) >= cap)
                return -1;
            memcpy(out, v, (size_t)(ve - v));
            out[ve - v] = '\0';
            return 0;
        }
        p = eol + 1;
    }
    return -1;
}

int resp_is(const struct resp_reply *r, const char *s)
{
    size_t n = strlen(s);
    return (r->type == RESP_STATUS || r->type == RESP_STRING) && r->len == n && memcmp(r->str, s, n) == 0;
}
