// SPDX-License-Identifier: BSD-3-Clause
/*
 * edgelock(1): the distributed lock for shell scripts and operators, modelled
 * on flock(1).
 *
 *   edgelock [--url URL] run [--wait MS] [--lease MS | --watchdog MS] [--kill-after MS]
 *            [--fair | --read | --write | --fenced]
 *            [--multi NAME2,NAME3,... | --redlock URL2,URL3,...] NAME -- CMD [ARG...]
 *   edgelock [--url URL] run --permits N [--wait MS] [--lease MS | --watchdog MS] NAME -- CMD [ARG...]
 *   edgelock [--url URL] status NAME [--permits | --latch] [--json]
 *   edgelock [--url URL] latch set NAME COUNT | countdown NAME | count NAME | await NAME [--wait MS]
 *   edgelock [--url URL] unlock --force NAME
 *
 * Everything goes through the public C ABI only (edgelock.h, blocking calls on
 * clients that own their loop): `status` reads its snapshot with
 * edgelock_lock_info_get(), URLs are checked and shown with credentials masked
 * by edgelock_url_redact(). No Redis key name is built here.
 *
 * This file parses the command line and dispatches. The rest, one concern a
 * file: common.c (exit codes, messages, clients, failures), help.c (--help),
 * run.c (the `run` subcommand's main thread), lock_thread.c (its lock thread),
 * child.c (starting CMD), status.c, latch.c, list.c, unlock.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "escape.h"
#include "run.h"

static const char *kind_word(edgelock_lock_kind kind)
{
    switch (kind) {
    case EDGELOCK_FAIR: return "fair ";
    case EDGELOCK_READ: return "read ";
    case EDGELOCK_WRITE: return "write ";
    case EDGELOCK_FENCED: return "fenced ";
    default: return "";
    }
}

/* Splits a --multi / --redlock list in place into out[first..]; *n is the
 * count so far. 0, or a usage error. */
static int split_list(const char *flag, char *list, const char **out, size_t *n)
{
    for (char *p = list;;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = 0;
        if (!*p)
            return usage_error("%s: empty item in the comma-separated list", flag);
        if (*n >= EDGELOCK_MAX_MEMBERS)
            return usage_error("%s: at most %d members in all (NAME or --url included)", flag,
                               EDGELOCK_MAX_MEMBERS);
        out[(*n)++] = p;
        if (!comma)
            return 0;
        p = comma + 1;
    }
}

/* Fills the members of `run` (and the label for messages) from the lock kind
 * and composite flags. 0, or a usage error. */
