/*
 * edgelock(1): the distributed lock for shell scripts and operators, modelled
 * on flock(1).
 *
 *   edgelock [--url URL] run [--wait MS] [--lease MS | --watchdog MS]
 *            [--fair | --read | --write | --fenced]
 *            [--multi NAME2,NAME3,... | --redlock URL2,URL3,...] NAME -- CMD [ARG...]
 *   edgelock [--url URL] status NAME [--json]
 *   edgelock [--url URL] unlock --force NAME
 *
 * Everything goes through the public C ABI only (edgelock.h, blocking calls on
 * clients that own their loop): `status` reads its snapshot with
 * edgelock_lock_info_get(), URLs are checked and shown with credentials masked
 * by edgelock_url_redact(). No Redis key name is built here.
 *
 * What `run` holds
 * ----------------
 * - one lock of one kind (reentrant, fair, read, write, fenced): one client,
 *   one handle, edgelock_try_lock_token() (the token is 0 except for fenced);
 * - --multi: a MultiLock over NAME and the listed names, all on the --url
 *   server: one client, one handle per name, edgelock_multi_try_lock();
 * - --redlock: a RedLock of NAME over the --url server and the listed ones:
 *   one client per server, edgelock_redlock_try_lock(), always with a fixed
 *   lease (no renewal), the validity it returns being how long CMD may run.
 *
 * How `run` is put together
 * -------------------------
 * - Every signal `run` reacts to (INT, TERM, HUP, CHLD, USR1) is blocked in
 *   every thread before the clients (and their loop threads) exist; the main
 *   thread alone takes them with sigwaitinfo(). No signal handler runs, so
 *   there is nothing async-signal-unsafe to get wrong.
 * - A helper "lock thread" makes the blocking calls: the reachability check,
 *   the acquire and, when CMD is done, the release. Blocking holds belong to
 *   the calling thread (on every member of a composite), so lock and unlock
 *   come from it. It reports to the main thread with pthread_kill(main, SIGUSR1).
 * - The lock-lost callback runs on a library loop thread: it sets an atomic
 *   flag and wakes the main thread with SIGUSR1 too.
 * - The main thread forks CMD, forwards INT/TERM/HUP to it, reaps it on
 *   SIGCHLD, and sends it SIGTERM when the lock is lost or its fixed lease (or
 *   RedLock validity) runs out.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <edgelock/edgelock.h>

/* Exit codes (sysexits.h values where one fits). CMD's own status passes through. */
enum {
    EXIT_USAGE = 64,        /* EX_USAGE: bad command line or URL */
    EXIT_UNAVAILABLE = 69,  /* EX_UNAVAILABLE: Redis cannot be reached (or refused AUTH) */
    EXIT_LOST = 70,         /* the lock was lost while CMD ran; CMD was sent SIGTERM */
    EXIT_OSERR = 71,        /* EX_OSERR: cannot fork, start a thread, allocate */
    EXIT_NOT_ACQUIRED = 75, /* EX_TEMPFAIL: not acquired within --wait */
    EXIT_REMOTE = 76,       /* EX_PROTOCOL: Redis answered with an error (e.g. NAME is not a lock) */
    EXIT_CANNOT_EXEC = 126,
    EXIT_NOT_FOUND = 127
};

#define DEFAULT_URL "redis://127.0.0.1:6379"
/* Connect and command timeouts: an unreachable Redis is reported within this. */
#define REDIS_TIMEOUT_MS 3000u
#define NAME_MAX_LEN 4096u /* the library's limit on lock names */

static const char *prog = "edgelock";
static int verbose = 0;

static const char usage_text[] =
    "usage: edgelock [--url URL] [-v] run [--wait MS] [--lease MS | --watchdog MS]\n"
    "                [--fair | --read | --write | --fenced]\n"
    "                [--multi NAME2,... | --redlock URL2,...] NAME [--] CMD [ARG...]\n"
    "       edgelock [--url URL] status NAME [--json]\n"
    "       edgelock [--url URL] unlock --force NAME\n"
    "       edgelock --help | --version\n";

