// SPDX-License-Identifier: BSD-3-Clause
/*
 * edgelock: Redisson-compatible distributed locks for edge devices.
 *
 * The whole public C ABI. A C gateway and a Java service using Redisson 4.x can
 * contend for the same lock: same key, hash field, channel and Lua semantics.
 *
 * Blocking use (the client owns a loop thread; calls are safe from any thread):
 *
 *     edgelock_config cfg;
 *     edgelock_client *c;
 *     edgelock_lock lk;
 *     edgelock_config_init(&cfg);
 *     cfg.url = "redis://127.0.0.1:6379";
 *     if (edgelock_client_create(&cfg, NULL, &c) != EDGELOCK_OK) return 1;
 *     edgelock_lock_new(c, "firmware-update", 15, &lk);
 *     if (edgelock_try_lock(c, lk, 5000, EDGELOCK_LEASE_WATCHDOG) == EDGELOCK_OK) {
 *         ... flash the firmware; the watchdog keeps the lease alive ...
 *         edgelock_unlock(c, lk, NULL);
 *     }
 *     edgelock_lock_free(c, lk);
 *     edgelock_client_destroy(c);
 *
 * Event-loop use: pass your own `struct event_base` to edgelock_client_create()
 * and use the *_async calls from the thread that runs that base.
 *
 * Threads and callbacks
 * ---------------------
 * - Async calls (`*_async`) must be made on the loop thread: the thread running
 *   the caller's event_base, or, for a client that owns its loop, from inside an
 *   edgelock callback. Elsewhere they return EDGELOCK_ERR_WRONG_THREAD (when the
 *   library can tell).
 * - If an async call returns anything but EDGELOCK_OK its callback never fires.
 *   If it returns EDGELOCK_OK its callback fires exactly once, on the loop
 *   thread, never from inside the call itself, including at client destruction
 *   (then with EDGELOCK_ERR_SHUTDOWN).
 * - Inside a callback every async call is allowed, and so is
 *   edgelock_client_destroy() (the release completes when control returns to the
 *   event loop). Blocking calls inside a callback return EDGELOCK_ERR_WRONG_THREAD.
 * - Calls made in event-loop mode before the loop first runs are queued: the
 *   connection is made, and they go out, once the loop runs. Their deadlines
 *   (command_timeout_ms, the wait) count from the call, so a loop started
 *   later than that completes them at once with CONNECTION or TIMEOUT.
 * - Blocking calls need a client that owns its loop (created with base == NULL);
 *   they may be made from any number of threads at once. The owner of a lock
 *   taken by a blocking call is the calling thread, as in Redisson.
 * - A client that owns its loop runs it on one thread at a time: a blocking
 *   call that finds no other call inside the library runs the loop on its own
 *   thread until its reply arrives (no hop to another thread), and serves the
 *   calls other threads make meanwhile. While nothing else needs the loop it
 *   reads its reply from the socket itself (hiredis 1.x, plain connections:
 *   the command connection's socket is blocking with a 1 ms receive timeout,
 *   every other read and write of it non-blocking); a reply slower than that
 *   is awaited in the loop, and a pass of the loop runs at least once a
 *   grace (below) however busy the callers are. With no call inside, the client's own
 *   thread runs it (after a grace of a twentieth of the watchdog's period,
 *   2 to 20 ms, and up to half a grace more), so the watchdog renews and loss is reported while your
 *   threads do other work. So on such a client "the loop
 *   thread" is whichever thread runs the loop at that moment: on_lock_lost and
 *   the callbacks of async calls made from callbacks may run on the client's
 *   thread or inside any thread's blocking call to that client. Keep them short
 *   and non-blocking; blocking calls in them return EDGELOCK_ERR_WRONG_THREAD.
 * - Local calls (lock_new, lock_free, lock_valid, client_stats) work in both modes: on a
 *   client that owns its loop from any thread, otherwise on the loop thread.
 * - SIGPIPE: a Redis that closes a connection while the client writes to it
 *   could raise SIGPIPE, whose default action ends the process. With hiredis
 *   1.x a plain (not TLS) connection writes with MSG_NOSIGNAL: the write
 *   fails with EPIPE, the connection is re-made, no signal is raised, in both
 *   modes. TLS connections (OpenSSL writes the socket) and every connection
 *   with hiredis 0.14 can raise it: there a client that owns its loop blocks
 *   SIGPIPE on its own thread, and on a caller's thread for as long as a
 *   blocking call runs the loop there, discarding one raised meanwhile; the
 *   thread's signal mask is as it was when the call returns (a process that
 *   ignores SIGPIPE before creating the client spares those three system
 *   calls per blocking call). In event-loop mode with TLS or hiredis 0.14 the
 *   writes happen on your loop's thread: ignore or block SIGPIPE there, as
 *   for any socket code.
 *
 * Memory
 * ------
 * All state lives in tables whose capacities come from edgelock_config and are
 * allocated once by edgelock_client_create(). Nothing grows afterwards; a full
 * table is EDGELOCK_ERR_TABLE_FULL and changes nothing. (hiredis and libevent
 * allocate internally per command and per connection; that is outside
 * edgelock's code, except one block of 32 bytes (64-bit) per connection attempt
 * for its socket events' state, freed with that connection.)
 */
#ifndef EDGELOCK_EDGELOCK_H
#define EDGELOCK_EDGELOCK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The C ABI's functions: exported from libedgelock.so, which is built with
 * hidden visibility (nothing else of the library is visible), and plain
 * declarations for the static library. */
#if defined(__GNUC__)
#define EDGELOCK_API __attribute__((visibility("default")))
#else
#define EDGELOCK_API
#endif

/* EDGELOCK_VERSION_MAJOR, _MINOR, _PATCH, _STRING, _NUMBER: generated from
 * CMakeLists.txt's project(VERSION), installed next to this header. */
#include "edgelock/version.h"

/** The version of the library linked in, "MAJOR.MINOR.PATCH" (static storage).
 *  Any thread, any time, even before a client exists. */
EDGELOCK_API const char *edgelock_version(void);

struct event_base; /* libevent */

/** A client: connections to one Redis server plus the fixed tables. Opaque. */
typedef struct edgelock_client edgelock_client;

/**
 * A lock handle: a value, not a pointer. It names one slot of the client's lock
 * table plus that slot's generation, so a handle used after edgelock_lock_free()
 * gets EDGELOCK_ERR_STALE_HANDLE, never another lock's slot. A handle belongs to
 * the client that made it: each client starts its generations at a random
 * value, so another client's handle gets STALE_HANDLE too (the chance that it
 * names one of this client's locks is about 1 in 2^32). {0} is never valid.
 */
typedef struct edgelock_lock {
    uint64_t id;
} edgelock_lock;

/** Every call returns one of these. edgelock_status_str() names each. */
typedef enum edgelock_status {
    EDGELOCK_OK = 0,
    EDGELOCK_ERR_INVALID_ARG = -1,   /* NULL pointer, empty/over-long name, time out of range */
    EDGELOCK_ERR_TABLE_FULL = -2,    /* a configured capacity is exhausted; nothing changed */
    EDGELOCK_ERR_WAIT_TIMEOUT = -3,  /* the lock was not acquired within the wait time */
    EDGELOCK_ERR_NOT_OWNER = -4,     /* unlock by a caller that does not hold the lock; nothing changed */
    EDGELOCK_ERR_LOST = -5,          /* the caller held the lock and lost it (expired, deleted, Redis gone) */
    EDGELOCK_ERR_CONNECTION = -6,    /* Redis unreachable or the connection dropped before an answer */
    EDGELOCK_ERR_TIMEOUT = -7,       /* Redis did not answer within command_timeout_ms */
    EDGELOCK_ERR_REDIS = -8,         /* Redis answered with an error (e.g. WRONGTYPE: key of another type) */
    EDGELOCK_ERR_SHUTDOWN = -9,      /* the client is being destroyed */
    EDGELOCK_ERR_STALE_HANDLE = -10, /* the handle was freed, never made, or is another client's */
    EDGELOCK_ERR_WRONG_THREAD =
        -11,                 /* async call off the loop thread, or blocking call where it would deadlock */
    EDGELOCK_ERR_BUSY = -12, /* lock_free on a lock that is held or has calls in flight; a second group
                                of expirable permits for one owner and handle */
    EDGELOCK_ERR_NO_MEMORY = -13,      /* edgelock_client_create() could not allocate its tables */
    EDGELOCK_ERR_PROTOCOL = -14,       /* Redis answered with a reply of an unexpected shape */
    EDGELOCK_ERR_TLS = -15,            /* TLS: a CA, certificate or key file could not be used, the server's
                                          certificate or name did not verify, the handshake failed or did
                                          not finish within connect_timeout_ms (a plaintext port, or a
                                          server frozen after it accepted), or rediss:// on a build
                                          without TLS; a refused connection is CONNECTION */
    EDGELOCK_ERR_NOT_REPLICATED = -16, /* fewer than wait_replicas replicas acknowledged the write in time
                                          (see edgelock_config.wait_replicas: what the caller may assume) */
    EDGELOCK_ERR_AUTH = -17,          /* Redis refused the connection setup: wrong password, unknown ACL user,
                                        database out of range, or ACL forbids a command. Reported instead of
                                        CONNECTION while the last connection attempt was refused so. */
    EDGELOCK_ERR_CANCELLED = -18,     /* edgelock_cancel() ended the lock call; nothing is held by it */
    EDGELOCK_ERR_PAGE_TOO_SMALL = -19 /* edgelock_scan_locks(): the page held more names than the array;
                                         the cursor did not move (see there) */
} edgelock_status;

