// SPDX-License-Identifier: BSD-3-Clause
/* What the subcommands share (common.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"
#include "escape.h"

static const char *prog = "edgelock";
int verbose = 0;

/* "edgelock: <message>" on stderr, then the usage lines when `with_usage`. */
static void say(int with_usage, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
static void say(int with_usage, const char *fmt, va_list ap)
{
    char buf[1024];
    vsnprintf(buf, sizeof(buf), fmt, ap);
    if (with_usage)
        fprintf(stderr, "%s: %s\n%sTry 'edgelock --help' for more information.\n", prog, buf, usage_text);
    else
        fprintf(stderr, "%s: %s\n", prog, buf);
}

void msg(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(0, fmt, ap);
    va_end(ap);
}

int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(1, fmt, ap);
    va_end(ap);
    return EXIT_USAGE;
}

uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int parse_ms(const char *s, int64_t min, int64_t max, int64_t *out)
{
    int64_t v = 0;
    if (!s || !*s)
        return 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return 0;
        int digit = *p - '0';
        if (v > (max - digit) / 10) /* checked before it is made: no overflow for any max */
            return 0;
        v = v * 10 + digit;
        if (v > max)
            return 0;
    }
    if (v < min)
        return 0;
    *out = v;
    return 1;
}

/* [0-9]+(.[0-9]+)? as a count of 1/1e9 units: digits before and after the
 * point, at most 9 after it. 0 when it is not such a number or too large. */
static int parse_decimal(const char **p, int64_t *whole, int64_t *nanos)
{
    const char *s = *p;
    int64_t w = 0, f = 0, scale = 100000000;
    if (*s < '0' || *s > '9')
        return 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        w = w * 10 + (*s - '0');
        if (w > INT64_MAX / 4000000)
            return 0; /* far beyond any limit: hours to ms must not overflow */
    }
    if (*s == '.') {
        s++;
        if (*s < '0' || *s > '9')
            return 0;
        for (; *s >= '0' && *s <= '9'; s++) {
            if (scale > 0)
                f += (*s - '0') * scale;
            scale /= 10;
        }
    }
    *p = s;
    *whole = w;
    *nanos = f;
    return 1;
}

int parse_duration(const char *s, int64_t min, int64_t max, int64_t *out)
{
    int64_t whole, nanos, unit_ms;
    const char *p = s;
    if (!s || !parse_decimal(&p, &whole, &nanos))
        return 0;
    if (strcmp(p, "") == 0 || strcmp(p, "ms") == 0)
        unit_ms = 1;
    else if (strcmp(p, "s") == 0)
        unit_ms = 1000;
    else if (strcmp(p, "m") == 0)
        unit_ms = 60000;
    else if (strcmp(p, "h") == 0)
        unit_ms = 3600000;
    else
        return 0;
    /* whole * unit + ceil(nanos * unit / 1e9), in ms */
    int64_t ms = whole * unit_ms + (nanos * unit_ms + 999999999) / 1000000000;
    if (ms < min || ms > max)
        return 0;
    *out = ms;
    return 1;
}

int parse_seconds(const char *s, int64_t max_ms, int64_t *out_ms)
{
    int64_t whole, nanos;
    const char *p = s;
    if (!s || !parse_decimal(&p, &whole, &nanos) || *p != 0)
        return 0;
    int64_t ms = whole * 1000 + (nanos + 999999) / 1000000;
    if (ms > max_ms)
        return 0;
    *out_ms = ms;
    return 1;
}

int is_unreachable(edgelock_status st)
{
    return st == EDGELOCK_ERR_CONNECTION || st == EDGELOCK_ERR_TIMEOUT || st == EDGELOCK_ERR_TLS;
}

int report_failure(const char *shown_url, const char *what, const char *label, edgelock_status st)
{
    if (st == EDGELOCK_ERR_TLS) {
        msg("TLS to Redis at %s failed while %s %s: the server's certificate or name did not verify, or "
            "the handshake failed (check --tls-ca, --tls-server-name, --tls-cert/--tls-key; "
            "EDGELOCK_LOG=1 says more)",
            shown_url, what, label);
        return EXIT_UNAVAILABLE;
    }
    if (st == EDGELOCK_ERR_AUTH) {
        /* The library knows only that a setup reply was an error; Redis's own
         * words are in its log (they never hold the password). */
        msg("Redis at %s refused the connection setup while %s %s: wrong password (--password-file, "
            "the URL's), unknown ACL user, database number out of range, or an ACL that forbids a "
            "command edgelock needs (EDGELOCK_LOG=1 shows Redis's answer)",
            shown_url, what, label);
        return EXIT_NOPERM;
    }
    if (st == EDGELOCK_ERR_NOT_REPLICATED) {
        msg("%s %s at %s: fewer than %u replica%s acknowledged it within %u ms%s", what, label, shown_url,
            replicas.n, replicas.n == 1 ? "" : "s", replicas.timeout_ms,
            strcmp(what, "acquiring") == 0 ? "; it was released again, not held" : "");
        return EXIT_UNAVAILABLE;
    }
    if (st == EDGELOCK_ERR_TIMEOUT) {
        msg("Redis at %s did not answer in time while %s %s (it accepted the connection: stopped, "
            "overloaded, or not a Redis server?)",
            shown_url, what, label);
        return EXIT_UNAVAILABLE;
    }
    if (is_unreachable(st)) {
        msg("cannot reach Redis at %s (%s while %s %s)", shown_url, edgelock_status_str(st), what, label);
        return EXIT_UNAVAILABLE;
    }
    if (st == EDGELOCK_ERR_REDIS || st == EDGELOCK_ERR_PROTOCOL) {
        msg("Redis refused %s %s: %s (is the name a key of another type, or a lock of another "
            "kind? EDGELOCK_LOG=1 shows Redis's answer)",
            what, label, edgelock_status_str(st));
        return EXIT_REMOTE;
    }
    msg("%s %s failed: %s", what, label, edgelock_status_str(st));
    return EXIT_OSERR;
}