static const char help_text[] =
    "\n"
    "A Redisson-compatible distributed lock for scripts: `run` takes the lock\n"
    "NAME (by default a reentrant RLock, visible to Java services using Redisson),\n"
    "runs CMD while holding it, releases it and exits with CMD's status.\n"
    "\n"
    "Global options:\n"
    "  --url URL       redis://[user:password@]host[:port][/db]. Default: the\n"
    "                  EDGELOCK_URL environment variable, else redis://127.0.0.1:6379.\n"
    "                  Credentials are never printed.\n"
    "  -v, --verbose   say on stderr when the lock is waited for, taken, released\n"
    "  -h, --help      this text\n"
    "  --version       the edgelock version\n"
    "\n"
    "run options:\n"
    "  --wait MS       give up after MS milliseconds (exit 75). 0: a single try.\n"
    "                  Without --wait: wait as long as it takes. Waiting is woken by\n"
    "                  the holder's unlock message or the expiry of its lease, never\n"
    "                  by polling.\n"
    "  --lease MS      fixed lease: the lock expires MS ms after it was taken. If CMD\n"
    "                  is still running then, the lock is lost (see exit 70).\n"
    "  --watchdog MS   watchdog lease (default 30000, at least 30): the lock is kept\n"
    "                  for MS ms and renewed every MS/3 while CMD runs, so it is\n"
    "                  freed at most MS ms after this process dies.\n"
    "  NAME            the lock's name (the Redis key of its hash)\n"
    "  --              ends the options; CMD and its arguments follow\n"
    "\n"
    "Lock kind (at most one; default: the reentrant lock, Redisson's RLock):\n"
    "  --fair          fair lock (RFairLock): waiters are served in arrival order,\n"
    "                  queued in redisson_lock_queue:{NAME}\n"
    "  --read          read lock of the read-write lock NAME (RReadWriteLock):\n"
    "                  any number of readers at once, no writer\n"
    "  --write         write lock of the read-write lock NAME: one writer, no reader\n"
    "  --fenced        fenced lock (RFencedLock): every acquire draws a new, higher\n"
    "                  token, passed to CMD as EDGELOCK_TOKEN. Give it to the\n"
    "                  resource you protect and make it refuse tokens lower than one\n"
    "                  it has seen: then a holder that was paused past its lease\n"
    "                  cannot overwrite the work of the next holder.\n"
    "\n"
    "Composite locks (at most one; not with --fenced):\n"
    "  --multi NAME2,NAME3,...\n"
    "                  MultiLock: NAME and every listed name, all on the --url\n"
    "                  server, all or nothing (taken in the order given; give every\n"
    "                  caller the same order). The watchdog renews each of them; a\n"
    "                  fixed --lease ends on all of them together. Losing any one is\n"
    "                  losing the lock (exit 70). Up to 16 names.\n"
    "  --redlock URL2,URL3,...\n"
    "                  RedLock: NAME on the --url server and on each listed server\n"
    "                  (independent Redis servers, 3 or 5 in all), held when a\n"
    "                  majority granted it. Needs --lease MS: a RedLock is not\n"
    "                  renewed. CMD gets EDGELOCK_VALIDITY_MS, the time it may rely\n"
    "                  on the lock; when that runs out while CMD still runs, CMD\n"
    "                  gets SIGTERM and run exits 70. Each server gets 1 s to answer.\n"
    "                  NOT SAFE against clock jumps or process pauses: a holder\n"
    "                  paused past its validity cannot tell, and nothing stops its\n"
    "                  late writes (Redisson deprecates RedissonRedLock for this).\n"
    "                  Prefer --fenced on one server when the resource can check a\n"
    "                  token.\n"
    "\n"
    "Environment passed to CMD (besides edgelock's own):\n"
    "  EDGELOCK_TOKEN        --fenced: the fencing token, decimal\n"
    "  EDGELOCK_VALIDITY_MS  --redlock: ms the lock may be relied on from CMD's start\n"
    "  Both are removed from CMD's environment when they do not apply.\n"
    "\n"
    "  SIGINT, SIGTERM and SIGHUP sent to `edgelock run` are forwarded to CMD (a\n"
    "  signal the terminal already sent to the whole foreground group is not sent\n"
    "  twice); the lock is released when CMD ends. While still waiting, they make\n"
    "  edgelock give up and exit 128+N. If edgelock itself is killed, CMD gets\n"
    "  SIGTERM (Linux) and the lock expires after its lease.\n"
    "\n"
    "status: prints whether NAME is free or held, each holder (owner field\n"
    "  \"<client id>:<thread id>\" and hold count), the remaining TTL, the mode of\n"
    "  a read-write lock, the queue of a fair lock with each waiter's deadline, and\n"
    "  the last fencing token issued. --json prints one JSON object:\n"
    "  {\"name\", \"state\": \"free\"|\"held\", \"ttl_ms\": ms or null (free, or no\n"
    "  expiry), \"mode\": string or null, \"holders\": [{\"owner\", \"count\"}],\n"
    "  \"queue\": [owner], \"waiters\": [{\"owner\", \"deadline_ms\", \"expires_in_ms\"}],\n"
    "  \"token\": number or null}\n"
    "  Exit 0 whether the lock is free or held.\n"
    "\n"
    "unlock --force: deletes NAME whoever holds it and publishes the unlock message\n"
    "  so waiters wake at once (Redisson's forceUnlock). Refuses a key that is not a lock.\n"
    "\n"
    "Exit codes:\n"
    "  N      run: CMD's own exit status; 128+N when CMD was killed by signal N\n"
    "  0      status / unlock: success\n"
    "  64     bad usage (unknown option, bad number, bad URL, missing NAME or CMD,\n"
    "         two lock kinds, --redlock without --lease)\n"
    "  69     Redis cannot be reached or refused the credentials (reported within\n"
    "         about 3 s, never a hang); --redlock: a majority of the servers cannot\n"
    "  70     run: the lock was lost while CMD ran (renewal failed, key deleted, Redis\n"
    "         gone for a whole lease, fixed --lease or RedLock validity ran out): CMD\n"
    "         was sent SIGTERM\n"
    "  71     operating-system error (cannot fork, start a thread, allocate)\n"
    "  75     run: the lock was not acquired within --wait\n"
    "  76     Redis answered with an error, e.g. NAME holds a value that is not a lock\n"
    "  126    run: CMD is not executable (the lock is not taken)\n"
    "  127    run: CMD not found (the lock is not taken)\n"
    "  128+N  run: interrupted by signal N while waiting for the lock\n"
    "\n"
    "Examples:\n"
    "  edgelock run --wait 0 firmware-update -- ./flash.sh image.bin\n"
    "  edgelock run --fenced cfg -- sh -c './push-config --token \"$EDGELOCK_TOKEN\"'\n"
    "  edgelock run --read sensor-db -- ./export.sh      # many at once\n"
    "  edgelock run --write sensor-db -- ./compact.sh    # alone\n"
    "  edgelock run --multi modem,gps uplink -- ./sync.sh\n"
    "  EDGELOCK_URL=redis://:secret@10.0.0.5:6379/2 edgelock status firmware-update --json\n";

static void msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void msg(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: %s\n", prog, buf);
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: %s\n%sTry 'edgelock --help' for more information.\n", prog, buf, usage_text);
    return EXIT_USAGE;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Strict decimal in [min, max]; no sign, no spaces, no suffix. */
static int parse_ms(const char *s, int64_t min, int64_t max, int64_t *out)
{
    int64_t v = 0;
    if (!s || !*s)
        return 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9')
            return 0;
        v = v * 10 + (*p - '0');
        if (v > max)
            return 0;
    }
    if (v < min)
        return 0;
    *out = v;
    return 1;
}

/* ------------------------------------------------------- common set-up -- */

struct options {
    const char *url;
    char shown_url[512]; /* redacted */
};

/* 1 when the lock thread, a library call or a status read says Redis is gone. */
static int is_unreachable(edgelock_status st)
{
    return st == EDGELOCK_ERR_CONNECTION || st == EDGELOCK_ERR_TIMEOUT;
}

/* The exit code for a failed library call, with its message on stderr.
 * `what` is what was being done ("acquiring"), `label` the lock ("lock 'x'"). */