/** Static text for a status, never NULL (unknown values give "unknown status"). */
EDGELOCK_API const char *edgelock_status_str(edgelock_status s);

/** wait_ms: wait until the lock is acquired, however long that takes. */
#define EDGELOCK_WAIT_FOREVER (-1)
/** lease_ms: no fixed lease; the watchdog renews watchdog_lease_ms every third of it. */
#define EDGELOCK_LEASE_WATCHDOG (-1)
/** The largest wait or lease accepted, in ms (about 31 years). */
#define EDGELOCK_MAX_TIME_MS 1000000000000LL

/**
 * Called on the loop thread when a lock held under the watchdog is lost: the
 * renewal found the hash field gone (expired, deleted, Redis restarted) or the
 * connection stayed down for a whole lease. `owner` is the owner id that held it
 * (the thread id for blocking holders). The hold is gone from the client; a
 * later unlock by that owner returns EDGELOCK_ERR_LOST (the client keeps a
 * marker for that in the hold's slot, which a lock call that finds the hold
 * table full may take, oldest loss first: that unlock is then NOT_OWNER).
 */
typedef void (*edgelock_lock_lost_fn)(edgelock_client *client, edgelock_lock lock, uint64_t owner,
                                      void *user);

/** Sharded pub/sub on a cluster, as Redisson's shardedSubscriptionMode. */
typedef enum edgelock_sharded_pubsub {
    /** Default, as Redisson's AUTO: sharded when the cluster's nodes answer
     *  PUBSUB SHARDNUMSUB (Redis 7 and later), plain pub/sub otherwise. Needs a
     *  build with hiredis 1.0 or later (edgelock_client_create() says
     *  INVALID_ARG on bookworm's 0.14 unless OFF). */
    EDGELOCK_SHARDED_AUTO = 0,
    /** Always SPUBLISH/SSUBSCRIBE (hiredis 1.0 or later). */
    EDGELOCK_SHARDED_ON = 1,
    /** Always PUBLISH/SUBSCRIBE: for clusters whose Redisson side has
     *  shardedSubscriptionMode OFF. */
    EDGELOCK_SHARDED_OFF = 2
} edgelock_sharded_pubsub;

/** How much a log line matters (edgelock_config.log_fn). */
typedef enum edgelock_log_level {
    EDGELOCK_LOG_ERROR = 0, /**< a call cannot work as configured (a TLS file, a refused setup) */
    EDGELOCK_LOG_WARN = 1,  /**< a connection dropped, a lock lost, a refusal from Redis */
    EDGELOCK_LOG_INFO = 2,  /**< connections made, masters and slot maps learned */
    EDGELOCK_LOG_DEBUG = 3  /**< redirects and retries on a cluster */
} edgelock_log_level;

/** Receives one log line (edgelock_config.log_fn). */
typedef void (*edgelock_log_fn)(void *user, edgelock_log_level level, const char *message);

/** Client configuration. Always fill with edgelock_config_init() first. */
typedef struct edgelock_config {
    /** redis://[user:password@]host:port[/db], rediss://... for TLS (see the
     *  tls_* fields), Sentinel:
     *  redis-sentinel://[user:password@]host[:port][,host[:port]...]/mastername[/db]
     *  (the sentinels are asked in turn for the master, port 26379 by default;
     *  the credentials and db are the master's; the client also stays
     *  subscribed to +switch-master on one sentinel and moves to a new master
     *  as soon as the sentinels announce it), rediss-sentinel://... the same
     *  with TLS to the sentinels and to the master, or a unix socket:
     *  unix://[user:password@]/path/to/redis.sock[?db=N] (the path at most 107
     *  bytes), or a Redis Cluster:
     *  redis-cluster://[user:password@]host[:port][,host[:port]...] (up to 8
     *  seed nodes, port 6379 by default; no db: a cluster has only db 0),
     *  rediss-cluster://... the same over TLS to every node. On a cluster the
     *  client learns the slot map (CLUSTER SLOTS) from any node, sends each
     *  lock call to the master of its lock's slot, follows MOVED and ASK, and
     *  retries TRYAGAIN and CLUSTERDOWN within the call's command timeout
     *  (see max_nodes, sharded_pubsub). Default "redis://127.0.0.1:6379". The
     *  user and password are percent-decoded (RFC 3986: "%40" is '@', "%3A"
     *  ':', "%25" '%'); a '%' without two hex digits, or "%00", makes the URL
     *  invalid (EDGELOCK_ERR_INVALID_ARG). The credentials end at the last
     *  '@' (unix://: the last "@/"). A user with an empty password
     *  ("alice:@") authenticates as that user (AUTH alice ""). A host is
     *  letters, digits, '-', '.' and '_', or an IPv6 address in brackets;
     *  any other character makes the URL invalid. The string is copied; host
     *  names are resolved with the system resolver. */
    const char *url;
    /** TLS, for rediss:// and rediss-sentinel:// URLs (a build with TLS: see
     *  edgelock_tls_available()).
     *  tls_ca: a CA file (PEM) or a directory of hashed CA certificates to
     *  verify the server with; NULL: the system's default store. */
    const char *tls_ca;
    /** A client certificate (PEM, with its chain) and its private key, for a
     *  server that asks for one (tls-auth-clients); both or neither. The key
     *  must be unencrypted PEM: an encrypted one fails client creation with
     *  EDGELOCK_ERR_TLS (it is never prompted for a passphrase). */
    const char *tls_cert;
    const char *tls_key;
    /** The name sent as SNI and checked against the server's certificate
     *  (hiredis checks the chain only; edgelock checks the name too). NULL: the
     *  host connected to (the URL's; with Sentinel, each sentinel's as written
     *  in the URL, and the master's address as the sentinels name it); an IP
     *  address is checked as one. Set, it is checked on every connection,
     *  sentinels included. At most 255 bytes. */
    const char *tls_server_name;
    /** 1: skip verifying the server's certificate chain and name. INSECURE:
     *  anyone on the path can pose as the server. Default 0. */
    int tls_insecure_skip_verify;
    /** Replica acknowledgement, like Redisson's synced-replica check: 0 (default)
     *  off; N > 0: every lock and unlock is followed, in the same round trip,
     *  by WAIT N wait_replicas_timeout_ms, and fewer than N acknowledgements
     *  give EDGELOCK_ERR_NOT_REPLICATED:
     *  - lock: the lock was taken on the master and edgelock released it again
     *    at once (one release, sent without waiting for its answer): the caller
     *    does not hold it. Until that release is through, others may still see
     *    it held.
     *  - unlock: the lock is released on the master, but a replica promoted by
     *    a failover soon after may still show it held until its lease ends.
     *  - watchdog renewals: each batch is followed by WAIT too, and a renewal
     *    counts (extends what edgelock_lock_valid() allows) only once the
     *    replicas have it; while they do not, the hold runs out by the last
     *    replicated renewal and is reported lost (on_lock_lost), as a
     *    failover to such a replica would find it.
     *  On a cluster the WAIT counts the replicas of the master that granted
     *  the lock (asked again there if a redirect made it answer elsewhere).
     *  wait_replicas_timeout_ms (default 1000) must be below command_timeout_ms:
     *  WAIT holds the command connection that long at most. */
    uint32_t wait_replicas;
    uint32_t wait_replicas_timeout_ms;
    /** redis-sentinel:// URLs: NULL (default), or the sentinels' own password
     *  (AUTH sent to each sentinel; the URL's credentials are the master's).
     *  At most 255 bytes; copied at creation. */
    const char *sentinel_password;
    /** NULL (default), or the password for AUTH, used instead of any in the URL
     *  (with the URL's user, if it names one): a password kept out of URLs,
     *  command lines and logs. At most 255 bytes; copied at creation. */
    const char *password;
    /** The client id in the owner field "<client id>:<owner id>". NULL (default):
     *  a random UUID. Otherwise at most 63 bytes without ':'. */
    const char *client_id;

    /* Capacities: each table is allocated once at client creation. Sizing: a
     * lock call in flight holds one hold, one waiter and one command slot
     * (and a subscription per distinct lock waited on, shared); an unlock holds
     * a command slot; each lock held holds a hold. So N threads calling
     * try_lock at once need about N of max_holds, max_waiters and
     * max_commands (with the defaults, 1,000 concurrent try_locks got 805
     * TABLE_FULL). Check edgelock_stats.tables[].high_water and .full under
     * real load. Each slot's cost is in docs/FOOTPRINT.md; generous sizes
     * cost memory, not time: an unlock message finds its channel by name and
     * visits only the lock calls waiting on it, however many wait on other
     * locks, and the scans the watchdog and the command timer make grow with
     * the most entries in use at once (high_water), not with these
     * capacities. */
    uint32_t max_locks; /** lock handles (default 64) */
    /** (lock, owner) pairs held at once (default 64). A pair whose fixed
     *  lease ran out without an unlock keeps its slot until the watchdog's
     *  next tick (a third of watchdog_lease_ms; after an unlock of unknown
     *  outcome, until that unlock's latch has expired too), or gives it up at
     *  once to a lock call that finds the table full; a pair the watchdog
     *  found lost keeps it as a marker until its owner's next call
     *  (on_lock_lost), or gives it up to such a call when no lease has run
     *  out. */
    uint32_t max_holds;
    uint32_t max_waiters;       /** lock calls waiting for an unlock at once (default 64) */
    uint32_t max_subscriptions; /** distinct lock channels waited on at once (default 32) */
    uint32_t max_commands;      /** Redis commands queued or in flight at once (default 128) */
    uint32_t max_name_len;      /** longest lock name in bytes (default 128, at most 4096) */

    uint32_t watchdog_lease_ms; /** lease under the watchdog (default 30000, at least 30) */
    /** every Redis command, queued time included (default 3000). Also the
     *  subscriber connection's keepalive: while it carries a subscription it
     *  sends PING every max(command_timeout_ms, 3000) ms and is re-made
     *  (subscriptions included, waiters retry) when no answer comes within
     *  command_timeout_ms. A path that died without a reset is so noticed
     *  within that interval plus command_timeout_ms (6 s by default), not at
     *  the holder's lease end (a redis-cluster:// client's subscriber on
     *  each node too). hiredis before 1.1 (0.14) drops the answer to a
     *  subscribed PING: there it sends SUBSCRIBE to a channel it is on
     *  already (Redis confirms it again, nothing changes) instead. */
    uint32_t command_timeout_ms;
    uint32_t connect_timeout_ms; /** TCP connect + AUTH + SELECT (default 3000) */
    uint32_t reconnect_min_ms;   /** first reconnect delay (default 100) */
    /** reconnect delay cap, doubling up to it (default 5000). The delay
     *  starts over from reconnect_min_ms only once a connection has stayed
     *  up this long: one dropped right after its setup each time (an ACL
     *  refusing the SUBSCRIBE, a READONLY master) keeps backing off. */
    uint32_t reconnect_max_ms;
    uint32_t unlock_latch_ttl_ms; /** TTL of Redisson's unlock latch key (default 16000) */
    /** fair lock: a queued waiter's window, how long past its turn (the
     *  lease or the deadline ahead of it) its place is kept, so that one
     *  that died queued lapses. A lock call with a wait of its own uses that
     *  wait (up to UINT32_MAX ms) as Redisson's RFairLock does; this is the
     *  window of those without one: 0 and EDGELOCK_WAIT_FOREVER (default
     *  300000). */
    uint32_t fair_wait_ms;

    /** Called when a watchdog hold is lost (may be NULL). */
    edgelock_lock_lost_fn on_lock_lost;
    void *on_lock_lost_user;

    /** redis-cluster:// only: the cluster nodes the client can know at once,
     *  seeds included (default 16, 1 to 64). Each costs a command and a
     *  subscriber connection once used; a map naming more masters than fit
     *  leaves their slots unreachable (calls to them fail with CONNECTION; the
     *  give-back of a lock call whose outcome was unknown, which waits for
     *  Redis as long as it takes, waits until a map gives their master an
     *  entry, and lock_free says BUSY for that handle meanwhile). */
    uint32_t max_nodes;
    /** redis-cluster:// only: whether unlock messages go out with SPUBLISH and
     *  waiters listen with SSUBSCRIBE on the master of the channel's slot
     *  (Redis 7 sharded pub/sub) or with PUBLISH/SUBSCRIBE. Both sides of a
     *  lock must agree: a SUBSCRIBE never hears an SPUBLISH. */
    edgelock_sharded_pubsub sharded_pubsub;

    /** Where the library's log goes: log_fn(log_user, level, message) for each
     *  line as important as log_level or more (default EDGELOCK_LOG_WARN).
     *  NULL (the default): stderr, and only while the EDGELOCK_LOG environment
     *  variable names a level (0 errors .. 3 debug). log_fn runs on the thread
     *  that runs the client's engine at that moment (the client's loop thread,
     *  a blocking caller leading the loop, your event loop's thread, or the
     *  caller of edgelock_client_create()), never for one client on two
     *  threads at once; clients that share a log_fn may call it at once from
     *  different threads. message is one line, no newline, at most 511 bytes,
     *  valid during the call. It never holds a secret: no password or other
     *  credential, no URL with credentials, no TLS key. Keep it short: the
     *  engine waits for it. Outside 0..3, log_level makes client_create()
     *  return EDGELOCK_ERR_INVALID_ARG. */
    edgelock_log_fn log_fn;
    void *log_user;
    edgelock_log_level log_level;
} edgelock_config;