uint32_t command_timeout_for(uint32_t timeout_ms)
{
    if (replicas.n && timeout_ms <= replicas.timeout_ms)
        return replicas.timeout_ms + timeout_ms; /* WAIT holds the connection that long */
    return timeout_ms;
}

int create_client(const char *url, uint32_t nlocks, size_t max_name, uint32_t timeout_ms,
                  uint32_t watchdog_ms, edgelock_lock_lost_fn lost, void *lost_user, edgelock_client **client)
{
    edgelock_config cfg;
    edgelock_config_init(&cfg);
    cfg.url = url;
    cfg.password = password;
    cfg.sentinel_password = sentinel_password;
    cfg.tls_ca = tls.ca;
    cfg.tls_cert = tls.cert;
    cfg.tls_key = tls.key;
    cfg.tls_server_name = tls.server_name;
    cfg.tls_insecure_skip_verify = tls.insecure_skip_verify;
    cfg.wait_replicas = replicas.n;
    cfg.wait_replicas_timeout_ms = replicas.timeout_ms;
    cfg.sharded_pubsub = sharded_pubsub;
    cfg.connect_timeout_ms = timeout_ms;
    cfg.command_timeout_ms = command_timeout_for(timeout_ms);
    cfg.max_locks = nlocks;
    cfg.max_holds = nlocks;
    cfg.max_waiters = nlocks;
    cfg.max_subscriptions = nlocks;
    cfg.max_commands = 12 + 4 * nlocks;
    if (max_name > cfg.max_name_len)
        cfg.max_name_len = (uint32_t)max_name;
    if (watchdog_ms)
        cfg.watchdog_lease_ms = watchdog_ms;
    cfg.on_lock_lost = lost;
    cfg.on_lock_lost_user = lost_user;
    edgelock_status st = edgelock_client_create(&cfg, NULL, client);
    if (st == EDGELOCK_ERR_INVALID_ARG && cfg.sharded_pubsub != EDGELOCK_SHARDED_OFF &&
        !edgelock_sharded_pubsub_available() && edgelock_url_redact(url, NULL, 0) == EDGELOCK_OK &&
        strstr(url, "-cluster://"))
        return usage_error("this edgelock (hiredis 0.14) has no sharded pub/sub: on a cluster give "
                           "--sharded-pubsub off, and set the Java side's shardedSubscriptionMode to OFF");
    if (st == EDGELOCK_ERR_INVALID_ARG)
        return usage_error("invalid configuration (URL or option)");
    if (st == EDGELOCK_ERR_TLS)
        return usage_error(edgelock_tls_available()
                               ? "cannot use the TLS files (--tls-ca, --tls-cert, --tls-key; EDGELOCK_LOG=1 "
                                 "says which and why)"
                               : "rediss://: this edgelock was built without TLS");
    if (st != EDGELOCK_OK) {
        msg("cannot create the client: %s", edgelock_status_str(st));
        return EXIT_OSERR;
    }
    return 0;
}

int new_handle(edgelock_client *client, edgelock_lock_kind kind, const char *name, edgelock_lock *lock)
{
    edgelock_status st = edgelock_lock_new_kind(client, kind, name, strlen(name), lock);
    if (st == EDGELOCK_OK)
        return 0;
    if (st == EDGELOCK_ERR_INVALID_ARG)
        return usage_error("invalid lock name");
    msg("cannot create the lock handle: %s", edgelock_status_str(st));
    return EXIT_OSERR;
}

int make_client(const struct options *o, const char *name, edgelock_client **client, edgelock_lock *lock)
{
    return make_client_kind(o, name, EDGELOCK_REENTRANT, client, lock);
}

int make_client_kind(const struct options *o, const char *name, edgelock_lock_kind kind,
                     edgelock_client **client, edgelock_lock *lock)
{
    int rc = create_client(o->url, 1, strlen(name), REDIS_TIMEOUT_MS, 0, NULL, NULL, client);
    forget_secrets(); /* one client per process: the last use of the URL and password */
    if (rc)
        return rc;
    rc = new_handle(*client, kind, name, lock);
    if (rc) {
        edgelock_client_destroy(*client);
        *client = NULL;
    }
    return rc;
}