static int report_failure(const char *shown_url, const char *what, const char *label, edgelock_status st)
{
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

/* A client that owns its loop, sized for `nlocks` lock handles of names up to
 * `max_name` bytes. 0, or an exit code (with its message said). */
static int create_client(const char *url, uint32_t nlocks, size_t max_name, uint32_t timeout_ms,
                         uint32_t watchdog_ms, edgelock_lock_lost_fn lost, void *lost_user,
                         edgelock_client **client)
{
    edgelock_config cfg;
    edgelock_config_init(&cfg);
    cfg.url = url;
    cfg.connect_timeout_ms = timeout_ms;
    cfg.command_timeout_ms = timeout_ms;
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
    if (st == EDGELOCK_ERR_INVALID_ARG)
        return usage_error("invalid configuration (URL or option)");
    if (st != EDGELOCK_OK) {
        msg("cannot create the client: %s", edgelock_status_str(st));
        return EXIT_OSERR;
    }
    return 0;
}

/* A lock handle of `kind` for `name` on `client`. 0, or an exit code. */
static int new_handle(edgelock_client *client, edgelock_lock_kind kind, const char *name, edgelock_lock *lock)
{
    edgelock_status st = edgelock_lock_new_kind(client, kind, name, strlen(name), lock);
    if (st == EDGELOCK_OK)
        return 0;
    if (st == EDGELOCK_ERR_INVALID_ARG)
        return usage_error("invalid lock name");
    msg("cannot create the lock handle: %s", edgelock_status_str(st));
    return EXIT_OSERR;
}

/* One client with one reentrant handle (status, unlock --force). */
static int make_client(const struct options *o, const char *name, edgelock_client **client,
                       edgelock_lock *lock)
{
    int rc = create_client(o->url, 1, strlen(name), REDIS_TIMEOUT_MS, 0, NULL, NULL, client);
    if (rc)
        return rc;
    rc = new_handle(*client, EDGELOCK_REENTRANT, name, lock);
    if (rc) {
        edgelock_client_destroy(*client);
        *client = NULL;
    }
    return rc;
}

/* ------------------------------------------------------------------ run -- */

/* What `run` holds: one lock, a MultiLock on one server, a RedLock on several. */
enum run_shape { RUN_ONE, RUN_MULTI, RUN_REDLOCK };

/* A RedLock member server gets this long to connect and to answer each command:
 * a stopped server then costs about this much once, not a whole wait. */
#define REDLOCK_TIMEOUT_MS 1000u

struct run_args {
    int64_t wait_ms;  /* EDGELOCK_WAIT_FOREVER or >= 0 */
    int64_t lease_ms; /* EDGELOCK_LEASE_WATCHDOG or > 0 (always > 0 for RUN_REDLOCK) */
    uint32_t watchdog_ms;
    const char *name;
    char **cmd;
    edgelock_lock_kind kind;
    enum run_shape shape;
    size_t n;                                /* members: 1, the --multi names or the --redlock servers */
    const char *names[EDGELOCK_MAX_MEMBERS]; /* the lock name of each member */
    const char *urls[EDGELOCK_MAX_MEMBERS];  /* the server of each member */
    char shown[EDGELOCK_MAX_MEMBERS][512];   /* those URLs, credentials masked */
    char label[1024];                        /* "lock 'x'", "MultiLock 'a', 'b'", ... for messages */
    char list[4096]; /* the --multi / --redlock value, split in place; names[] and urls[] point into it */
};

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

/* Shared by the main thread, the lock thread and the loop threads' callback. */
struct run_state {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t main_thread;
    const struct run_args *a;
    edgelock_client *clients[EDGELOCK_MAX_MEMBERS];
    size_t nclients;
    edgelock_member m[EDGELOCK_MAX_MEMBERS]; /* a->n of them */

    /* lock thread -> main, under mu */
    int acquire_done;
    edgelock_status check_st; /* reachability check */
    size_t reachable;         /* RedLock: servers that answered the check */
    edgelock_status acquire_st;
    int64_t token;        /* --fenced */
    int64_t validity_ms;  /* --redlock */
    uint64_t acquired_at; /* now_ms() when the acquire call returned */
    edgelock_status release_st;
    /* main -> lock thread, under mu */
    int release_requested;

    atomic_int lost; /* set by the lock-lost callback: 1 + the index of the member lost */
};

static void on_lock_lost(edgelock_client *client, edgelock_lock lock, uint64_t owner, void *user)
{
    (void)owner;
    struct run_state *s = user;
    int which = 1;
    for (size_t i = 0; i < s->a->n; i++)
        if (s->m[i].client == client && s->m[i].lock.id == lock.id)
            which = (int)i + 1;
    int none = 0;
    atomic_compare_exchange_strong(&s->lost, &none, which); /* the first loss is the one reported */
    pthread_kill(s->main_thread, SIGUSR1);                  /* the main thread takes it in sigwaitinfo() */
}

/* The reachability check of one member, on a thread of its own for RedLock. */
struct probe {
    edgelock_member m;
    edgelock_status st;
    int locked;
};

static void *probe_thread(void *arg)
{
    struct probe *p = arg;
    p->st = edgelock_is_locked(p->m.client, p->m.lock, &p->locked);
    return NULL;
}

/* A cheap check before waiting: a lock call waiting forever would otherwise
 * also wait forever for an unreachable Redis. One server (one lock or a
 * MultiLock): every member must answer. RedLock: the servers are asked at once
 * (a dead one costs its connect timeout once, not in turn) and a majority must
 * answer; each one that does not is named on stderr. *held: members held
 * elsewhere now. */
static edgelock_status check_members(struct run_state *s, int *held)
{
    const struct run_args *a = s->a;
    struct probe p[EDGELOCK_MAX_MEMBERS];
    pthread_t th[EDGELOCK_MAX_MEMBERS];
    int started[EDGELOCK_MAX_MEMBERS] = {0};
    *held = 0;
    for (size_t i = 0; i < a->n; i++) {
        p[i].m = s->m[i];
        p[i].locked = 0;
        if (a->shape == RUN_REDLOCK)
            started[i] = pthread_create(&th[i], NULL, probe_thread, &p[i]) == 0;
        if (!started[i]) {
            probe_thread(&p[i]);
            if (a->shape != RUN_REDLOCK && p[i].st != EDGELOCK_OK)
                return p[i].st; /* one server: no point asking about the others */
        }
    }
    edgelock_status first_err = EDGELOCK_OK;
    size_t ok = 0;
    for (size_t i = 0; i < a->n; i++) {
        if (started[i])
            pthread_join(th[i], NULL);
        if (p[i].st == EDGELOCK_OK) {
            ok++;
            *held += p[i].locked != 0;
        } else {
            if (first_err == EDGELOCK_OK || (is_unreachable(first_err) && !is_unreachable(p[i].st)))
                first_err = p[i].st; /* an answer with an error says more than silence */
            msg("RedLock server %s: %s", a->shown[i], edgelock_status_str(p[i].st));
        }
    }
    s->reachable = ok;
    if (a->shape == RUN_REDLOCK)
        return ok >= a->n / 2 + 1 ? EDGELOCK_OK : first_err;
    return first_err;
}

static void *lock_thread(void *arg)
{
    struct run_state *s = arg;
    const struct run_args *a = s->a;
    int held = 0;
    int64_t token = 0, validity = 0;
    edgelock_status check = check_members(s, &held);
    edgelock_status st = check;
    if (check == EDGELOCK_OK) {
        if (held && verbose) {
            char what[64] = "";
            if (a->shape == RUN_MULTI)
                snprintf(what, sizeof(what), " (%d of its %zu locks)", held, a->n);
            else if (a->shape == RUN_REDLOCK)
                snprintf(what, sizeof(what), " (on %d of %zu servers)", held, a->n);
            if (a->wait_ms == EDGELOCK_WAIT_FOREVER)
                msg("%s is held elsewhere%s; waiting for it", a->label, what);
            else
                msg("%s is held elsewhere%s; waiting up to %" PRId64 " ms", a->label, what, a->wait_ms);
        }
        switch (a->shape) {
        case RUN_ONE:
            st = edgelock_try_lock_token(s->m[0].client, s->m[0].lock, a->wait_ms, a->lease_ms, &token);
            break;
        case RUN_MULTI: st = edgelock_multi_try_lock(s->m, a->n, a->wait_ms, a->lease_ms); break;
        case RUN_REDLOCK:
            st = edgelock_redlock_try_lock(s->m, a->n, a->wait_ms, a->lease_ms, &validity);
            break;
        }
    }
    uint64_t at = now_ms();

    pthread_mutex_lock(&s->mu);
    s->check_st = check;
    s->acquire_st = st;
    s->token = token;
    s->validity_ms = validity;
    s->acquired_at = at;
    s->acquire_done = 1;
    pthread_kill(s->main_thread, SIGUSR1);
    if (st == EDGELOCK_OK)
        while (!s->release_requested)
            pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
    if (st != EDGELOCK_OK)
        return NULL;

    edgelock_status rst = EDGELOCK_OK;
    switch (a->shape) {
    case RUN_ONE: rst = edgelock_unlock(s->m[0].client, s->m[0].lock, NULL); break;
    case RUN_MULTI: rst = edgelock_multi_unlock(s->m, a->n); break;
    case RUN_REDLOCK: rst = edgelock_redlock_unlock(s->m, a->n); break;
    }
    pthread_mutex_lock(&s->mu);
    s->release_st = rst;
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* File descriptors open when edgelock started: CMD inherits these and only
 * these (the library's sockets are closed in the child). */
#define TRACKED_FDS 1024
static unsigned char inherited_fd[TRACKED_FDS];

static void note_inherited_fds(void)
{
    for (int fd = 0; fd < TRACKED_FDS; fd++)
        inherited_fd[fd] = fcntl(fd, F_GETFD) != -1;
}

/* PATH search done before the lock is taken (and before fork, where only
 * async-signal-safe calls are allowed). 0, or EXIT_NOT_FOUND / EXIT_CANNOT_EXEC. */
static int resolve_cmd(const char *cmd, char *out, size_t cap)
{
    struct stat sb;
    if (!*cmd)
        return EXIT_NOT_FOUND;
    if (strchr(cmd, '/')) {
        if ((size_t)snprintf(out, cap, "%s", cmd) >= cap)
            return EXIT_NOT_FOUND;
        if (stat(out, &sb) != 0)
            return EXIT_NOT_FOUND;
        return S_ISREG(sb.st_mode) && access(out, X_OK) == 0 ? 0 : EXIT_CANNOT_EXEC;
    }
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    int result = EXIT_NOT_FOUND;
    for (const char *p = path;;) {
        const char *colon = strchr(p, ':');
        size_t dlen = colon ? (size_t)(colon - p) : strlen(p);
        int n = dlen ? snprintf(out, cap, "%.*s/%s", (int)dlen, p, cmd) : snprintf(out, cap, "./%s", cmd);
        if (n > 0 && (size_t)n < cap && stat(out, &sb) == 0 && S_ISREG(sb.st_mode)) {
            if (access(out, X_OK) == 0)
                return 0;
            result = EXIT_CANNOT_EXEC;
        }
        if (!colon)
            break;
        p = colon + 1;
    }
    return result;
}

/* The variables `run` sets for CMD. Inherited values are dropped, so that
 * CMD never mistakes an outer `edgelock run`'s token for its own. */
static const char *const child_vars[] = {"EDGELOCK_TOKEN=", "EDGELOCK_VALIDITY_MS="};
#define CHILD_VARS (sizeof(child_vars) / sizeof(child_vars[0]))

extern char **environ;

/* edgelock's environment without child_vars, plus the non-NULL `add` strings
 * ("NAME=value"). Built before fork. NULL when out of memory. */
static char **child_environment(char *const add[CHILD_VARS])
{
    size_t n = 0;
    for (char **e = environ; e && *e; e++)
        n++;
    char **env = malloc((n + CHILD_VARS + 1) * sizeof(*env));
    if (!env)
        return NULL;
    size_t k = 0;
    for (char **e = environ; e && *e; e++) {
        int ours = 0;
        for (size_t v = 0; v < CHILD_VARS; v++)
            ours |= strncmp(*e, child_vars[v], strlen(child_vars[v])) == 0;
        if (!ours)
            env[k++] = *e;
    }
    for (size_t v = 0; v < CHILD_VARS; v++)
        if (add[v])
            env[k++] = add[v];
    env[k] = NULL;
    return env;
}

/* In the child, between fork and exec: async-signal-safe calls only. */
static void exec_child(const char *path, char **argv, char **envp, const sigset_t *orig_mask, pid_t parent,
                       int restore_sigchld_ignore)
{
#ifdef __linux__
    /* If edgelock dies (even by SIGKILL), CMD must not run on unprotected. */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent)
        _exit(128 + SIGTERM); /* it died before prctl() */
#else
    (void)parent;
#endif
    if (restore_sigchld_ignore)
        signal(SIGCHLD, SIG_IGN);
    sigprocmask(SIG_SETMASK, orig_mask, NULL);
    for (int fd = 3; fd < TRACKED_FDS; fd++)
        if (!inherited_fd[fd])
            close(fd);
    execve(path, argv, envp);
    int err = errno;
    static const char m1[] = "edgelock: cannot execute ";
    static const char m2[] = "\n";
    ssize_t w = write(2, m1, sizeof(m1) - 1);
    w = write(2, path, strlen(path));
    w = write(2, m2, 1);
    (void)w;
    _exit(err == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC);
}

static const char *signame(int sig)
{
    switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    case SIGHUP: return "SIGHUP";
    default: return "signal";
    }
}

/* Ends the lock thread: asks it to release (when it holds the lock) and joins it. */
static void finish_lock_thread(struct run_state *s, pthread_t th)
{
    pthread_mutex_lock(&s->mu);
    s->release_requested = 1;
    pthread_cond_signal(&s->cv);
    pthread_mutex_unlock(&s->mu);
    pthread_join(th, NULL);
}

static void destroy_clients(struct run_state *s)
{
    for (size_t i = 0; i < s->nclients; i++)
        edgelock_client_destroy(s->clients[i]);
    s->nclients = 0;
}

/* The clients and handles of `run`: one client for one lock or a MultiLock,
 * one per server for a RedLock. 0, or an exit code (nothing left behind). */
static int make_members(const struct options *o, const struct run_args *a, struct run_state *s)
{
    size_t max_name = 0;
    for (size_t i = 0; i < a->n; i++)
        if (strlen(a->names[i]) > max_name)
            max_name = strlen(a->names[i]);
    for (size_t i = 0; i < a->n; i++) {
        edgelock_client *c;
        if (a->shape == RUN_REDLOCK || i == 0) {
            uint32_t nlocks = a->shape == RUN_MULTI ? (uint32_t)a->n : 1;
            uint32_t timeout = a->shape == RUN_REDLOCK ? REDLOCK_TIMEOUT_MS : REDIS_TIMEOUT_MS;
            int rc = create_client(a->shape == RUN_REDLOCK ? a->urls[i] : o->url, nlocks, max_name, timeout,
                                   a->watchdog_ms, on_lock_lost, s, &c);
            if (rc) {
                destroy_clients(s);
                return rc;
            }
            s->clients[s->nclients++] = c;
        }
        s->m[i].client = s->clients[s->nclients - 1];
        int rc = new_handle(s->m[i].client, a->kind, a->names[i], &s->m[i].lock);
        if (rc) {
            destroy_clients(s);
            return rc;
        }
    }
    return 0;
}

static int cmd_run(const struct options *o, const struct run_args *a)
{
    char path[PATH_MAX];
    int rc = resolve_cmd(a->cmd[0], path, sizeof(path));
    if (rc) {
        msg("%s: %s", a->cmd[0], rc == EXIT_NOT_FOUND ? "command not found" : "permission denied");
        return rc;
    }

    /* SIGCHLD must not be ignored (children would be reaped by the kernel). */
    struct sigaction old_chld;
    sigaction(SIGCHLD, NULL, &old_chld);
    int sigchld_was_ignored = old_chld.sa_handler == SIG_IGN;
    signal(SIGCHLD, SIG_DFL);

    sigset_t handled, orig_mask;
    sigemptyset(&handled);
    sigaddset(&handled, SIGINT);
    sigaddset(&handled, SIGTERM);
    sigaddset(&handled, SIGHUP);
    sigaddset(&handled, SIGCHLD);
    sigaddset(&handled, SIGUSR1);
    /* Before any thread exists, so the loop and lock threads inherit the mask. */
    pthread_sigmask(SIG_BLOCK, &handled, &orig_mask);
    note_inherited_fds();

    static struct run_state s; /* static: the loop threads' callback points at it */
    memset(&s, 0, sizeof(s));
    pthread_mutex_init(&s.mu, NULL);
    pthread_cond_init(&s.cv, NULL);
    s.main_thread = pthread_self();
    s.a = a;
    atomic_init(&s.lost, 0);

    rc = make_members(o, a, &s);
    if (rc)
        return rc;

    pthread_t th;
    if (pthread_create(&th, NULL, lock_thread, &s) != 0) {
        msg("cannot start a thread");
        destroy_clients(&s);
        return EXIT_OSERR;
    }

    /* Phase 1: waiting for the lock. */
    uint64_t wait_start = now_ms();
    for (;;) {
        siginfo_t si;
        int sig = sigwaitinfo(&handled, &si);
        if (sig < 0)
            continue; /* EINTR */
        pthread_mutex_lock(&s.mu);
        int done = s.acquire_done;
        if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP) {
            pthread_mutex_unlock(&s.mu);
            if (done && s.acquire_st == EDGELOCK_OK) { /* got it just now: give it back */
                finish_lock_thread(&s, th);
                destroy_clients(&s);
                msg("%s received; %s released without running the command", signame(sig), a->label);
                return 128 + sig;
            }
            /* The API cannot cancel a blocking lock call, and a client must not
             * be destroyed under a thread that may still enter it: leave at once.
             * Nothing is held (an acquire whose reply is still on its way would
             * expire with its lease; a fair lock's queue entry lapses after its
             * window). */
            msg("%s received while waiting for %s; gave up", signame(sig), a->label);
            _exit(128 + sig);
        }
        pthread_mutex_unlock(&s.mu);
        if (done)
            break;
    }

    if (s.acquire_st != EDGELOCK_OK) {
        edgelock_status st = s.acquire_st;
        pthread_join(th, NULL);
        destroy_clients(&s);
        if (st == EDGELOCK_ERR_WAIT_TIMEOUT) {
            msg("%s not acquired within %" PRId64 " ms", a->label, a->wait_ms);
            return EXIT_NOT_ACQUIRED;
        }
        if (a->shape == RUN_REDLOCK && is_unreachable(st)) {
            if (s.check_st != EDGELOCK_OK)
                msg("cannot reach Redis: %zu of the %zu RedLock servers answered, a majority (%zu) is "
                    "needed",
                    s.reachable, a->n, a->n / 2 + 1);
            else
                msg("cannot reach Redis: a majority of the %zu RedLock servers did not answer while "
                    "acquiring %s",
                    a->n, a->label);
            return EXIT_UNAVAILABLE;
        }
        return report_failure(o->shown_url, s.check_st != EDGELOCK_OK ? "checking" : "acquiring", a->label,
                              st);
    }
    uint64_t acquired_at = s.acquired_at;
    if (verbose) {
        char extra[64] = "";
        if (a->kind == EDGELOCK_FENCED)
            snprintf(extra, sizeof(extra), "token %" PRId64 ", ", s.token);
        if (a->shape == RUN_REDLOCK)
            msg("acquired %s after %" PRIu64 " ms (fixed lease %" PRId64 " ms, validity %" PRId64 " ms)",
                a->label, acquired_at - wait_start, a->lease_ms, s.validity_ms);
        else if (a->lease_ms == EDGELOCK_LEASE_WATCHDOG)
            msg("acquired %s after %" PRIu64 " ms (%swatchdog lease %u ms, renewed every %u ms)", a->label,
                acquired_at - wait_start, extra, a->watchdog_ms, a->watchdog_ms / 3);
        else
            msg("acquired %s after %" PRIu64 " ms (%sfixed lease %" PRId64 " ms)", a->label,
                acquired_at - wait_start, extra, a->lease_ms);
    }

    /* Phase 2: CMD runs while we hold the lock. */
    char token_var[64], validity_var[64];
    char *add[CHILD_VARS] = {NULL, NULL};
    if (a->kind == EDGELOCK_FENCED) {
        snprintf(token_var, sizeof(token_var), "EDGELOCK_TOKEN=%" PRId64, s.token);
        add[0] = token_var;
    }
    if (a->shape == RUN_REDLOCK) {
        snprintf(validity_var, sizeof(validity_var), "EDGELOCK_VALIDITY_MS=%" PRId64, s.validity_ms);
        add[1] = validity_var;
    }
    char **envp = child_environment(add);
    pid_t parent = getpid();
    pid_t child = envp ? fork() : -1;
    if (child < 0) {
        int err = envp ? errno : ENOMEM;
        finish_lock_thread(&s, th);
        destroy_clients(&s);
        free(envp);
        msg("cannot start the command: %s", strerror(err));
        return EXIT_OSERR;
    }
    if (child == 0)
        exec_child(path, a->cmd, envp, &orig_mask, parent, sigchld_was_ignored);
    free(envp);

    int lost_reported = 0;
    int status = 0;
    /* A fixed lease, or a RedLock's validity, ends at a known time: the lock is
     * then gone (nothing renews it), whether or not anyone else notices. */
    uint64_t lease_end = 0;
    if (a->shape == RUN_REDLOCK)
        lease_end = acquired_at + (uint64_t)s.validity_ms;
    else if (a->lease_ms > 0)
        lease_end = acquired_at + (uint64_t)a->lease_ms;
    for (;;) {
        siginfo_t si;
        int sig;
        /* Checked on every turn, not only on SIGUSR1: the lost callback's
         * SIGUSR1 may have merged with the lock thread's, taken in phase 1. */
        int lost = atomic_load(&s.lost);
        if (lost && !lost_reported) {
            lost_reported = 1;
            char which[600] = "";
            if (a->shape == RUN_MULTI)
                snprintf(which, sizeof(which), "lock '%s' of the ", a->names[lost - 1]);
            msg("%s%s was lost while the command was running (renewal failed: key "
                "deleted or expired, or Redis gone for a whole lease); sending SIGTERM to "
                "the command (pid %ld)",
                which, a->label, (long)child);
            kill(child, SIGTERM);
        }
        if (lease_end && !lost_reported) {
            uint64_t now = now_ms();
            uint64_t left = lease_end > now ? lease_end - now : 0;
            struct timespec ts = {(time_t)(left / 1000), (long)(left % 1000) * 1000000L};
            sig = sigtimedwait(&handled, &si, &ts);
            if (sig < 0 && errno == EAGAIN) {
                lost_reported = 1;
                if (a->shape == RUN_REDLOCK)
                    msg("RedLock validity of %" PRId64 " ms on %s ran out while the command was "
                        "running (a RedLock is not renewed: give --lease room for the command); "
                        "sending SIGTERM to the command (pid %ld)",
                        s.validity_ms, a->label, (long)child);
                else
                    msg("fixed lease of %" PRId64 " ms on %s ran out while the command was "
                        "running; sending SIGTERM to the command (pid %ld)",
                        a->lease_ms, a->label, (long)child);
                kill(child, SIGTERM);
                continue;
            }
        } else {
            sig = sigwaitinfo(&handled, &si);
        }
        if (sig < 0)
            continue;
        if (sig == SIGCHLD) {
            pid_t r = waitpid(child, &status, WNOHANG);
            if (r == child)
                break;
        } else if (sig == SIGUSR1) {
            /* a wake-up: the lost flag is checked at the top of the loop */
        } else {
            /* The terminal sends its signals to the whole foreground process
             * group, CMD included (SI_KERNEL): forwarding would double them. */
            if (si.si_code != SI_KERNEL) {
                kill(child, sig);
                if (verbose)
                    msg("forwarded %s to the command (pid %ld)", signame(sig), (long)child);
            }
        }
    }
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;

    /* Release (the lock thread owns the hold). */
    finish_lock_thread(&s, th);
    edgelock_status rst = s.release_st;
    if (rst == EDGELOCK_OK) {
        if (verbose)
            msg("released %s after %" PRIu64 " ms", a->label, now_ms() - acquired_at);
    } else if (rst == EDGELOCK_ERR_LOST || rst == EDGELOCK_ERR_NOT_OWNER) {
        if (!lost_reported)
            msg("%s was lost before the command finished (%s)", a->label, edgelock_status_str(rst));
        lost_reported = 1;
    } else {
        msg("could not release %s: %s; it expires on its own within its lease", a->label,
            edgelock_status_str(rst));
    }
    destroy_clients(&s);
    pthread_mutex_destroy(&s.mu);
    pthread_cond_destroy(&s.cv);
    return lost_reported ? EXIT_LOST : code;
}