static int run_members(const struct options *o, struct run_args *ra, const char *kind_flag,
                       const char *list_flag, const char *list_value, int watchdog_given, int lease_given)
{
    const char *kw = kind_word(ra->kind);
    char shown[600]; /* a name as messages show it (escape.h) */
    ra->shape = RUN_ONE;
    ra->n = 1;
    ra->names[0] = ra->name;
    ra->urls[0] = o->url;
    snprintf(ra->shown[0], sizeof(ra->shown[0]), "%s", o->shown_url);
    if (!list_flag) {
        if (ra->kind == EDGELOCK_PERMIT_SEMAPHORE)
            snprintf(ra->label, sizeof(ra->label), "permit of semaphore '%s'",
                     text_shown(shown, sizeof(shown), ra->name));
        else
            snprintf(ra->label, sizeof(ra->label), "%slock '%s'", kw,
                     text_shown(shown, sizeof(shown), ra->name));
        return 0;
    }
    if (kind_flag && ra->kind == EDGELOCK_FENCED)
        return usage_error("--fenced and %s exclude each other: a composite lock has no single token",
                           list_flag);
    if (strlen(list_value) >= sizeof(ra->list))
        return usage_error("%s: the list is longer than %zu bytes", list_flag, sizeof(ra->list) - 1);
    char *list = strcpy(ra->list, list_value);
    if (strcmp(list_flag, "--multi") == 0) {
        ra->shape = RUN_MULTI;
        int rc = split_list(list_flag, list, ra->names, &ra->n);
        if (rc)
            return rc;
        for (size_t i = 1; i < ra->n; i++) {
            if (strlen(ra->names[i]) > NAME_MAX_LEN)
                return usage_error("--multi: a lock name is longer than %u bytes", NAME_MAX_LEN);
            for (size_t j = 0; j < i; j++)
                if (strcmp(ra->names[i], ra->names[j]) == 0)
                    return usage_error("--multi: lock '%s' is named twice",
                                       text_shown(shown, sizeof(shown), ra->names[i]));
            ra->urls[i] = o->url;
            snprintf(ra->shown[i], sizeof(ra->shown[i]), "%s", o->shown_url);
        }
        size_t len = (size_t)snprintf(ra->label, sizeof(ra->label), "%sMultiLock '%s'", kw,
                                      text_shown(shown, sizeof(shown), ra->name));
        for (size_t i = 1; i < ra->n && len < sizeof(ra->label); i++)
            len += (size_t)snprintf(ra->label + len, sizeof(ra->label) - len, ", '%s'",
                                    text_shown(shown, sizeof(shown), ra->names[i]));
        return 0;
    }

    ra->shape = RUN_REDLOCK;
    if (watchdog_given || !lease_given)
        return usage_error("--redlock needs --lease MS: a RedLock is not renewed by the watchdog, "
                           "and the command is stopped when its validity runs out");
    int rc = split_list(list_flag, list, ra->urls, &ra->n);
    if (rc)
        return rc;
    for (size_t i = 1; i < ra->n; i++) {
        if (edgelock_url_redact(ra->urls[i], ra->shown[i], sizeof(ra->shown[i])) != EDGELOCK_OK)
            return usage_error("--redlock: server %zu of the list is not a valid URL (expected "
                               "redis://[user:password@]host[:port][/db]; not shown since it may hold a "
                               "password)",
                               i);
        for (size_t j = 0; j < i; j++)
            if (strcmp(ra->urls[i], ra->urls[j]) == 0)
                return usage_error("--redlock: server %zu is given twice; RedLock needs independent "
                                   "servers",
                                   i);
        ra->names[i] = ra->name;
    }
    snprintf(ra->label, sizeof(ra->label), "%sRedLock '%s' (%zu servers)", kw,
             text_shown(shown, sizeof(shown), ra->name), ra->n);
    return 0;
}

/* "--opt VALUE" or "--opt=VALUE": returns the value and advances *i, or NULL. */
static const char *opt_value(int argc, char **argv, int *i, const char *opt, int *err)
{
    size_t n = strlen(opt);
    const char *a = argv[*i];
    if (strncmp(a, opt, n) != 0)
        return NULL;
    if (a[n] == '=')
        return a + n + 1;
    if (a[n] != 0)
        return NULL;
    if (*i + 1 >= argc) {
        *err = 1;
        return NULL;
    }
    return argv[++*i];
}

/* flock(1)'s habits for run: -w SECONDS (fractional), -n, -E CODE and
 * -c STRING before NAME. 0: argv[*i] is none of them (or lacks its value:
 * *err); 1: taken; EXIT_USAGE: a bad value, said why. */
static int flock_option(int argc, char **argv, int *i, struct run_args *ra, const char **command, int *err)
{
    const char *a = argv[*i], *v;
    char shown[600];                     /* a value as messages show it */
    int name_len = (int)strcspn(a, "="); /* the option's name, without "=VALUE" */
    if (strcmp(a, "-n") == 0 || strcmp(a, "--nonblock") == 0) {
        ra->wait_ms = 0;
        return 1;
    }
    if ((v = opt_value(argc, argv, i, "-w", err)) != NULL ||
        (!*err && (v = opt_value(argc, argv, i, "--timeout", err)) != NULL)) {
        if (!parse_seconds(v, EDGELOCK_MAX_TIME_MS, &ra->wait_ms))
            return usage_error("%.*s: %s is not a number of seconds (fractions allowed: 0.5)", name_len, a,
                               arg_shown(shown, sizeof(shown), v));
        return 1;
    }
    if (!*err && ((v = opt_value(argc, argv, i, "-E", err)) != NULL ||
                  (!*err && (v = opt_value(argc, argv, i, "--conflict-exit-code", err)) != NULL))) {
        int64_t code;
        if (!parse_ms(v, 0, 255, &code))
            return usage_error("%.*s: %s is not an exit code (0 to 255)", name_len, a,
                               arg_shown(shown, sizeof(shown), v));
        ra->not_acquired_exit = (int)code;
        return 1;
    }
    if (!*err && ((v = opt_value(argc, argv, i, "-c", err)) != NULL ||
                  (!*err && (v = opt_value(argc, argv, i, "--command", err)) != NULL))) {
        if (*command)
            return usage_error("-c is given twice");
        *command = v;
        return 1;
    }
    return 0;
}