const char *arg_shown(char *out, size_t cap, const char *arg)
{
    char text[500];
    if (strstr(arg, "://") || strchr(arg, '@')) {
        char redacted[500];
        /* The library writes "***@" for the credentials, and what it cuts to
         * fit comes after them: nothing of a password reaches `redacted`. */
        if (edgelock_url_redact(arg, redacted, sizeof(redacted)) != EDGELOCK_OK) {
            snprintf(out, cap, "(not shown: it may hold a password)");
            return out;
        }
        snprintf(out, cap, "'%s'", text_shown(text, sizeof(text), redacted));
        return out;
    }
    snprintf(out, cap, "'%s'", text_shown(text, sizeof(text), arg));
    return out;
}

const char *option_shown(char *out, size_t cap, const char *arg)
{
    char name[500];
    const char *eq = strchr(arg, '=');
    size_t n = eq ? (size_t)(eq - arg) : strlen(arg);
    if (n >= sizeof(name)) { /* cut, a URL might lose its '@' and pass as one */
        snprintf(out, cap, "(not shown: too long)");
        return out;
    }
    memcpy(name, arg, n);
    name[n] = 0;
    return arg_shown(out, cap, name);
}

void lock_label(char *out, size_t cap, const char *name)
{
    kind_label(out, cap, "lock", name);
}

void kind_label(char *out, size_t cap, const char *word, const char *name)
{
    char shown[500];
    snprintf(out, cap, "%s '%s'", word, text_shown(shown, sizeof(shown), name));
}

const char *password = NULL;
const char *sentinel_password = NULL;
struct tls_options tls;
struct replica_options replicas = {0, 1000};
edgelock_sharded_pubsub sharded_pubsub = EDGELOCK_SHARDED_AUTO;

/* The buffers read_secret_file() filled (--url-file, --password-file,
 * --sentinel-password-file), for forget_secrets(). */
static struct {
    char *p;
    size_t n;
} secrets[3];
static size_t nsecrets;

/* Zeroes secret memory in a way the compiler may not drop as a dead store, as
 * the library's port does (port.h's edgelock_port_wipe(), which the CLI, on the
 * public header only, cannot call). */
static void wipe(void *p, size_t n)
{
    explicit_bzero(p, n);
}

void forget_secrets(void)
{
    for (size_t k = 0; k < nsecrets; k++)
        wipe(secrets[k].p, secrets[k].n);
}

static void keep_for_wiping(char *out, size_t cap)
{
    for (size_t k = 0; k < nsecrets; k++)
        if (secrets[k].p == out)
            return;
    if (nsecrets == sizeof(secrets) / sizeof(secrets[0]))
        return; /* three files are read at most: the URL and two passwords */
    if (nsecrets == 0)
        atexit(forget_secrets);
    secrets[nsecrets].p = out;
    secrets[nsecrets].n = cap;
    nsecrets++;
}

int read_secret_file(const char *flag, const char *file, char *out, size_t cap)
{
    keep_for_wiping(out, cap);
    /* read(2) straight into out, no stdio: a FILE's buffer would hold up to
     * a block of the file, later lines too, and be freed unwiped. Reading
     * stops at the first line end (or at cap bytes), so little of what
     * follows is read at all, and that little is wiped below. */
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        msg("%s %s: %s", flag, file, strerror(errno));
        return EXIT_USAGE;
    }
    size_t n = 0;
    int failed = 0;
    while (n < cap) {
        ssize_t r = read(fd, out + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            failed = 1;
            break;
        }
        if (r == 0)
            break;
        int line_end = memchr(out + n, '\n', (size_t)r) || memchr(out + n, '\r', (size_t)r);
        n += (size_t)r;
        if (line_end)
            break;
    }
    close(fd);
    if (failed) {
        wipe(out, cap);
        msg("%s %s: cannot read it", flag, file);
        return EXIT_USAGE;
    }
    size_t len = 0;
    while (len < n && out[len] != '\n' && out[len] != '\r')
        len++;
    if (len == cap) {
        wipe(out, cap);
        msg("%s %s: its first line is longer than %zu bytes", flag, file, cap - 1);
        return EXIT_USAGE;
    }
    wipe(out + len, cap - len); /* nothing after the first line stays in memory */
    if (len == 0) {
        msg("%s %s: its first line is empty", flag, file);
        return EXIT_USAGE;
    }
    return 0;
}

const char *signal_name(int sig)
{
    switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "signal";
    }
}

void add_unignored_stop_signals(sigset_t *set)
{
    static const int stop[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t k = 0; k < sizeof(stop) / sizeof(stop[0]); k++) {
        struct sigaction old;
        if (sigaction(stop[k], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaddset(set, stop[k]);
    }
}