/* --------------------------------------------------------------- status -- */

static void json_string(FILE *f, const char *s, size_t n)
{
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20 || ch == 0x7f)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

/* Printable text for a person: control bytes escaped. */
static void text_string(FILE *f, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch < 0x20 || ch == 0x7f)
            fprintf(f, "\\x%02x", ch);
        else
            fputc(ch, f);
    }
}

/* Text for ms as "S.mmm s" (ms >= 0). */
static void print_secs(FILE *f, int64_t ms)
{
    fprintf(f, "%" PRId64 ".%03" PRId64 " s", ms / 1000, ms % 1000);
}

/* The bytes of an entry's owner field that the snapshot holds. */
static size_t owner_len(const edgelock_lock_entry *e)
{
    return e->owner_len < sizeof(e->owner) - 1 ? e->owner_len : sizeof(e->owner) - 1;
}

/* "lock 'NAME'" for messages, the name cut to fit. */
static void lock_label(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "lock '%.500s'", name);
}

/* Entries read before a larger array is tried; most locks have one holder and
 * no queue. */
#define INFO_FIRST_CAP 32
/* Reads left when holders or waiters keep arriving faster than the arrays grow. */
#define INFO_READS 8

/* The snapshot of `lock` with every holder and waiter in it: read with small
 * arrays and, while Redis has more entries than they hold, again with arrays of
 * the size the last read reported (and some room). *holders and *queue are
 * malloc'ed (free them). 0, or an exit code (message said). */
