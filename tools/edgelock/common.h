// SPDX-License-Identifier: BSD-3-Clause
/*
 * What every subcommand of edgelock(1) shares: exit codes, messages, number
 * parsing, client and handle creation, and the mapping of a failed library call
 * to an exit code. Everything here goes through the public C ABI (edgelock.h).
 */
#ifndef EDGELOCK_CLI_COMMON_H
#define EDGELOCK_CLI_COMMON_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include <edgelock/edgelock.h>

/* Exit codes (sysexits.h values where one fits). CMD's own status passes through. */
enum {
    EXIT_USAGE = 64,        /* EX_USAGE: bad command line or URL */
    EXIT_UNAVAILABLE = 69,  /* EX_UNAVAILABLE: Redis cannot be reached */
    EXIT_LOST = 70,         /* the lock was lost while CMD ran; CMD was sent SIGTERM */
    EXIT_OSERR = 71,        /* EX_OSERR: cannot fork, start a thread, allocate */
    EXIT_NOT_ACQUIRED = 75, /* EX_TEMPFAIL: not acquired within --wait */
    EXIT_REMOTE = 76,       /* EX_PROTOCOL: Redis answered with an error (e.g. NAME is not a lock) */
    EXIT_NOPERM = 77,       /* EX_NOPERM: Redis refused the connection setup (password, ACL user, db) */
    EXIT_CANNOT_EXEC = 126,
    EXIT_NOT_FOUND = 127
};

#define DEFAULT_URL "redis://127.0.0.1:6379"
/* Connect and command timeouts: an unreachable Redis is reported within this. */
#define REDIS_TIMEOUT_MS 3000u
#define NAME_MAX_LEN 4096u /* the library's limit on lock names */
/* run --permits N and latch set NAME COUNT: 1 to these. */
#define MAX_PERMITS 1000000000
#define MAX_LATCH_COUNT 1000000000

/* -v: say on stderr when the lock is waited for, taken, released. */
extern int verbose;

/* --password-file: the password every client authenticates with instead of
 * the URL's (NULL: the URL's). */
extern const char *password;

/* --sentinel-password-file: the password of redis-sentinel:// URLs'
 * sentinels themselves (NULL: none; the URL's is the master's). */
extern const char *sentinel_password;

/* --tls-* options (and EDGELOCK_TLS_* variables), for rediss:// URLs. */
struct tls_options {
    const char *ca, *cert, *key, *server_name;
    int insecure_skip_verify;
};
extern struct tls_options tls;

/* --wait-replicas N [--wait-replicas-timeout MS]: 0 off. */
struct replica_options {
    uint32_t n, timeout_ms;
};
extern struct replica_options replicas;

/* --sharded-pubsub auto|on|off: a cluster's pub/sub, as Redisson's
 * shardedSubscriptionMode (default auto). */
extern edgelock_sharded_pubsub sharded_pubsub;

/* The first line of FILE (its line end dropped) into out; 0, or an exit code
 * with its message said. For --url-file and --password-file: the secret is
 * never echoed, only the file's name. Read with read(2), no stdio buffer;
 * nothing but the first line is left in out, and out (all cap bytes) is
 * wiped by forget_secrets(), at exit at the latest. */
int read_secret_file(const char *flag, const char *file, char *out, size_t cap);

/* Wipes what read_secret_file() read (the URL and password `password` and
 * the options' url may point at: empty strings after). Called once the clients
 * are created (the library keeps its own copy), when no more will be, and at
 * exit. */
void forget_secrets(void);

/* The usage lines and the rest of --help (help.c). */
extern const char usage_text[];
extern const char help_text[];

/* The global options every subcommand uses. */
struct options {
    const char *url;
    char shown_url[512]; /* redacted */
};

/* "edgelock: <message>" on stderr. */
void msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The message, the usage lines and a pointer to --help on stderr; EXIT_USAGE. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

uint64_t now_ms(void);

/* Strict decimal in [min, max]; no sign, no spaces, no suffix. 1 when valid. */
int parse_ms(const char *s, int64_t min, int64_t max, int64_t *out);
/* A duration in milliseconds, for the long options: a bare number of ms (the
 * old form) or a number with a unit, ms, s, m or h, fractions allowed
 * ("500ms", "10s", "1.5s", "2m"). 1 and *out set when it is one within
 * [min, max] ms (fractions of a ms rounded up), else 0. */