/** Fill every field of *cfg with its default. */
EDGELOCK_API void edgelock_config_init(edgelock_config *cfg);

/**
 * Create a client and allocate all its tables.
 * base != NULL: the client runs on the caller's event_base (event-loop mode);
 *   only async calls can be used, on the thread that runs the base. Create it
 *   with EVENT_BASE_FLAG_PRECISE_TIMER for timers to the millisecond: by
 *   default libevent's clock moves in kernel ticks (1-4 ms), and edgelock,
 *   which never acts before its time by its own clock (a wait never ends
 *   before wait_ms), then runs its timers up to a tick late. The client's own
 *   loop (base == NULL) is precise.
 * base == NULL: the client starts and owns a loop thread; blocking and local
 *   calls work from any thread, async calls from inside edgelock callbacks.
 * Connecting happens in the background; calls made before it completes are
 * queued (bounded by command_timeout_ms). *out is set only on EDGELOCK_OK.
 * Errors: INVALID_ARG (NULL, bad URL or field; a cluster URL whose
 * sharded_pubsub this build cannot serve, see edgelock_sharded_pubsub_available),
 * TLS (rediss: the TLS files cannot be used, or no TLS in this build), NO_MEMORY.
 */
EDGELOCK_API edgelock_status edgelock_client_create(const edgelock_config *cfg, struct event_base *base,
                                                    edgelock_client **out);

/**
 * Destroy a client (NULL is accepted). Every pending async call completes with
 * EDGELOCK_ERR_SHUTDOWN, an async MultiLock or RedLock with a member on it
 * too (after giving back what it holds on the other clients); blocking calls
 * still running in other threads return EDGELOCK_ERR_SHUTDOWN, and so does a
 * blocking MultiLock or RedLock with a member on it, wherever it waits: its
 * wait on another member's client ends, it gives back what it holds on the
 * other clients (what it took on this one is left to expire, as below), and
 * the destroy returns once it has. Locks still
 * held are left to expire in Redis (their watchdog stops). In event-loop mode
 * call it on the loop thread; from inside an edgelock callback the memory is
 * released when control returns to the loop, so keep the loop running until
 * then. For an owned loop, do not call it from an edgelock callback.
 */
EDGELOCK_API void edgelock_client_destroy(edgelock_client *client);

/** The client id used in owner fields (static for the client's life). */
EDGELOCK_API const char *edgelock_client_id(const edgelock_client *client);

/** The client's tables, as indexes of edgelock_stats.tables. */
typedef enum edgelock_table {
    EDGELOCK_TABLE_LOCKS = 0,         /* max_locks: lock handles */
    EDGELOCK_TABLE_HOLDS = 1,         /* max_holds */
    EDGELOCK_TABLE_WAITERS = 2,       /* max_waiters */
    EDGELOCK_TABLE_SUBSCRIPTIONS = 3, /* max_subscriptions */
    EDGELOCK_TABLE_COMMANDS = 4,      /* max_commands */
    EDGELOCK_TABLE_COUNT = 5
} edgelock_table;

/** One table's use. */
typedef struct edgelock_table_stats {
    uint32_t used;       /* entries in use now */
    uint32_t capacity;   /* as configured */
    uint32_t high_water; /* most entries ever in use at once */
    uint64_t full;       /* times an entry was wanted and none was free: the table
                          * behind each EDGELOCK_ERR_TABLE_FULL (or a wait, see below) */
} edgelock_table_stats;

/** Table usage, for introspection, sizing and tests. When a call returns
 *  EDGELOCK_ERR_TABLE_FULL, the table whose `full` count went up is the one to
 *  enlarge. (A waiter whose retry finds the command table full waits for a
 *  free slot instead of failing; that also counts as `full` of COMMANDS.) */
typedef struct edgelock_stats {
    uint32_t locks, holds, waiters, subscriptions, commands; /* entries in use now */
    uint32_t connected;   /* 1 when the command connection (a cluster: every master's) is ready */
    uint64_t reconnects;  /* command connections re-established after a drop */
    uint64_t renew_calls; /* watchdog renewal script calls sent */
    uint64_t table_bytes; /* bytes allocated for tables at creation */
    edgelock_table_stats tables[EDGELOCK_TABLE_COUNT]; /* indexed by edgelock_table */
} edgelock_stats;

EDGELOCK_API edgelock_status edgelock_client_stats(edgelock_client *client, edgelock_stats *out);

/* ---------------------------------------------------------------- locks -- */