static int read_lock_info(edgelock_client *c, edgelock_lock lk, const struct options *o, const char *name,
                          edgelock_lock_info *info, edgelock_lock_entry **holders,
                          edgelock_lock_entry **queue)
{
    size_t hcap = INFO_FIRST_CAP, qcap = INFO_FIRST_CAP;
    *holders = NULL;
    *queue = NULL;
    for (int read = 0;; read++) {
        free(*holders);
        free(*queue);
        *holders = malloc(hcap * sizeof(**holders));
        *queue = malloc(qcap * sizeof(**queue));
        if (!*holders || !*queue) {
            msg("cannot allocate the list of holders and waiters of '%s'", name);
            return EXIT_OSERR;
        }
        memset(info, 0, sizeof(*info));
        info->holders = *holders;
        info->holders_cap = hcap;
        info->queue = *queue;
        info->queue_cap = qcap;
        edgelock_status st = edgelock_lock_info_get(c, lk, info);
        if (st != EDGELOCK_OK) {
            char label[600];
            lock_label(label, sizeof(label), name);
            return report_failure(o->shown_url, "reading", label, st);
        }
        if ((info->holder_count <= hcap && info->queue_count <= qcap) || read + 1 == INFO_READS)
            return 0; /* complete, or as much as could be had (the counts say what is missing) */
        if (info->holder_count > hcap)
            hcap = info->holder_count + info->holder_count / 2;
        if (info->queue_count > qcap)
            qcap = info->queue_count + info->queue_count / 2;
    }
}