/* flock's -s (shared) and -x (exclusive) are the read and the write lock of
 * the read-write lock NAME: they exclude each other, and readers share. */
static const char *canonical_kind_flag(const char *a)
{
    if (strcmp(a, "-s") == 0 || strcmp(a, "--shared") == 0)
        return "--read";
    if (strcmp(a, "-x") == 0 || strcmp(a, "--exclusive") == 0)
        return "--write";
    return a;
}

/* Room for a URL or a password read from a file. */
static char url_from_file[4096];
static char password_from_file[256];
static char sentinel_password_from_file[256];

int main(int argc, char **argv)
{
    struct options o;
    memset(&o, 0, sizeof(o));
    const char *env = getenv("EDGELOCK_URL");
    o.url = env && *env ? env : DEFAULT_URL;
    tls.ca = getenv("EDGELOCK_TLS_CA");
    tls.cert = getenv("EDGELOCK_TLS_CERT");
    tls.key = getenv("EDGELOCK_TLS_KEY");
    tls.server_name = getenv("EDGELOCK_TLS_SERVER_NAME");

    int i = 1, err = 0;
    const char *v;
    char shown[600]; /* an argument as a usage error shows it (arg_shown()) */
    const char *sub = NULL;
    int json = 0, force = 0;
    struct run_args ra;
    memset(&ra, 0, sizeof(ra));
    ra.wait_ms = EDGELOCK_WAIT_FOREVER;
    ra.lease_ms = EDGELOCK_LEASE_WATCHDOG;
    ra.kill_after_ms = DEFAULT_KILL_AFTER_MS;
    ra.not_acquired_exit = EXIT_NOT_ACQUIRED;
    const char *command_string = NULL; /* -c STRING: CMD is sh -c STRING */
    int flock_rc = 0;
    int watchdog_given = 0, lease_given = 0;
    const char *kind_flag = NULL;   /* --fair, --read, --write or --fenced */
    const char *list_flag = NULL;   /* --multi or --redlock */
    const char *list_value = NULL;  /* its comma-separated list */
    int64_t permits = 0;            /* run --permits N: NAME is a semaphore of N permits */
    const char *status_kind = NULL; /* status --permits or --latch */
    const char *latch_action = NULL;
    const char *latch_count = NULL; /* latch set NAME COUNT */
    int64_t latch_wait_ms = EDGELOCK_WAIT_FOREVER;
    int latch_wait_given = 0;

    /* Options may come before or after the subcommand, up to NAME. */
    for (; i < argc; i++) {
        const char *a = argv[i];
        /* latch set NAME COUNT: the COUNT is what comes next. */
        const int latch_count_next = sub && strcmp(sub, "latch") == 0 && latch_action &&
                                     strcmp(latch_action, "set") == 0 && ra.name && !latch_count;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0 || (!sub && strcmp(a, "help") == 0)) {
            fputs(usage_text, stdout);
            fputs(help_text, stdout);
            return 0;
        }
        if (strcmp(a, "--version") == 0 || strcmp(a, "-V") == 0) {
            printf("edgelock %s (%s)\n", edgelock_version(), edgelock_tls_available() ? "TLS" : "no TLS");
            return 0;
        }
        if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            verbose = 1;
        } else if ((v = opt_value(argc, argv, &i, "--url", &err)) != NULL) {
            o.url = v;
        } else if (!err && (v = opt_value(argc, argv, &i, "--tls-ca", &err)) != NULL) {
            tls.ca = v;
        } else if (!err && (v = opt_value(argc, argv, &i, "--tls-cert", &err)) != NULL) {
            tls.cert = v;
        } else if (!err && (v = opt_value(argc, argv, &i, "--tls-key", &err)) != NULL) {
            tls.key = v;
        } else if (!err && (v = opt_value(argc, argv, &i, "--tls-server-name", &err)) != NULL) {
            tls.server_name = v;
        } else if (!err && (v = opt_value(argc, argv, &i, "--wait-replicas", &err)) != NULL) {
            int64_t n;
            if (!parse_ms(v, 0, 64, &n))
                return usage_error("--wait-replicas: %s is not a number of replicas (0 to 64)",
                                   arg_shown(shown, sizeof(shown), v));
            replicas.n = (uint32_t)n;
        } else if (!err && (v = opt_value(argc, argv, &i, "--wait-replicas-timeout", &err)) != NULL) {
            int64_t ms;
            if (!parse_duration(v, 1, 600000, &ms))
                return usage_error("--wait-replicas-timeout: %s is not a duration > 0 of at most 10m",
                                   arg_shown(shown, sizeof(shown), v));
            replicas.timeout_ms = (uint32_t)ms;
        } else if (!err && (v = opt_value(argc, argv, &i, "--sharded-pubsub", &err)) != NULL) {
            if (strcmp(v, "auto") == 0)
                sharded_pubsub = EDGELOCK_SHARDED_AUTO;
            else if (strcmp(v, "on") == 0)
                sharded_pubsub = EDGELOCK_SHARDED_ON;
            else if (strcmp(v, "off") == 0)
                sharded_pubsub = EDGELOCK_SHARDED_OFF;
            else
                return usage_error("--sharded-pubsub: %s is not auto, on or off",
                                   arg_shown(shown, sizeof(shown), v));
        } else if (strcmp(a, "--tls-insecure-skip-verify") == 0) {
            tls.insecure_skip_verify = 1;
        } else if (!err && (v = opt_value(argc, argv, &i, "--url-file", &err)) != NULL) {
            int rc = read_secret_file("--url-file", v, url_from_file, sizeof(url_from_file));
            if (rc)
                return rc;
            o.url = url_from_file;
        } else if (!err && (v = opt_value(argc, argv, &i, "--password-file", &err)) != NULL) {
            int rc = read_secret_file("--password-file", v, password_from_file, sizeof(password_from_file));
            if (rc)
                return rc;
            password = password_from_file;
        } else if (!err && (v = opt_value(argc, argv, &i, "--sentinel-password-file", &err)) != NULL) {
            int rc = read_secret_file("--sentinel-password-file", v, sentinel_password_from_file,
                                      sizeof(sentinel_password_from_file));
            if (rc)
                return rc;
            sentinel_password = sentinel_password_from_file;
        } else if (sub && strcmp(sub, "run") == 0 && (v = opt_value(argc, argv, &i, "--wait", &err))) {
            if (!parse_duration(v, 0, EDGELOCK_MAX_TIME_MS, &ra.wait_ms))
                return usage_error("--wait: %s is not a duration (MS, or with a unit: 500ms, 10s, 2m)",
                                   arg_shown(shown, sizeof(shown), v));
        } else if (sub && strcmp(sub, "run") == 0 && (v = opt_value(argc, argv, &i, "--permits", &err))) {
            if (!parse_ms(v, 1, MAX_PERMITS, &permits))
                return usage_error("--permits: %s is not a number of permits (1 to %d)",
                                   arg_shown(shown, sizeof(shown), v), MAX_PERMITS);
        } else if (sub && strcmp(sub, "latch") == 0 && (v = opt_value(argc, argv, &i, "--wait", &err))) {
            if (!parse_duration(v, 0, EDGELOCK_MAX_TIME_MS, &latch_wait_ms))
                return usage_error("--wait: %s is not a duration (MS, or with a unit: 500ms, 10s, 2m)",
                                   arg_shown(shown, sizeof(shown), v));
            latch_wait_given = 1;
        } else if (sub && strcmp(sub, "run") == 0 && (v = opt_value(argc, argv, &i, "--lease", &err))) {
            if (!parse_duration(v, 1, EDGELOCK_MAX_TIME_MS, &ra.lease_ms))
                return usage_error("--lease: %s is not a duration > 0 (MS, or 500ms, 10s, 2m)",
                                   arg_shown(shown, sizeof(shown), v));
            lease_given = 1;
        } else if (sub && strcmp(sub, "run") == 0 && (v = opt_value(argc, argv, &i, "--kill-after", &err))) {
            if (!parse_duration(v, 0, EDGELOCK_MAX_TIME_MS, &ra.kill_after_ms))
                return usage_error("--kill-after: %s is not a duration (MS, or 500ms, 10s, 2m)",
                                   arg_shown(shown, sizeof(shown), v));
        } else if (sub && strcmp(sub, "run") == 0 && (v = opt_value(argc, argv, &i, "--watchdog", &err))) {
            int64_t w;
            if (!parse_duration(v, 30, UINT32_MAX, &w))
                return usage_error("--watchdog: %s is not a duration of at least 30 ms",
                                   arg_shown(shown, sizeof(shown), v));
            ra.watchdog_ms = (uint32_t)w;
            watchdog_given = 1;
        } else if (!err && sub && strcmp(sub, "run") == 0 &&
                   (flock_rc = flock_option(argc, argv, &i, &ra, &command_string, &err)) != 0) {
            if (flock_rc != 1)
                return flock_rc;
        } else if (sub && strcmp(sub, "run") == 0 &&
                   (strcmp(a, "--fair") == 0 || strcmp(a, "--read") == 0 || strcmp(a, "--write") == 0 ||
                    strcmp(a, "--fenced") == 0 || strcmp(a, "-s") == 0 || strcmp(a, "--shared") == 0 ||
                    strcmp(a, "-x") == 0 || strcmp(a, "--exclusive") == 0)) {
            a = canonical_kind_flag(a);
            if (kind_flag && strcmp(kind_flag, a) != 0)
                return usage_error("%s and %s exclude each other: a lock has one kind", kind_flag, a);
            kind_flag = a;
            ra.kind = strcmp(a, "--fair") == 0    ? EDGELOCK_FAIR
                      : strcmp(a, "--read") == 0  ? EDGELOCK_READ
                      : strcmp(a, "--write") == 0 ? EDGELOCK_WRITE
                                                  : EDGELOCK_FENCED;
        } else if (sub && strcmp(sub, "run") == 0 &&
                   ((v = opt_value(argc, argv, &i, "--multi", &err)) != NULL ||
                    (!err && (v = opt_value(argc, argv, &i, "--redlock", &err)) != NULL))) {
            const char *flag = strncmp(a, "--multi", 7) == 0 ? "--multi" : "--redlock";
            if (list_flag)
                return usage_error("%s and %s exclude each other (each may be given once)", list_flag, flag);
            list_flag = flag;
            list_value = v;
        } else if (sub && (strcmp(sub, "status") == 0 || strcmp(sub, "list") == 0) &&
                   strcmp(a, "--json") == 0) {
            json = 1;
        } else if (sub && strcmp(sub, "status") == 0 &&
                   (strcmp(a, "--permits") == 0 || strcmp(a, "--latch") == 0)) {
            if (status_kind && strcmp(status_kind, a) != 0)
                return usage_error("%s and %s exclude each other: NAME is a semaphore or a latch",
                                   status_kind, a);
            status_kind = a;
        } else if (sub && strcmp(sub, "unlock") == 0 && strcmp(a, "--force") == 0) {
            force = 1;
        } else if (err) {
            return usage_error("%s needs a value", a);
        } else if (a[0] == '-' && a[1] != 0 && !(latch_count_next && a[1] >= '0' && a[1] <= '9')) {
            /* Its name only: "--URL=redis://:secret@host" is a typo for --url. A
             * negative COUNT is no option: its own check below says what is wrong. */
            return usage_error("unknown option %s%s", option_shown(shown, sizeof(shown), a),
                               sub ? "" : " (before the subcommand)");
        } else if (!sub) {
            sub = a;
            if (strcmp(sub, "run") != 0 && strcmp(sub, "status") != 0 && strcmp(sub, "unlock") != 0 &&
                strcmp(sub, "list") != 0 && strcmp(sub, "latch") != 0)
                return usage_error("unknown command %s", arg_shown(shown, sizeof(shown), sub));
        } else if (strcmp(sub, "latch") == 0 && !latch_action) {
            latch_action = a;
            if (strcmp(a, "set") != 0 && strcmp(a, "countdown") != 0 && strcmp(a, "count") != 0 &&
                strcmp(a, "await") != 0)
                return usage_error("latch: unknown action %s (set, countdown, count or await)",
                                   arg_shown(shown, sizeof(shown), a));
        } else if (!ra.name) {
            ra.name = a;
            if (strcmp(sub, "run") == 0) {
                i++;
                /* flock's form: NAME -c STRING */
                if (i < argc && (strcmp(argv[i], "-c") == 0 || strcmp(argv[i], "--command") == 0)) {
                    if (i + 1 >= argc)
                        return usage_error("%s needs a value", argv[i]);
                    if (command_string)
                        return usage_error("-c is given twice");
                    command_string = argv[i + 1];
                    i += 2;
                }
                if (i < argc && argv[i][0] == '-' && strcmp(argv[i], "--") != 0)
                    return usage_error("run: options go before NAME (%s after it)",
                                       option_shown(shown, sizeof(shown), argv[i]));
                break; /* the rest is [--] CMD [ARG...] */
            }
        } else if (latch_count_next) {
            latch_count = a;
        } else {
            return usage_error("unexpected argument %s", arg_shown(shown, sizeof(shown), a));
        }
        if (err)
            return usage_error("%s needs a value", a);
    }
    if (!sub)
        return usage_error("no command given");
    if (strcmp(sub, "list") == 0) {
        if (edgelock_url_redact(o.url, o.shown_url, sizeof(o.shown_url)) != EDGELOCK_OK)
            return usage_error("invalid URL (not shown since it may hold a password)");
        return cmd_list(&o, ra.name ? ra.name : "*", json);
    }
    if (strcmp(sub, "latch") == 0 && !latch_action)
        return usage_error("latch: no action given (set, countdown, count or await)");
    /* What NAME names, for the messages below. */
    const char *noun = "lock";
    if (strcmp(sub, "latch") == 0 || (status_kind && strcmp(status_kind, "--latch") == 0))
        noun = "latch";
    else if (permits || status_kind)
        noun = "semaphore";
    if (!ra.name)
        return usage_error("%s: no %s NAME given", sub, noun);
    if (!*ra.name)
        return usage_error("the %s NAME is empty", noun);
    if (strlen(ra.name) > NAME_MAX_LEN)
        return usage_error("the %s NAME is longer than %u bytes", noun, NAME_MAX_LEN);
    if (edgelock_url_redact(o.url, o.shown_url, sizeof(o.shown_url)) != EDGELOCK_OK)
        return usage_error("invalid URL (expected redis[s]://[user:password@]host[:port][/db], "
                           "redis[s]-sentinel://[user:password@]host[:port][,...]/master[/db] or "
                           "unix://[user:password@]/path[?db=N]; not shown "
                           "since it may hold a password)");

    if (strcmp(sub, "status") == 0) {
        if (status_kind && strcmp(status_kind, "--permits") == 0)
            return cmd_status_semaphore(&o, ra.name, json);
        if (status_kind)
            return cmd_status_latch(&o, ra.name, json);
        return cmd_status(&o, ra.name, json);
    }
    if (strcmp(sub, "latch") == 0) {
        int64_t count = 0;
        if (latch_wait_given && strcmp(latch_action, "await") != 0)
            return usage_error("--wait is an option of latch await only");
        if (strcmp(latch_action, "set") == 0) {
            if (!latch_count)
                return usage_error("latch set: no COUNT given (latch set NAME COUNT)");
            if (!parse_ms(latch_count, 1, MAX_LATCH_COUNT, &count))
                return usage_error("latch set: COUNT %s is not a number from 1 to %d",
                                   arg_shown(shown, sizeof(shown), latch_count), MAX_LATCH_COUNT);
        }
        return cmd_latch(&o, latch_action, ra.name, count, latch_wait_ms);
    }
    if (strcmp(sub, "unlock") == 0) {
        if (!force)
            return usage_error("unlock needs --force: it deletes the lock whoever holds it");
        return cmd_unlock(&o, ra.name);
    }

    /* run */
    static char *shell_cmd[4] = {"/bin/sh", "-c", NULL, NULL};
    if (command_string) {
        if (i < argc)
            return usage_error("-c STRING is the command: no CMD may follow NAME (%s)",
                               arg_shown(shown, sizeof(shown), argv[i]));
        shell_cmd[2] = (char *)command_string;
        argv = shell_cmd;
        argc = 3;
        i = 0;
    }
    if (i < argc && strcmp(argv[i], "--") == 0)
        i++;
    if (i >= argc)
        return usage_error("run: no command given after NAME");
    if (lease_given && watchdog_given)
        return usage_error("--lease and --watchdog exclude each other");
    if (permits) {
        if (kind_flag)
            return usage_error("--permits and %s exclude each other: --permits makes NAME a semaphore, not a "
                               "lock",
                               kind_flag);
        if (list_flag)
            return usage_error("--permits and %s exclude each other: a semaphore's permit is not a composite "
                               "lock",
                               list_flag);
        ra.kind = EDGELOCK_PERMIT_SEMAPHORE;
        ra.permits = permits;
    }
    if (!watchdog_given)
        ra.watchdog_ms = 30000;
    ra.cmd = argv + i;
    int rc = run_members(&o, &ra, kind_flag, list_flag, list_value, watchdog_given, lease_given);
    if (rc)
        return rc;
    return cmd_run(&o, &ra);
}