/** The Redisson lock kinds, and the semaphores and latch that share the lock
 *  handle table (see "semaphores and the countdown latch" below for which
 *  calls each accepts). Every lock call works on every lock kind. */
typedef enum edgelock_lock_kind {
    /** RLock: hash `name`, channel redisson_lock__channel:{name}. Non-fair:
     *  whoever asks first after an unlock gets it, except that a client whose
     *  releases a waiter heard twice in a row pauses its own next lock call
     *  on that handle (6 ms plus two round trips, less if its wait is
     *  shorter) so that the woken waiter gets its turn: no client is shut out
     *  by one that unlocks and locks again in a loop. The fenced lock too. */
    EDGELOCK_REENTRANT = 0,
    /** RFairLock: FIFO queue redisson_lock_queue:{name}, deadlines in
     *  redisson_lock_timeout:{name}; each waiter has its own channel
     *  redisson_lock__channel:{name}:<owner field> and only it is woken. */
    EDGELOCK_FAIR = 1,
    /** RReadWriteLock.readLock(): shared; hash field mode=read, per-hold timeout
     *  keys; channel redisson_rwlock:{name}. An unlock ends the owner's newest
     *  hold: with fixed leases, what is left then lasts, by lock_valid, no
     *  longer than the earliest lease its holds were taken with. */
    EDGELOCK_READ = 2,
    /** RReadWriteLock.writeLock(): exclusive; field "<owner field>:write". */
    EDGELOCK_WRITE = 3,
    /** RFencedLock: the reentrant lock plus a token, redisson_lock_token:{name},
     *  incremented on every acquire; the lock call's value is the token. */
    EDGELOCK_FENCED = 4,
    /** RSemaphore: string `name` = free permits, channel redisson_sc:{name}.
     *  The lock call takes a permit, unlock gives one back (re-entry takes
     *  one more). No owner in Redis and no lease (lease_ms must be
     *  EDGELOCK_LEASE_WATCHDOG, meaning none here): a process that dies
     *  holding a permit leaks it for good, in Redisson too. Prefer
     *  EDGELOCK_PERMIT_SEMAPHORE unless a service uses RSemaphore. */
    EDGELOCK_SEMAPHORE = 5,
    /** RPermitExpirableSemaphore: the same counter and channel, plus zset
     *  {name}:timeout with one member per permit taken (its 16-byte id,
     *  scored by its deadline). The lock call takes permits with a fixed
     *  lease or EDGELOCK_LEASE_WATCHDOG, renewed by the watchdog like a lock
     *  (a dead holder's permits come back one lease after its last renewal;
     *  a lost renewal reaches on_lock_lost); unlock gives back every permit
     *  the owner took through the handle. One call in flight or one group of
     *  permits held per owner and handle: more is EDGELOCK_ERR_BUSY. */
    EDGELOCK_PERMIT_SEMAPHORE = 6,
    /** RCountDownLatch: string `name` = remaining count, channel
     *  redisson_countdownlatch__channel__{name}. Only the edgelock_latch_*
     *  calls (and lock_free) accept it. */
    EDGELOCK_LATCH = 7
} edgelock_lock_kind;

/**
 * Create a handle for the lock of kind `kind` called `name` (any bytes, 1 to
 * max_name_len). This is local: no Redis call. The read and the write lock of
 * one read-write lock are two handles on the same name.
 * Errors: INVALID_ARG, TABLE_FULL, SHUTDOWN, WRONG_THREAD.
 */
EDGELOCK_API edgelock_status edgelock_lock_new_kind(edgelock_client *client, edgelock_lock_kind kind,
                                                    const void *name, size_t name_len, edgelock_lock *out);

/** edgelock_lock_new_kind(client, EDGELOCK_REENTRANT, ...). */
EDGELOCK_API edgelock_status edgelock_lock_new(edgelock_client *client, const void *name, size_t name_len,
                                               edgelock_lock *out);

/**
 * Free a lock handle. Fails with BUSY while any owner holds it through this
 * client or any call on it is in flight (an unlock's latch DEL too, until it
 * is written, which is at once unless the connection is busy reloading
 * scripts or down: try again; and a composite's give-back of unknown outcome,
 * sent again until Redis answers it); STALE_HANDLE when already freed.
 */
EDGELOCK_API edgelock_status edgelock_lock_free(edgelock_client *client, edgelock_lock lock);

/* ---- asynchronous calls ----
 * One callback type serves every call; `value` is:
 *   lock:          0; for EDGELOCK_FENCED the fencing token (> 0)
 *   unlock:        1 when the lock was released, 0 when a re-entrant hold remains
 *                  (for EDGELOCK_READ: 0 when any read hold remains, maybe another's)
 *   force_unlock:  1 when a lock was deleted, 0 when nothing was (free; for
 *                  EDGELOCK_READ / EDGELOCK_WRITE also held in the other mode)
 *   is_locked:     1 or 0 (for EDGELOCK_READ / EDGELOCK_WRITE: that side only)
 *   hold_count:    holds of that owner (0 when not held by it)
 *   remaining_ttl: ms left on the lock; -2 when free, -1 when it has no expiry
 * `value` is 0 whenever status != EDGELOCK_OK.
 * `owner` is the caller's own owner id (a task id, any uint64_t); the owner field
 * in Redis is "<client id>:<owner>".
 */
typedef void (*edgelock_result_fn)(edgelock_client *client, edgelock_lock lock, edgelock_status status,
                                   int64_t value, void *user);

/**
 * Acquire. wait_ms: 0 one attempt, > 0 wait up to that long, EDGELOCK_WAIT_FOREVER.
 * lease_ms: > 0 fixed lease, or EDGELOCK_LEASE_WATCHDOG. A fixed lease runs
 * from when the granted attempt was sent, not from the OK: on a slow link
 * part of it (all of it, if the round trip took longer) is gone by then;
 * edgelock_lock_valid() says what is left. Re-entry by the same
 * owner increments the hold count; the lock has one lease in Redis, which each
 * re-entry sets again, and so does an unlock that leaves a count. Handles on
 * one name are one lock (Redisson: one RLock). So a re-entry never shortens
 * what the owner relies on: its attempt asks Redis for no less than the
 * owner's holds on the name, through any handle, have left (watchdog_lease_ms
 * for a hold the watchdog renews, which then stays under the watchdog), nor
 * than the lease of any other lock call of the owner's on that name still on
 * the wire or waiting for its replicas, decided each time the attempt is
 * sent; an unlock that leaves a count names, when it is sent, no less than
 * what the owner's holds and lock calls on the name rely on then. A longer
 * lease extends the hold. lock_valid counts what was asked. A re-entry sent
 * before the call it re-enters cannot be raised; counted after it, its
 * shorter lease becomes the whole hold's (fail closed: no renewal).
 * A re-entry whose hold was gone before it ran (its key deleted or expired,
 * a failover) is a first lock to Redis: the call says OK, and the owner holds
 * the lock from then on, not since its first lock, with one count in Redis.
 * If the client had seen the loss (on_lock_lost), it counts a fresh hold of
 * one: its unlock releases the lock, and the outer hold's unlock says
 * NOT_OWNER. If not, the unlock that releases that one count reports the
 * holds still counted lost (edgelock_unlock_async: OK with value 1).
 * While the lock is held elsewhere the call waits for the unlock message on the
 * lock's channel or for the holder's TTL to run out, never by polling. Results:
 * OK, WAIT_TIMEOUT, TABLE_FULL (hold, waiter or subscription table:
 * edgelock_stats says which), CONNECTION/TIMEOUT (Redis gone for the whole
 * wait), REDIS (e.g. WRONGTYPE), PROTOCOL, NOT_REPLICATED, SHUTDOWN. The call
 * ends at wait_ms, except when an attempt is under way then (on the wire, or
 * queued for a connection being made again): that attempt decides, at most
 * command_timeout_ms later, as it may have taken the lock. When the last
 * attempt's reply never came (TIMEOUT, CONNECTION) the lock may have been taken
 * in Redis: a first hold is then given back by an unlock that waits for Redis
 * as long as it takes and is repeated until Redis answers it (lock_free is BUSY
 * until it has gone out); a re-entry of unknown outcome is left to lapse with
 * its lease. Such a give-back (also that of a grant the replicas did not
 * confirm or that a cancel came too late for) must reach Redis before the
 * owner's next grant on that name, through any handle, or it would release
 * that grant: the owner's next lock call sends its attempt once the give-back
 * is answered, waiting for it at least command_timeout_ms even past a shorter
 * wait_ms. Not answered by then: CONNECTION (its node unreachable) or TIMEOUT.
 * A call of the same owner already under way when the give-back was made
 * (two calls at once) may be granted first: its OK then waits for the
 * give-back's answer. If a release of the owner's freed the lock after that
 * grant (the give-back ran after it and deleted it), the call tries again
 * while its wait lasts (WAIT_TIMEOUT after it); if the give-back is not
 * answered within command_timeout_ms, that grant is given back too and the
 * call ends with TIMEOUT or CONNECTION.
 */
EDGELOCK_API edgelock_status edgelock_lock_async(edgelock_client *client, edgelock_lock lock, uint64_t owner,
                                                 int64_t wait_ms, int64_t lease_ms, edgelock_result_fn cb,
                                                 void *user);