int parse_duration(const char *s, int64_t min, int64_t max, int64_t *out);
/* flock(1)'s -w SECONDS: a number of seconds, fractions allowed, as ms. */
int parse_seconds(const char *s, int64_t max_ms, int64_t *out_ms);

/* 1 when the lock thread, a library call or a status read says Redis is gone. */
int is_unreachable(edgelock_status st);

/* The exit code for a failed library call, with its message on stderr.
 * `what` is what was being done ("acquiring"), `label` the lock ("lock 'x'"). */
int report_failure(const char *shown_url, const char *what, const char *label, edgelock_status st);

/* The command timeout create_client() gives a client whose connect timeout is
 * timeout_ms: longer with --wait-replicas, whose WAIT holds a command. */
uint32_t command_timeout_for(uint32_t timeout_ms);

/* A client that owns its loop, sized for `nlocks` lock handles of names up to
 * `max_name` bytes. 0, or an exit code (with its message said). */
int create_client(const char *url, uint32_t nlocks, size_t max_name, uint32_t timeout_ms,
                  uint32_t watchdog_ms, edgelock_lock_lost_fn lost, void *lost_user,
                  edgelock_client **client);

/* A lock handle of `kind` for `name` on `client`. 0, or an exit code. */
int new_handle(edgelock_client *client, edgelock_lock_kind kind, const char *name, edgelock_lock *lock);

/* One client with one reentrant handle (status, unlock --force). 0, or an
 * exit code (nothing left behind). */
int make_client(const struct options *o, const char *name, edgelock_client **client, edgelock_lock *lock);
/* The same with a handle of `kind` (a semaphore, a latch). */
int make_client_kind(const struct options *o, const char *name, edgelock_lock_kind kind,
                     edgelock_client **client, edgelock_lock *lock);

/* A command-line argument as a message may echo it, into out (cap bytes):
 * quoted and escaped for a terminal (escape.h), "'...'". One that may hold
 * credentials (it has "://" or an '@') is shown only through
 * edgelock_url_redact(), "user:password@" masked, and when that library call
 * does not take it for a URL, not at all: "(not shown: it may hold a
 * password)". out. */
const char *arg_shown(char *out, size_t cap, const char *arg);
/* The same for an option as typed, "--opt" or "--opt=VALUE": its name only
 * (the part before '='), never the value. */
const char *option_shown(char *out, size_t cap, const char *arg);

/* "lock 'NAME'" for messages, the name escaped (escape.h) and cut to fit. */
void lock_label(char *out, size_t cap, const char *name);
/* The same with another word: "semaphore 'NAME'", "latch 'NAME'". */
void kind_label(char *out, size_t cap, const char *word, const char *name);

/* The subcommands other than run (run.h). 0, or an exit code. */
int cmd_status(const struct options *o, const char *name, int json);
/* status --permits: an expirable semaphore's free and taken permits and
 * waiting clients; status --latch: a countdown latch's count (status.c). */
int cmd_status_semaphore(const struct options *o, const char *name, int json);
int cmd_status_latch(const struct options *o, const char *name, int json);
/* latch set|countdown|count|await NAME (latch.c). count: set's COUNT;
 * wait_ms: await's --wait (EDGELOCK_WAIT_FOREVER without it). */
int cmd_latch(const struct options *o, const char *action, const char *name, int64_t count, int64_t wait_ms);
/* list [PATTERN]: the locks present (list.c). */
int cmd_list(const struct options *o, const char *pattern, int json);
int cmd_unlock(const struct options *o, const char *name);

/* The name of the signals the CLI handles (SIGINT, SIGTERM, SIGHUP), for messages. */
const char *signal_name(int sig);

/* Adds to `set` those of SIGINT, SIGTERM and SIGHUP that are not ignored now
 * (SIG_IGN, as nohup or a non-interactive shell's `&` leave them). `run` and
 * `latch await` block and take with sigwaitinfo() only these: Linux queues a
 * blocked signal even when it is ignored, so blocking an ignored one would
 * hand it to sigwaitinfo(); left unblocked it stays ignored (the kernel drops
 * it), and CMD inherits the SIG_IGN across exec. Call before any thread starts
 * and before anything changes these dispositions. */
void add_unignored_stop_signals(sigset_t *set);

#endif