static void print_json(const char *name, const edgelock_lock_info *info, size_t nholders, size_t nq)
{
    int held = info->state == EDGELOCK_LOCK_HELD;
    printf("{\"name\":");
    json_string(stdout, name, strlen(name));
    printf(",\"state\":\"%s\",\"ttl_ms\":", held ? "held" : "free");
    if (held && info->ttl_ms >= 0)
        printf("%" PRId64, info->ttl_ms);
    else
        printf("null");
    printf(",\"mode\":");
    if (info->mode[0])
        json_string(stdout, info->mode, strlen(info->mode));
    else
        printf("null");
    printf(",\"holders\":[");
    for (size_t i = 0; i < nholders; i++) {
        const edgelock_lock_entry *e = &info->holders[i];
        printf("%s{\"owner\":", i ? "," : "");
        json_string(stdout, e->owner, owner_len(e));
        printf(",\"count\":%" PRId64 "}", e->value);
    }
    printf("],\"queue\":[");
    for (size_t i = 0; i < nq; i++) {
        if (i)
            putchar(',');
        json_string(stdout, info->queue[i].owner, owner_len(&info->queue[i]));
    }
    printf("],\"waiters\":[");
    for (size_t i = 0; i < nq; i++) {
        const edgelock_lock_entry *e = &info->queue[i];
        printf("%s{\"owner\":", i ? "," : "");
        json_string(stdout, e->owner, owner_len(e));
        if (e->value != -1)
            printf(",\"deadline_ms\":%" PRId64 ",\"expires_in_ms\":%" PRId64 "}", e->value,
                   e->value - info->redis_time_ms);
        else
            printf(",\"deadline_ms\":null,\"expires_in_ms\":null}");
    }
    printf("],\"token\":");
    if (info->has_token)
        printf("%" PRId64, info->token);
    else
        printf("null");
    printf("}\n");
}