/** Release one hold. On full release `0` is published on the channel to wake
 *  one waiter. When this was the owner's last hold by this client's count but
 *  Redis still counts more for it (a reply that was lost, a failover that
 *  restored a released hold), those are released too, one unlock each, before
 *  the answer: they are nobody's, and each unlock would otherwise renew them.
 *  Results:
 *  - OK (value 1: released, 0: a re-entrant hold remains). Value 1 while
 *    this client counts more holds of `owner`, live by its clock: Redis had
 *    fewer (they were gone before this unlock, and a re-entry made a fresh
 *    hold, or a failover lost a re-entry), so the owner's outer critical
 *    section was not protected. They are reported lost, as the watchdog
 *    reports a loss: on_lock_lost, lock_valid LOST, the owner's next unlock
 *    LOST;
 *  - NOT_OWNER: `owner` does not hold it in Redis, nothing changed; also when
 *    its fixed lease ran out (as Redisson's unlock says; a read hold by this
 *    client's clock, as lock_valid says, though other readers keep the key);
 *  - LOST: this client knew `owner` held it under the watchdog (or within its
 *    fixed lease by our clock) and Redis no longer has it. When the watchdog
 *    had already seen the loss, this is the call's return value at once (no
 *    callback), and the loss is forgotten: the next unlock is NOT_OWNER.
 *    Exception, from Redisson's script: for EDGELOCK_FAIR an unlock whose
 *    lock key is already gone answers OK with value 1, so a loss the watchdog
 *    has not seen yet is reported there only when the owner counted more
 *    holds (above; EDGELOCK_READ and EDGELOCK_WRITE report it, as Redisson's
 *    unlock throws there);
 *  - TIMEOUT or CONNECTION: the outcome is unknown. Renewal of the hold stops
 *    (if the unlock did not run, the lock lapses with its lease), lock_valid
 *    says LOST while the owner's last hold may be released, and a retry
 *    by the same owner sends the same unlock again, which Redis's unlock latch
 *    (unlock_latch_ttl_ms) answers with the first one's result: OK, not LOST
 *    (for EDGELOCK_READ and EDGELOCK_WRITE also when the first one found the
 *    lock gone: Redisson's scripts latch "released" there).
 *    A lock call by that owner instead sends it again too, ahead of its
 *    attempt, so that the unlock counts once: the attempt then re-enters
 *    the holds left, or, when that unlock was the owner's last, takes a
 *    fresh hold rather than re-entering one that may be released;
 *  - REDIS: Redis refused the unlock script (e.g. an ACL that forbids
 *    PUBLISH). Its writes up to the error stay (the lock may be released, its
 *    waiters not woken until their retry at the holder's TTL), so it is
 *    handled as an outcome unknown: renewal stops, a retry resends it;
 *  - TABLE_FULL (commands), STALE_HANDLE, SHUTDOWN, PROTOCOL,
 *    NOT_REPLICATED (wait_replicas). */
EDGELOCK_API edgelock_status edgelock_unlock_async(edgelock_client *client, edgelock_lock lock,
                                                   uint64_t owner, edgelock_result_fn cb, void *user);

/** Delete the lock whoever holds it and publish the unlock message; value 1
 *  when it was deleted, 0 when there was nothing to delete (OK either way).
 *  An EDGELOCK_READ or EDGELOCK_WRITE handle deletes only its own side, as
 *  Redisson's readLock()/writeLock().forceUnlock(): the read side only while
 *  readers hold the lock (mode "read"), publishing 0; the write side only
 *  while a writer holds it (mode "write", also when that writer reads too),
 *  publishing 1. Held in the other mode, or a hash without a mode, it is
 *  left alone and the value is 0. A plain (EDGELOCK_REENTRANT) handle on the
 *  name deletes it whatever its mode. */
EDGELOCK_API edgelock_status edgelock_force_unlock_async(edgelock_client *client, edgelock_lock lock,
                                                         edgelock_result_fn cb, void *user);

/** Whether anybody holds the lock: value 1 when its key exists, else 0.
 *  An EDGELOCK_READ or EDGELOCK_WRITE handle answers for its own side, as
 *  Redisson's readLock()/writeLock().isLocked(): the write side is locked
 *  while a writer holds it (mode "write"); the read side while readers hold
 *  it (mode "read"), or while the writer also holds read locks. So while
 *  only readers hold the lock the write side says 0, though a writer would
 *  wait; a hash without a mode (another kind of lock under the name) is 0
 *  on both sides. A plain (EDGELOCK_REENTRANT) handle on the name says
 *  whether anything holds it. Errors: REDIS (on a read or write handle, a
 *  key of another type), CONNECTION, TIMEOUT, TABLE_FULL, STALE_HANDLE,
 *  SHUTDOWN. */
EDGELOCK_API edgelock_status edgelock_is_locked_async(edgelock_client *client, edgelock_lock lock,
                                                      edgelock_result_fn cb, void *user);

/** Hold count of `owner` as Redis has it. If this client knew `owner` held the
 *  lock and Redis no longer has the field, the status is LOST. */
EDGELOCK_API edgelock_status edgelock_hold_count_async(edgelock_client *client, edgelock_lock lock,
                                                       uint64_t owner, edgelock_result_fn cb, void *user);

EDGELOCK_API edgelock_status edgelock_remaining_ttl_async(edgelock_client *client, edgelock_lock lock,
                                                          edgelock_result_fn cb, void *user);

/* ---- blocking calls (client that owns its loop; any thread but the loop's) ----
 * Same semantics as the async calls, with the calling thread's id as owner. */

/** Redisson's lock(): wait as long as it takes; watchdog lease. */
EDGELOCK_API edgelock_status edgelock_acquire(edgelock_client *client, edgelock_lock lock);
EDGELOCK_API edgelock_status edgelock_try_lock(edgelock_client *client, edgelock_lock lock, int64_t wait_ms,
                                               int64_t lease_ms);
/** try_lock that also returns the fencing token of an EDGELOCK_FENCED lock
 *  (0 for other kinds). Pass the token to the protected resource, which must
 *  refuse any token lower than one it has seen. */
EDGELOCK_API edgelock_status edgelock_try_lock_token(edgelock_client *client, edgelock_lock lock,
                                                     int64_t wait_ms, int64_t lease_ms, int64_t *token);
/** *released (may be NULL): 1 when fully released, 0 when a re-entrant hold remains. */
EDGELOCK_API edgelock_status edgelock_unlock(edgelock_client *client, edgelock_lock lock, int *released);
/** *deleted (may be NULL): 1 when the lock was deleted, 0 when nothing was; for
 *  EDGELOCK_READ / EDGELOCK_WRITE 0 too while the other side holds it
 *  (edgelock_force_unlock_async). */
EDGELOCK_API edgelock_status edgelock_force_unlock(edgelock_client *client, edgelock_lock lock, int *deleted);
/** *locked: as edgelock_is_locked_async's value (a read or write handle: its own side). */
EDGELOCK_API edgelock_status edgelock_is_locked(edgelock_client *client, edgelock_lock lock, int *locked);
/** *held: 1 when the calling thread holds it. LOST when it held it and lost it. */
EDGELOCK_API edgelock_status edgelock_is_held_by_current_thread(edgelock_client *client, edgelock_lock lock,
                                                                int *held);
EDGELOCK_API edgelock_status edgelock_hold_count(edgelock_client *client, edgelock_lock lock, int64_t *count);
EDGELOCK_API edgelock_status edgelock_remaining_ttl(edgelock_client *client, edgelock_lock lock,
                                                    int64_t *ttl_ms);

/** The owner id blocking calls use for the calling thread (its kernel thread id). */
EDGELOCK_API uint64_t edgelock_current_owner(void);

/**
 * End every lock call of `owner` on this client that has not finished: each
 * completes with EDGELOCK_ERR_CANCELLED (a blocking call returns it, an async
 * call's callback gets it) and holds nothing. A call whose attempt is on the
 * wire ends when its reply comes (about one round trip, at most
 * command_timeout_ms): if that attempt got the lock, it is given back first.
 * Waits for an unlock message or for a holder's TTL end at once, and so does
 * a call whose attempt still waits for its connection (Redis down): that
 * attempt is withdrawn unsent. A fair waiter leaves the queue.
 * For blocking calls `owner` is the waiting thread's edgelock_current_owner(),
 * which that thread must hand to the one that cancels (a signal handler must
 * not call this: post to a thread that does). A call that reaches the client
 * after the cancel is not affected: to stop a thread for good, cancel until it
 * returns. Composite calls (MultiLock, RedLock) end with CANCELLED, releasing
 * what they had taken, when a member's call is cancelled on its client.
 * Returns OK (also when nothing was waiting), INVALID_ARG, WRONG_THREAD.
 * A local call: in event-loop mode on the loop thread; on a client that owns
 * its loop from any thread (inside an edgelock callback too).
 */
EDGELOCK_API edgelock_status edgelock_cancel(edgelock_client *client, uint64_t owner);

/**
 * Whether `owner` may still act on `lock`, by this client's own clock: no
 * Redis call. Call it right before each write to the protected resource: a
 * holder that was frozen (SIGSTOP, a stalled VM, a long GC-like pause, or a
 * system suspend: the library's clock is CLOCK_BOOTTIME on Linux) past its
 * lease learns it here, before the watchdog next runs and before
 * on_lock_lost arrives. Blocking users pass edgelock_current_owner().
 * *remaining_ms: on OK, how long the hold lasts at least (> 0): Redis set the
 * lease no earlier than the send time (read before the bytes are written) of
 * the last acquire or renewal it confirmed, so its expiry is never before now + *remaining_ms (clocks running
 * at the same rate). Act only when it exceeds the time the action takes; with
 * the watchdog it is normally between 2/3 and all of watchdog_lease_ms. 0 on
 * any other result.
 * Results: OK; LOST (it held the lock and lost it: the watchdog found it gone,
 * or no renewal was confirmed for a whole lease; also while an unlock of the
 * owner's last hold has an unknown outcome, as it may have released the lock,
 * until Redis has answered a retry of it (an unlock, or the one a lock call
 * by that owner sends first; one Redis refuses settles nothing)); NOT_OWNER (not held by
 * `owner`, or its fixed lease ran out); STALE_HANDLE; INVALID_ARG (NULL
 * remaining_ms); WRONG_THREAD, as lock_new.
 * A local call: in event-loop mode on the loop thread; on a client that owns
 * its loop from any thread.
 */
EDGELOCK_API edgelock_status edgelock_lock_valid(edgelock_client *client, edgelock_lock lock, uint64_t owner,
                                                 int64_t *remaining_ms);

/**
 * Which Redis process granted `owner`'s hold (and issued its fencing token):
 * the first 64 bits of that server's run_id, which changes whenever Redis
 * restarts; 0 when unknown (INFO refused by an ACL). No Redis call.
 * Why: Redisson's fencing tokens (INCR of redisson_lock_token:{name}) restart
 * at 1 when Redis restarts with its data lost, and a resource that checks the
 * token alone then refuses every legitimate write until the count catches up.
 * The way out is a token epoch: the resource numbers each server value in the
 * order it first sees them (a persisted counter) and accepts a write when its
 * (epoch, token) pair is not lower than the last accepted one. A holder from
 * before the restart carries the old server value, whose epoch is lower: its
 * late writes are still refused. See docs/RELIABILITY.md.
 * Results: OK, LOST, NOT_OWNER, STALE_HANDLE, INVALID_ARG, WRONG_THREAD, as
 * edgelock_lock_valid (a local call too).
 */
EDGELOCK_API edgelock_status edgelock_token_server(edgelock_client *client, edgelock_lock lock,
                                                   uint64_t owner, uint64_t *server);

/* ------------------------------------------------------ introspection -- */

/**
 * Check a URL the way edgelock_client_create() parses it, and write it into
 * out (cap bytes, NUL-terminated, truncated to fit) with any credentials shown
 * as "***", so that it can be logged or printed. out may be NULL to check only.
 * Pure: no allocation, no network. Returns OK, or INVALID_ARG (NULL or a
 * malformed URL; out is then the empty string).
 */
EDGELOCK_API edgelock_status edgelock_url_redact(const char *url, char *out, size_t cap);

/** 1 when this build has TLS (rediss:// URLs): hiredis 1.x with hiredis_ssl
 *  and OpenSSL were found when it was built; else 0. */
EDGELOCK_API int edgelock_tls_available(void);

/** 1 when this build can use sharded pub/sub on a cluster (SSUBSCRIBE, which
 *  arrives as RESP3 pushes: hiredis 1.x); else 0, and a redis-cluster://
 *  client needs sharded_pubsub = EDGELOCK_SHARDED_OFF. */
EDGELOCK_API int edgelock_sharded_pubsub_available(void);

/** The longest owner field edgelock_lock_info() returns whole (bytes, NUL excluded). */
#define EDGELOCK_OWNER_FIELD_MAX 127

/** A number edgelock_lock_info() found in Redis that is not one: a hold count
 *  or a token that is not a decimal integer within int64_t, a deadline that
 *  is not a finite number within int64_t. Never a real value. */
#define EDGELOCK_INFO_INVALID INT64_MIN

/** One holder or one queued waiter of a lock, as Redis has it. */
typedef struct edgelock_lock_entry {
    /** The owner field ("<client id>:<owner id>", plus ":write" for a writer),
     *  NUL-terminated, cut at EDGELOCK_OWNER_FIELD_MAX bytes; any bytes. */
    char owner[EDGELOCK_OWNER_FIELD_MAX + 1];
    size_t owner_len; /** its whole length in Redis (> EDGELOCK_OWNER_FIELD_MAX: cut) */
    /** holders: the hold count. queue: the waiter's deadline in ms since the
     *  epoch by the writer's clock, or -1 when it has none. Either may be
     *  EDGELOCK_INFO_INVALID, or any other value a writer put there. */
    int64_t value;
} edgelock_lock_entry;

/** What Redis holds for a lock's name (edgelock_lock_info). */
typedef enum edgelock_lock_state {
    EDGELOCK_LOCK_FREE = 0,      /* no key of that name */
    EDGELOCK_LOCK_HELD = 1,      /* the lock hash exists */
    EDGELOCK_LOCK_WRONG_TYPE = 2 /* the name holds a Redis value of another type (redis_type) */
} edgelock_lock_state;

/**
 * A snapshot of one lock, read in one atomic step. The caller provides the
 * arrays (either may be NULL with a capacity of 0); the counts say how many
 * entries Redis has, of which min(count, cap) were written, in Redis's order
 * (the fair queue in serving order).
 */
typedef struct edgelock_lock_info {
    edgelock_lock_state state;
    char redis_type[16];   /* Redis's TYPE of the name: "hash", "none", "string"... */
    char mode[16];         /* a read-write lock's "read" or "write"; "" for others */
    int64_t ttl_ms;        /* ms left; -1 no expiry; -2 free */
    int has_token;         /* 1 when a fencing token was ever issued for the name */
    int64_t token;         /* the last fencing token issued (EDGELOCK_INFO_INVALID: not a number) */
    int64_t redis_time_ms; /* Redis's clock (ms since the epoch) at the snapshot */
    size_t holder_count;   /* owner fields in the hash ("mode" excluded) */
    size_t queue_count;    /* fair lock: waiters queued */
    /** Connections subscribed to the lock's unlock channel (or the read-write
     *  lock's): its waiting clients, one per client (Redisson: per JVM), not
     *  per thread. A fair lock's waiters listen on channels of their own:
     *  queue_count counts them. */
    int64_t subscribers;
    edgelock_lock_entry *holders;
    size_t holders_cap;
    edgelock_lock_entry *queue;
    size_t queue_cap;
    /** Where the snapshot was read: "host:port" of the Redis the client sends
     *  this lock's calls to (on a cluster: the master of the lock's slot by the
     *  client's slot map), or a unix socket's path. NUL-terminated. */
    char server[272];
} edgelock_lock_info;

/**
 * Read the snapshot of `lock` into *info (the arrays and capacities set by the
 * caller; every other field is written). Blocking, on a client that owns its
 * loop. Errors: INVALID_ARG (NULL, or a capacity with a NULL array),
 * STALE_HANDLE, CONNECTION, TIMEOUT, REDIS, PROTOCOL, TABLE_FULL, SHUTDOWN,
 * WRONG_THREAD.
 */
EDGELOCK_API edgelock_status edgelock_lock_info_get(edgelock_client *client, edgelock_lock lock,
                                                    edgelock_lock_info *info);
/** The same on the loop thread: *info is written before cb runs (status OK),
 *  and must stay in place until then. cb's value is 0. */
EDGELOCK_API edgelock_status edgelock_lock_info_async(edgelock_client *client, edgelock_lock lock,
                                                      edgelock_lock_info *info, edgelock_result_fn cb,
                                                      void *user);

/** The longest name edgelock_scan_locks() returns whole (bytes, NUL excluded). */
#define EDGELOCK_SCAN_NAME_MAX 255
/** The longest MATCH pattern edgelock_scan_locks() takes (bytes). */
#define EDGELOCK_SCAN_PATTERN_MAX 1024

/** One name a scan found. */
typedef struct edgelock_scan_name {
    char name[EDGELOCK_SCAN_NAME_MAX + 1]; /** NUL-terminated, cut at EDGELOCK_SCAN_NAME_MAX; any bytes */
    size_t len;                            /** its whole length (> EDGELOCK_SCAN_NAME_MAX: cut) */
} edgelock_scan_name;

/** A scan for the names that may be locks, one page per call. */
typedef struct edgelock_scan {
    const char *pattern;       /** Redis glob of the names (SCAN MATCH); NULL: every name */
    uint64_t cursor;           /** 0 to start; each call sets the next; 0 again when done */
    edgelock_scan_name *names; /** the caller's array (not NULL) */
    size_t names_cap;          /** its length (> 0): a page asks Redis for at most half of it */
    size_t count;              /** out: names this page found; min(count, names_cap) written */
} edgelock_scan;