static void print_text(const char *name, const edgelock_lock_info *info, size_t nholders, size_t nq)
{
    text_string(stdout, name, strlen(name));
    if (info->state != EDGELOCK_LOCK_HELD) {
        printf(": free\n");
    } else {
        printf(": held");
        if (info->mode[0]) {
            printf(" (mode ");
            text_string(stdout, info->mode, strlen(info->mode));
            printf(")");
        }
        if (info->ttl_ms >= 0) {
            printf(", expires in ");
            print_secs(stdout, info->ttl_ms);
            putchar('\n');
        } else {
            printf(", no expiry\n");
        }
        printf("  %zu holder%s:\n", info->holder_count, info->holder_count == 1 ? "" : "s");
        for (size_t i = 0; i < nholders; i++) {
            printf("    ");
            text_string(stdout, info->holders[i].owner, owner_len(&info->holders[i]));
            printf("  count %" PRId64 "\n", info->holders[i].value);
        }
        if (nholders < info->holder_count)
            printf("    ... and %zu more (they kept arriving faster than they could be read)\n",
                   info->holder_count - nholders);
    }
    if (info->queue_count) {
        int64_t now = info->redis_time_ms;
        printf("  %zu queued (served in this order):\n", info->queue_count);
        for (size_t i = 0; i < nq; i++) {
            const edgelock_lock_entry *e = &info->queue[i];
            printf("    %zu. ", i + 1);
            text_string(stdout, e->owner, owner_len(e));
            if (e->value == -1) {
                printf("  (no deadline)\n");
            } else if (e->value >= now) {
                printf("  deadline in ");
                print_secs(stdout, e->value - now);
                putchar('\n');
            } else {
                printf("  deadline passed ");
                print_secs(stdout, now - e->value);
                printf(" ago (dropped at the next attempt)\n");
            }
        }
        if (nq < info->queue_count)
            printf("    ... and %zu more (they kept arriving faster than they could be read)\n",
                   info->queue_count - nq);
    }
    if (info->has_token)
        printf("  fencing token: %" PRId64 " (the last one issued)\n", info->token);
}

static int cmd_status(const struct options *o, const char *name, int json)
{
    edgelock_client *c;
    edgelock_lock lk;
    int code = make_client(o, name, &c, &lk);
    if (code)
        return code;
    /* One snapshot, read by the library in one atomic step: the hash and its
     * TTL, a fair lock's queue with each waiter's deadline, a fenced lock's
     * last token, and Redis's own time to read the deadlines against. */
    edgelock_lock_info info;
    edgelock_lock_entry *holders, *queue;
    code = read_lock_info(c, lk, o, name, &info, &holders, &queue);
    edgelock_client_destroy(c);
    if (!code && info.state == EDGELOCK_LOCK_WRONG_TYPE) {
        msg("'%s' is a Redis %s, not a lock", name, info.redis_type);
        code = EXIT_REMOTE;
    }
    if (!code) {
        size_t nholders = info.holder_count < info.holders_cap ? info.holder_count : info.holders_cap;
        size_t nq = info.queue_count < info.queue_cap ? info.queue_count : info.queue_cap;
        if (info.state != EDGELOCK_LOCK_HELD)
            nholders = 0;
        if (json)
            print_json(name, &info, nholders, nq);
        else
            print_text(name, &info, nholders, nq);
        code = fflush(stdout) == 0 ? 0 : EXIT_OSERR;
    }
    free(holders);
    free(queue);
    return code;
}

/* --------------------------------------------------------------- unlock -- */

static int cmd_unlock(const struct options *o, const char *name)
{
    edgelock_client *c;
    edgelock_lock lk;
    int rc = make_client(o, name, &c, &lk);
    if (rc)
        return rc;
    /* Force unlock deletes the key whatever it holds: look at its type first
     * and refuse a key that is not a lock. */
    edgelock_lock_info info;
    memset(&info, 0, sizeof(info));
    edgelock_status st = edgelock_lock_info_get(c, lk, &info);
    if (st == EDGELOCK_OK && info.state == EDGELOCK_LOCK_WRONG_TYPE) {
        edgelock_client_destroy(c);
        msg("'%s' holds a Redis value that is not a lock; not deleted", name);
        return EXIT_REMOTE;
    }
    int deleted = 0;
    if (st == EDGELOCK_OK)
        st = edgelock_force_unlock(c, lk, &deleted);
    edgelock_client_destroy(c);
    if (st != EDGELOCK_OK) {
        char label[600];
        lock_label(label, sizeof(label), name);
        return report_failure(o->shown_url, "force-unlocking", label, st);
    }
    printf("%s: %s\n", name, deleted ? "force-unlocked (waiters notified)" : "was not held");
    return 0;
}