/**
 * One page of a scan over the names that may be locks: Redis's
 * SCAN cursor MATCH pattern COUNT n TYPE hash (Redis 6 or later), so every
 * hash key matching the pattern, a lock's or not: read each with
 * edgelock_lock_info_get() to tell (a lock's fields are owner fields with hold
 * counts, and "mode"). Loop until scan->cursor is 0 again. As with SCAN, a
 * name present from start to end is found at least once (maybe twice); one
 * made or removed meanwhile may or may not be. When a page holds more names
 * than names_cap (COUNT is a hint: a table Redis is resizing can give a page
 * of several times COUNT), the call returns EDGELOCK_ERR_PAGE_TOO_SMALL:
 * count is the page's size, the first names_cap names are written, and the
 * cursor is left as it was; call again with an array of at least count names
 * (the page may have grown meanwhile: the same status again then). That is a
 * status, not OK, because a cursor left at 0 would read as "done" to a loop
 * that checks only the cursor. On a cluster the masters are scanned one
 * after the other (the cursor's top byte names the master; a slot map that
 * changes meanwhile may skip or repeat names). Blocking, on a client that owns
 * its loop; `scan` is read when the command is sent. Errors: INVALID_ARG (NULL,
 * no array, a pattern over EDGELOCK_SCAN_PATTERN_MAX, a cursor this client
 * never returned), CONNECTION (also: a cluster whose slot map is not known
 * yet), TIMEOUT, REDIS (Redis before 6: no TYPE), PROTOCOL, PAGE_TOO_SMALL,
 * TABLE_FULL, SHUTDOWN, WRONG_THREAD.
 */
EDGELOCK_API edgelock_status edgelock_scan_locks(edgelock_client *client, edgelock_scan *scan);
/** The same on the loop thread: *scan must stay in place until cb runs
 *  (its lock handle is 0, its value 0). */
EDGELOCK_API edgelock_status edgelock_scan_locks_async(edgelock_client *client, edgelock_scan *scan,
                                                       edgelock_result_fn cb, void *user);

/* ----------------------------------- semaphores and the countdown latch -- */
/*
 * Wire-compatible with Redisson 4.x's RSemaphore, RPermitExpirableSemaphore
 * and RCountDownLatch (docs/SEMAPHORES.md): a Java service and edgelock share
 * one semaphore or latch and wake each other. Handles come from
 * edgelock_lock_new_kind() with EDGELOCK_SEMAPHORE, EDGELOCK_PERMIT_SEMAPHORE
 * or EDGELOCK_LATCH. A call given a handle of a kind it does not serve
 * returns EDGELOCK_ERR_INVALID_ARG, as do the lock-only calls (force_unlock,
 * is_locked, hold_count, remaining_ttl, lock_info, MultiLock, RedLock) on
 * these kinds. Threads, callbacks and statuses as for the lock calls: async
 * calls on the loop thread, each callback exactly once unless the call
 * returned an error; blocking calls from any other thread.
 *
 * Semaphores (both kinds):
 * - Taking permits: edgelock_lock_async() / edgelock_try_lock() take one;
 *   edgelock_semaphore_acquire_async() / edgelock_semaphore_try_acquire() take
 *   1 to EDGELOCK_MAX_PERMITS at once (all or none). Waiting is on the
 *   channel's messages, and for the expirable kind also until the earliest
 *   permit deadline Redis names (expiry publishes nothing), never polling.
 *   Results as edgelock_lock_async, plus BUSY (expirable: this owner already
 *   holds permits through the handle whose lease has not run out, or has a
 *   call in flight on it).
 *   A permit taken is a hold: it counts in max_holds, edgelock_lock_valid()
 *   and edgelock_cancel() work on it, and the wait counts in max_waiters and
 *   max_subscriptions. An expirable permit's deadline is the taker's wall
 *   clock plus the lease, and any client reclaims it once its own wall clock
 *   passes that (Redisson's protocol): a client whose clock runs ahead of the
 *   taker's reclaims it early, which lock_valid cannot see. Keep the clients'
 *   clocks in step (docs/SEMAPHORES.md, "Whose clock").
 * - Giving back: edgelock_unlock_async() / edgelock_unlock(): a plain
 *   semaphore gives back one permit, an expirable one every permit the owner
 *   took through the handle (value 1 when none is left). An owner holding
 *   none gets NOT_OWNER at once (no Redis call: a release without a take
 *   would grow the semaphore). Expirable: LOST when Redis no longer has them
 *   (expired, released by id elsewhere), NOT_OWNER when their fixed lease
 *   ran out by our clock. TIMEOUT/CONNECTION: the permits are given back or
 *   lapse with their lease; either way this client no longer counts them (a
 *   plain semaphore's may then be lost: it never gives back twice).
 * - A TIMEOUT or CONNECTION on a take whose script may have run: an
 *   expirable take is undone by its ids (as an unlock is); a plain one is
 *   not (it cannot tell, and a release that did not match a take would make
 *   one permit too many): that permit may leak.
 * - wait_replicas: a take is followed by WAIT as a lock is (too few
 *   replicas: given back, NOT_REPLICATED), and the watchdog's permit
 *   renewals count once the replicas have them, as locks' do; give-backs,
 *   set, add and count-down calls have no WAIT.
 */

/** Most permits one call takes. */
#define EDGELOCK_MAX_PERMITS 16

EDGELOCK_API edgelock_status edgelock_semaphore_acquire_async(edgelock_client *client, edgelock_lock sem,
                                                              uint64_t owner, uint32_t permits,
                                                              int64_t wait_ms, int64_t lease_ms,
                                                              edgelock_result_fn cb, void *user);
/** Blocking take by the calling thread (owner edgelock_current_owner()). */
EDGELOCK_API edgelock_status edgelock_semaphore_try_acquire(edgelock_client *client, edgelock_lock sem,
                                                            uint32_t permits, int64_t wait_ms,
                                                            int64_t lease_ms);

/** Redisson's trySetPermits(n): size a semaphore that does not exist yet.
 *  value / *set: 1 set (and waiters told), 0 it exists: unchanged. n >= 0. */
EDGELOCK_API edgelock_status edgelock_semaphore_try_set_permits_async(edgelock_client *client,
                                                                      edgelock_lock sem, int64_t permits,
                                                                      edgelock_result_fn cb, void *user);
EDGELOCK_API edgelock_status edgelock_semaphore_try_set_permits(edgelock_client *client, edgelock_lock sem,
                                                                int64_t permits, int *set);

/** Redisson's addPermits(n): n free permits more (n < 0: fewer; the count
 *  may go negative, and takes then wait until enough are given back).
 *  value / *free_after: the free permits after. |n| <= EDGELOCK_MAX_TIME_MS. */
EDGELOCK_API edgelock_status edgelock_semaphore_add_permits_async(edgelock_client *client, edgelock_lock sem,
                                                                  int64_t permits, edgelock_result_fn cb,
                                                                  void *user);
EDGELOCK_API edgelock_status edgelock_semaphore_add_permits(edgelock_client *client, edgelock_lock sem,
                                                            int64_t permits, int64_t *free_after);

/** A semaphore as Redis has it. Expired permits are given back first, as
 *  Redisson's availablePermits() does. */
typedef struct edgelock_semaphore_info {
    int64_t available;   /* free permits; -1 when the semaphore does not exist */
    int64_t acquired;    /* expirable permits taken, by anyone (0 for a plain semaphore's) */
    int64_t subscribers; /* connections waiting on its channel (PUBSUB NUMSUB / SHARDNUMSUB) */
} edgelock_semaphore_info;

/** value: info->available. *info is written before the callback; it must
 *  stay valid until then. */
EDGELOCK_API edgelock_status edgelock_semaphore_info_async(edgelock_client *client, edgelock_lock sem,
                                                           edgelock_semaphore_info *info,
                                                           edgelock_result_fn cb, void *user);
EDGELOCK_API edgelock_status edgelock_semaphore_info_get(edgelock_client *client, edgelock_lock sem,
                                                         edgelock_semaphore_info *info);

/** The id of permit k (0-based) that `owner` holds through an expirable
 *  semaphore handle, as Redisson writes it: 32 lowercase hex digits and a
 *  NUL in out[33]. A Java service's release(id) takes it. Local: no Redis
 *  call. OK, NOT_OWNER (no such permit), LOST, STALE_HANDLE, INVALID_ARG
 *  (another kind, NULL out), WRONG_THREAD as lock_valid. */
EDGELOCK_API edgelock_status edgelock_permit_id(edgelock_client *client, edgelock_lock sem, uint64_t owner,
                                                uint32_t k, char out[33]);

/** Redisson's tryRelease(id): give back one expirable permit by its id (32
 *  hex digits), whoever took it. value 1 released; NOT_OWNER when no such
 *  permit is held (released already, or never taken) or it had expired
 *  (then it goes back to the pool all the same). A permit of this client's
 *  own holds released so is found gone by the watchdog: its holder's next
 *  call reports LOST. */
EDGELOCK_API edgelock_status edgelock_permit_release_async(edgelock_client *client, edgelock_lock sem,
                                                           const char *permit_id, edgelock_result_fn cb,
                                                           void *user);
EDGELOCK_API edgelock_status edgelock_permit_release(edgelock_client *client, edgelock_lock sem,
                                                     const char *permit_id);

/*
 * Countdown latch. No owners: anyone counts down, and counting down an
 * absent latch does nothing.
 */

/** Redisson's trySetCount(c), c >= 1: value / *set 1 set, 0 it exists. */
EDGELOCK_API edgelock_status edgelock_latch_try_set_count_async(edgelock_client *client, edgelock_lock latch,
                                                                int64_t count, edgelock_result_fn cb,
                                                                void *user);
EDGELOCK_API edgelock_status edgelock_latch_try_set_count(edgelock_client *client, edgelock_lock latch,
                                                          int64_t count, int *set);
/** countDown(): value / *count_after: the count left (0: opened, or absent).
 *  Reaching zero deletes the latch and wakes every waiter. */
EDGELOCK_API edgelock_status edgelock_latch_count_down_async(edgelock_client *client, edgelock_lock latch,
                                                             edgelock_result_fn cb, void *user);
EDGELOCK_API edgelock_status edgelock_latch_count_down(edgelock_client *client, edgelock_lock latch,
                                                       int64_t *count_after);
/** getCount(): 0 when absent. */
EDGELOCK_API edgelock_status edgelock_latch_count_async(edgelock_client *client, edgelock_lock latch,
                                                        edgelock_result_fn cb, void *user);
EDGELOCK_API edgelock_status edgelock_latch_count(edgelock_client *client, edgelock_lock latch,
                                                  int64_t *count);
/** await(wait): OK as soon as the count is zero or the latch absent (at once
 *  if it is), WAIT_TIMEOUT when wait_ms runs out first, CANCELLED by
 *  edgelock_cancel(owner). Woken by the zero-count message (a new count's
 *  message opens nobody), never polling. Takes a waiter, a subscription and
 *  a hold slot while it waits; holds nothing after. */
EDGELOCK_API edgelock_status edgelock_latch_await_async(edgelock_client *client, edgelock_lock latch,
                                                        uint64_t owner, int64_t wait_ms,
                                                        edgelock_result_fn cb, void *user);
EDGELOCK_API edgelock_status edgelock_latch_await(edgelock_client *client, edgelock_lock latch,
                                                  int64_t wait_ms);

/* ------------------------------------------------ MultiLock and RedLock -- */

/** One member of a composite lock: a handle and the client it belongs to.
 *  Members may live on different clients, that is on different Redis servers. */
typedef struct edgelock_member {
    edgelock_client *client;
    edgelock_lock lock;
} edgelock_member;

/** The most members a composite lock takes. */
#define EDGELOCK_MAX_MEMBERS 16

/**
 * MultiLock (RedissonMultiLock), blocking: take every member, all or nothing.
 * Members are taken in the order given (give every caller the same order),
 * each waiting for what is left of the wait; if one is not had by then, those
 * taken are released. With a fixed lease each member is first taken with
 * lease + wait (EDGELOCK_WAIT_FOREVER: under its client's watchdog while
 * later members are awaited, so a process that dies still frees them within
 * watchdog_lease_ms; wait 0: lease_ms), and all leases are set to lease_ms
 * once the set is complete, so they end together, renewed by nothing. Owner:
 * the calling thread, on every member's client. Results: OK, WAIT_TIMEOUT,
 * INVALID_ARG (n is 0 or > EDGELOCK_MAX_MEMBERS, a member appears twice),
 * LOST or NOT_OWNER (a member taken early was gone, deleted or forced off
 * behind the client's back, when the leases were set; or, with no lease to
 * set, lost by the client's own account, as edgelock_lock_valid() says, when
 * the set was complete), SHUTDOWN (a member's client destroyed during the
 * call, see edgelock_client_destroy), WRONG_THREAD or SHUTDOWN before any
 * member is tried (a member's client that takes no blocking call from this
 * thread, or is being destroyed), or the first member's
 * error that is not contention. On any result but OK nothing is held by this
 * call (but what it took on a member's client destroyed meanwhile, left to
 * expire: see edgelock_client_destroy), with one exception: a member whose
 * release met an unknown outcome (its
 * server timed out or dropped the connection) may still be held in Redis; it
 * is not renewed, lock_valid says LOST for it, and its release goes out again
 * (in the background, on its client's loop) until Redis answers it: at the
 * latest it lapses with its lease.
 * Likewise a member whose release could not be queued (its client's command
 * table full): it is not renewed and lapses with its lease; if the caller
 * held it already (this call re-entered it), the caller's hold stays as it
 * was, renewed as before, and the caller's last unlock of it releases it.
 */
EDGELOCK_API edgelock_status edgelock_multi_try_lock(const edgelock_member *members, size_t n,
                                                     int64_t wait_ms, int64_t lease_ms);
/** Release every member (each once); the first error is returned, every member
 *  is tried regardless (one whose client is being destroyed is SHUTDOWN). */
EDGELOCK_API edgelock_status edgelock_multi_unlock(const edgelock_member *members, size_t n);

/**
 * RedLock (RedissonRedLock), blocking: the members are the same lock on n
 * independent Redis servers (one client each: a client twice is INVALID_ARG
 * unless it is a redis-cluster:// client, whose members must then name locks
 * on different masters; so are a member twice and n 0 or >
 * EDGELOCK_MAX_MEMBERS). All are tried at once; success needs n/2+1 of them
 * within the lease, each still held when the round is judged (a server whose
 * key the watchdog found gone meanwhile does not count), and *validity_ms
 * (may be NULL) is then lease - elapsed - drift (drift = lease/100 + 2 ms):
 * the time the caller may rely on holding it. On failure every member is
 * released and the set is tried again while the wait lasts, as long as
 * enough servers could still grant it. Results: OK; WAIT_TIMEOUT; CONNECTION
 * when too many servers are unreachable for a majority, or the first refusal
 * (REDIS, PROTOCOL, TABLE_FULL, NOT_REPLICATED) when too many refuse; a
 * member's CANCELLED, INVALID_ARG (also: a member that is no lock),
 * STALE_HANDLE, WRONG_THREAD or SHUTDOWN at once (SHUTDOWN also when a
 * member's client is destroyed during the call, as for MultiLock); on any but OK nothing is
 * held (but for a member whose release met an unknown outcome or could not be
 * queued, as for edgelock_multi_try_lock). Each attempt on a server lasts at
 * most its client's command_timeout_ms (a stopped server costs that much
 * once, then fails fast while it stays down), so give RedLock member clients
 * a short command_timeout_ms.
 *
 * Not safe against clock jumps or process pauses: a holder paused past its
 * validity cannot tell, and RedLock has no token to stop its late writes.
 * Redisson deprecates RedissonRedLock for this reason. Prefer EDGELOCK_FENCED
 * on one server when the protected resource can check a token.
 */
EDGELOCK_API edgelock_status edgelock_redlock_try_lock(const edgelock_member *members, size_t n,
                                                       int64_t wait_ms, int64_t lease_ms,
                                                       int64_t *validity_ms);
/** Release the RedLock on every server (each tried; NOT_OWNER on a minority is expected). */
EDGELOCK_API edgelock_status edgelock_redlock_unlock(const edgelock_member *members, size_t n);

/**
 * Storage for one asynchronous composite call, provided by the caller: it must
 * stay in place, untouched, from the call until its callback has fired. The
 * members are copied into it.
 */
typedef struct edgelock_composite {
    uint64_t opaque[160];
} edgelock_composite;

/**
 * Asynchronous MultiLock / RedLock, with the semantics of the blocking calls
 * above and `owner` as the owner on every member. Every member's client must run
 * on the caller's loop thread (one event_base for all of them). The callback gets
 * members[0].client and members[0].lock; for redlock_lock its value is the
 * validity in ms. Usual contract: non-OK return, no callback; OK, exactly one.
 * A member's client destroyed while the call runs ends it with
 * EDGELOCK_ERR_SHUTDOWN: a wait on another member's client is cancelled, what
 * the call holds on the other clients is given back, and the callback fires
 * once that is done (at once, or when an attempt or release on the wire is
 * answered); what it held on the destroyed client lapses with its lease. If
 * members[0].client was the one destroyed, the callback's client is that
 * pointer as a value only: do not call the library with it.
 */
EDGELOCK_API edgelock_status edgelock_multi_lock_async(edgelock_composite *state,
                                                       const edgelock_member *members, size_t n,
                                                       uint64_t owner, int64_t wait_ms, int64_t lease_ms,
                                                       edgelock_result_fn cb, void *user);
EDGELOCK_API edgelock_status edgelock_multi_unlock_async(edgelock_composite *state,
                                                         const edgelock_member *members, size_t n,
                                                         uint64_t owner, edgelock_result_fn cb, void *user);
EDGELOCK_API edgelock_status edgelock_redlock_lock_async(edgelock_composite *state,
                                                         const edgelock_member *members, size_t n,
                                                         uint64_t owner, int64_t wait_ms, int64_t lease_ms,
                                                         edgelock_result_fn cb, void *user);
EDGELOCK_API edgelock_status edgelock_redlock_unlock_async(edgelock_composite *state,
                                                           const edgelock_member *members, size_t n,
                                                           uint64_t owner, edgelock_result_fn cb, void *user);

#ifdef __cplusplus
}
#endif

#endif /* EDGELOCK_EDGELOCK_H */