/* ----------------------------------------------------------------- main -- */

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
    ra->shape = RUN_ONE;
    ra->n = 1;
    ra->names[0] = ra->name;
    ra->urls[0] = o->url;
    snprintf(ra->shown[0], sizeof(ra->shown[0]), "%s", o->shown_url);
    if (!list_flag) {
        snprintf(ra->label, sizeof(ra->label), "%slock '%s'", kw, ra->name);
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
                    return usage_error("--multi: lock '%s' is named twice", ra->names[i]);
            ra->urls[i] = o->url;
            snprintf(ra->shown[i], sizeof(ra->shown[i]), "%s", o->shown_url);
        }
        size_t len = (size_t)snprintf(ra->label, sizeof(ra->label), "%sMultiLock '%s'", kw, ra->name);
        for (size_t i = 1; i < ra->n && len < sizeof(ra->label); i++)
            len += (size_t)snprintf(ra->label + len, sizeof(ra->label) - len, ", '%s'", ra->names[i]);
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
    snprintf(ra->label, sizeof(ra->label), "%sRedLock '%s' (%zu servers)", kw, ra->name, ra->n);
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

int main(int argc, char **argv)
{
    struct options o;
    memset(&o, 0, sizeof(o));
    const char *env = getenv("EDGELOCK_URL");
    o.url = env && *env ? env : DEFAULT_URL;

    int i = 1, err = 0;
    const char *v;
    const char *sub = NULL;
    int json = 0, force = 0;
    struct run_args ra;
    memset(&ra, 0, sizeof(ra));
    ra.wait_ms = EDGELOCK_WAIT_FOREVER;
    ra.lease_ms = EDGELOCK_LEASE_WATCHDOG;
    int watchdog_given = 0, lease_given = 0;
    const char *kind_flag = NULL;  /* --fair, --read, --write or --fenced */
    const char *list_flag = NULL;  /* --multi or --redlock */
    const char *list_value = NULL; /* its comma-separated list */

    /* Options may come before or after the subcommand, up to NAME. */
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0 || (!sub && strcmp(a, "help") == 0)) {
            fputs(usage_text, stdout);
            fputs(help_text, stdout);
            return 0;
        }
        if (strcmp(a, "--version") == 0) {
            printf("edgelock %d.%d.%d\n", EDGELOCK_VERSION_MAJOR, EDGELOCK_VERSION_MINOR,
                   EDGELOCK_VERSION_PATCH);
            return 0;
        }
        if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            verbose = 1;
        } else if ((v = opt_value(argc, argv, &i, "--url", &err)) != NULL) {
            o.url = v;
        } else if (sub && strcmp(sub, "run") == 0 && (v = opt_value(argc, argv, &i, "--wait", &err))) {
            if (!parse_ms(v, 0, EDGELOCK_MAX_TIME_MS, &ra.wait_ms))
                return usage_error("--wait: '%s' is not a number of milliseconds", v);
        } else if (sub && strcmp(sub, "run") == 0 && (v = opt_value(argc, argv, &i, "--lease", &err))) {
            if (!parse_ms(v, 1, EDGELOCK_MAX_TIME_MS, &ra.lease_ms))
                return usage_error("--lease: '%s' is not a number of milliseconds > 0", v);
            lease_given = 1;
        } else if (sub && strcmp(sub, "run") == 0 && (v = opt_value(argc, argv, &i, "--watchdog", &err))) {
            int64_t w;
            if (!parse_ms(v, 30, UINT32_MAX, &w))
                return usage_error("--watchdog: '%s' is not a number of milliseconds >= 30", v);
            ra.watchdog_ms = (uint32_t)w;
            watchdog_given = 1;
        } else if (sub && strcmp(sub, "run") == 0 &&
                   (strcmp(a, "--fair") == 0 || strcmp(a, "--read") == 0 || strcmp(a, "--write") == 0 ||
                    strcmp(a, "--fenced") == 0)) {
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
        } else if (sub && strcmp(sub, "status") == 0 && strcmp(a, "--json") == 0) {
            json = 1;
        } else if (sub && strcmp(sub, "unlock") == 0 && strcmp(a, "--force") == 0) {
            force = 1;
        } else if (err) {
            return usage_error("%s needs a value", a);
        } else if (a[0] == '-' && a[1] != 0) {
            return usage_error("unknown option '%s'%s", a, sub ? "" : " (before the subcommand)");
        } else if (!sub) {
            sub = a;
            if (strcmp(sub, "run") != 0 && strcmp(sub, "status") != 0 && strcmp(sub, "unlock") != 0)
                return usage_error("unknown command '%s'", sub);
        } else if (!ra.name) {
            ra.name = a;
            if (strcmp(sub, "run") == 0) {
                i++;
                if (i < argc && argv[i][0] == '-' && strcmp(argv[i], "--") != 0)
                    return usage_error("run: options go before NAME ('%s' after it)", argv[i]);
                break; /* the rest is [--] CMD [ARG...] */
            }
        } else {
            return usage_error("unexpected argument '%s'", a);
        }
        if (err)
            return usage_error("%s needs a value", a);
    }
    if (!sub)
        return usage_error("no command given");
    if (!ra.name)
        return usage_error("%s: no lock NAME given", sub);
    if (!*ra.name)
        return usage_error("the lock NAME is empty");
    if (strlen(ra.name) > NAME_MAX_LEN)
        return usage_error("the lock NAME is longer than %u bytes", NAME_MAX_LEN);
    if (edgelock_url_redact(o.url, o.shown_url, sizeof(o.shown_url)) != EDGELOCK_OK)
        return usage_error("invalid URL (expected redis://[user:password@]host[:port][/db]; not shown "
                           "since it may hold a password)");

    if (strcmp(sub, "status") == 0)
        return cmd_status(&o, ra.name, json);
    if (strcmp(sub, "unlock") == 0) {
        if (!force)
            return usage_error("unlock needs --force: it deletes the lock whoever holds it");
        return cmd_unlock(&o, ra.name);
    }

    /* run */
    if (i < argc && strcmp(argv[i], "--") == 0)
        i++;
    if (i >= argc)
        return usage_error("run: no command given after NAME");
    if (lease_given && watchdog_given)
        return usage_error("--lease and --watchdog exclude each other");
    if (!watchdog_given)
        ra.watchdog_ms = 30000;
    ra.cmd = argv + i;
    int rc = run_members(&o, &ra, kind_flag, list_flag, list_value, watchdog_given, lease_given);
    if (rc)
        return rc;
    return cmd_run(&o, &ra);
}
