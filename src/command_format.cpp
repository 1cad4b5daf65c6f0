// How each command is spelled on the wire, per lock kind: which script, which
// KEYS and ARGV (REDISSON-PROTOCOL.md; each script's header comment has the
// same list). Formatted at send time into the client's one command buffer.
#include "command_format.hpp"

#include "names.hpp"
#include "resp.hpp"

namespace edgelock
{

static const char kPublish[] = "publish";

namespace
{

struct LockRef {
    const char *name;
    uint32_t len;
    edgelock_lock_kind kind;
};

LockRef lock_ref(Client *c, uint64_t lock_id)
{
    LockRef l;
    l.name = lock_name(c, lock_id, &l.len);
    l.kind = lock_kind(c, lock_id);
    return l;
}

void key(RespCommand &rc, const LockRef &l)
{
    rc.arg(l.name, l.len);
}

void prefixed(RespCommand &rc, const LockRef &l, const char *prefix)
{
    write_prefix_name(rc.begin_arg(), prefix, l.name, l.len);
    rc.end_arg();
}

bool is_rw(const LockRef &l)
{
    return l.kind == EDGELOCK_READ || l.kind == EDGELOCK_WRITE;
}

// The channel a release publishes on (and, but for fair locks, waiters listen to).
void channel(RespCommand &rc, const LockRef &l)
{
    prefixed(rc, l, is_rw(l) ? kRwChannelPrefix : kLockChannelPrefix);
}

void write_owner_field(Writer &w, Client *c, const LockRef &l, uint64_t owner)
{
    write_owner(w, c->client_id, owner);
    if (l.kind == EDGELOCK_WRITE)
        w.str(kWriteSuffix);
}

void owner_arg(RespCommand &rc, Client *c, const LockRef &l, uint64_t owner)
{
    write_owner_field(rc.begin_arg(), c, l, owner);
    rc.end_arg();
}

// A writer's field is "<owner field>:write" whatever the handle's kind.
void writer_arg(RespCommand &rc, Client *c, uint64_t owner)
{
    Writer &w = rc.begin_arg();
    write_owner(w, c->client_id, owner);
    w.str(kWriteSuffix);
    rc.end_arg();
}

// suffix_name(name, owner field) + ":rwlock_timeout": prefix of a reader's
// per-hold timeout keys.
void timeout_prefix(RespCommand &rc, Client *c, const LockRef &l, uint64_t owner)
{
    char field[kMaxOwnerLen + 8];
    Writer f(field, sizeof(field));
    write_owner(f, c->client_id, owner);
    Writer &w = rc.begin_arg();
    write_suffix_name(w, l.name, l.len, field, f.len);
    w.str(":rwlock_timeout");
    rc.end_arg();
}

// Prefix of every holder's timeout keys: "{name}" (or "name" with a brace), to
// which the read-release script appends ":<owner field>:rwlock_timeout".
void key_prefix(RespCommand &rc, const LockRef &l)
{
    Writer &w = rc.begin_arg();
    write_suffix_name(w, l.name, l.len, "", 0);
    if (w.len > 0)
        w.len--; // drop the ':' suffix_name added before the empty suffix
    rc.end_arg();
}

void latch(RespCommand &rc, const LockRef &l, const Command *cmd)
{
    static const char hex[] = "0123456789abcdef";
    Writer &w = rc.begin_arg();
    write_prefix_name(w, kUnlockLatchPrefix, l.name, l.len);
    char id[33];
    for (int i = 0; i < 16; i++) {
        id[2 * i] = hex[cmd->request_id[i] >> 4];
        id[2 * i + 1] = hex[cmd->request_id[i] & 15];
    }
    w.bytes(":", 1);
    w.bytes(id, 32);
    rc.end_arg();
}

void script(RespCommand &rc, const Command *cmd, ScriptId id, uint32_t nkeys)
{
    const Script &s = kScripts[id];
    if (cmd->eval_fallback) {
        rc.arg("EVAL");
        rc.arg(s.text, s.len);
    } else {
        rc.arg("EVALSHA");
        rc.arg(s.sha1, 40);
    }
    rc.arg_u64(nkeys);
}

void acquire(RespCommand &rc, Client *c, const Command *cmd, const LockRef &l)
{
    switch (l.kind) {
    case EDGELOCK_REENTRANT:
        script(rc, cmd, kScriptAcquire, 1);
        key(rc, l);
        rc.arg_i64(cmd->lease_ms);
        owner_arg(rc, c, l, cmd->owner);
        break;
    case EDGELOCK_FENCED:
        script(rc, cmd, kScriptFencedAcquire, 2);
        key(rc, l);
        prefixed(rc, l, kLockTokenPrefix);
        rc.arg_i64(cmd->lease_ms);
        owner_arg(rc, c, l, cmd->owner);
        break;
    case EDGELOCK_FAIR:
        script(rc, cmd, kScriptFairAcquire, 3);
        key(rc, l);
        prefixed(rc, l, kLockQueuePrefix);
        prefixed(rc, l, kLockTimeoutPrefix);
        rc.arg_i64(cmd->lease_ms);
        owner_arg(rc, c, l, cmd->owner);
        rc.arg_u64(c->cfg.fair_wait_ms);
        rc.arg_i64(edgelock_port_wall_ms());
        break;
    case EDGELOCK_READ:
        script(rc, cmd, kScriptReadAcquire, 2);
        key(rc, l);
        timeout_prefix(rc, c, l, cmd->owner);
        rc.arg_i64(cmd->lease_ms);
        owner_arg(rc, c, l, cmd->owner);
        writer_arg(rc, c, cmd->owner);
        break;
    case EDGELOCK_WRITE:
        script(rc, cmd, kScriptWriteAcquire, 1);
        key(rc, l);
        rc.arg_i64(cmd->lease_ms);
        owner_arg(rc, c, l, cmd->owner);
        break;
    }
}

void release(RespCommand &rc, Client *c, const Command *cmd, const LockRef &l)
{
    switch (l.kind) {
    case EDGELOCK_REENTRANT:
    case EDGELOCK_FENCED:
        script(rc, cmd, kScriptRelease, 3);
        key(rc, l);
        channel(rc, l);
        latch(rc, l, cmd);
        rc.arg("0");
        rc.arg_i64(cmd->lease_ms);
        owner_arg(rc, c, l, cmd->owner);
        rc.arg(kPublish);
        rc.arg_u64(c->cfg.unlock_latch_ttl_ms);
        break;
    case EDGELOCK_FAIR:
        script(rc, cmd, kScriptFairRelease, 5);
        key(rc, l);
        prefixed(rc, l, kLockQueuePrefix);
        prefixed(rc, l, kLockTimeoutPrefix);
        channel(rc, l);
        latch(rc, l, cmd);
        rc.arg("0");
        rc.arg_i64(cmd->lease_ms);
        owner_arg(rc, c, l, cmd->owner);
        rc.arg_i64(edgelock_port_wall_ms());
        rc.arg(kPublish);
        rc.arg_u64(c->cfg.unlock_latch_ttl_ms);
        break;
    case EDGELOCK_READ:
        script(rc, cmd, kScriptReadRelease, 5);
        key(rc, l);
        channel(rc, l);
        timeout_prefix(rc, c, l, cmd->owner);
        key_prefix(rc, l);
        latch(rc, l, cmd);
        rc.arg("0");
        owner_arg(rc, c, l, cmd->owner);
        rc.arg(kPublish);
        rc.arg_u64(c->cfg.unlock_latch_ttl_ms);
        break;
    case EDGELOCK_WRITE:
        script(rc, cmd, kScriptWriteRelease, 3);
        key(rc, l);
        channel(rc, l);
        latch(rc, l, cmd);
        rc.arg("1"); // a writer's release wakes every waiter: readers may share
        rc.arg_i64(cmd->lease_ms);
        owner_arg(rc, c, l, cmd->owner);
        rc.arg(kPublish);
        rc.arg_u64(c->cfg.unlock_latch_ttl_ms);
        break;
    }
}

void force_release(RespCommand &rc, const Command *cmd, const LockRef &l)
{
    if (l.kind == EDGELOCK_FAIR) {
        script(rc, cmd, kScriptFairForceRelease, 4);
        key(rc, l);
        prefixed(rc, l, kLockQueuePrefix);
        prefixed(rc, l, kLockTimeoutPrefix);
        channel(rc, l);
        rc.arg("0");
    } else {
        script(rc, cmd, kScriptForceRelease, 2);
        key(rc, l);
        channel(rc, l);
        rc.arg(is_rw(l) ? "1" : "0");
    }
    rc.arg(kPublish);
}

// The renewal batch: holds tagged with this command, in the order they were
// tagged (renew_pos), as KEYS and then their owner fields as ARGV.
void renew(RespCommand &rc, Client *c, const Command *cmd, uint64_t id)
{
    uint32_t order[kRenewBatch];
    uint32_t n = 0;
    for (uint32_t i = 0; i < c->holds.capacity(); i++) {
        Hold *h = c->holds.get(i);
        if (h && h->renewing && h->renew_cmd == id && h->renew_pos < kRenewBatch) {
            order[h->renew_pos] = i;
            n++;
        }
    }
    script(rc, cmd, cmd->read_batch ? kScriptReadRenew : kScriptRenew, n);
    for (uint32_t k = 0; k < n; k++)
        key(rc, lock_ref(c, c->holds.get(order[k])->lock_id));
    rc.arg_u64(c->cfg.watchdog_lease_ms);
    for (uint32_t k = 0; k < n; k++) {
        Hold *h = c->holds.get(order[k]);
        owner_arg(rc, c, lock_ref(c, h->lock_id), h->owner);
    }
}

} // namespace

bool cmd_format(Client *c, const Command *cmd, uint64_t id, const char **out, size_t *len)
{
    // An unpinned cleanup re-sent after NOSCRIPT may outlive its lock handle.
    if (cmd->lock_id && !lock_get(c, cmd->lock_id))
        return false;
    RespCommand rc(c->cmd_buf, c->cmd_buf_len);
    LockRef l = cmd->lock_id ? lock_ref(c, cmd->lock_id) : LockRef{nullptr, 0, EDGELOCK_REENTRANT};
    switch (cmd->kind) {
    case CmdKind::Acquire: acquire(rc, c, cmd, l); break;
    case CmdKind::Release:
    case CmdKind::Cleanup: release(rc, c, cmd, l); break;
    case CmdKind::ForceRelease: force_release(rc, cmd, l); break;
    case CmdKind::Exists:
        rc.arg("EXISTS");
        key(rc, l);
        break;
    case CmdKind::HoldCount:
        rc.arg("HGET");
        key(rc, l);
        owner_arg(rc, c, l, cmd->owner);
        break;
    case CmdKind::Ttl:
        rc.arg("PTTL");
        key(rc, l);
        break;
    case CmdKind::Renew: renew(rc, c, cmd, id); break;
    case CmdKind::LatchDelete:
        rc.arg("DEL");
        latch(rc, l, cmd);
        break;
    case CmdKind::Abandon:
        script(rc, cmd, kScriptFairAbandon, 4);
        key(rc, l);
        prefixed(rc, l, kLockQueuePrefix);
        prefixed(rc, l, kLockTimeoutPrefix);
        channel(rc, l);
        owner_arg(rc, c, l, cmd->owner);
        rc.arg_u64(c->cfg.fair_wait_ms);
        rc.arg(kPublish);
        break;
    case CmdKind::Extend:
        script(rc, cmd, l.kind == EDGELOCK_READ ? kScriptReadRenew : kScriptRenew, 1);
        key(rc, l);
        rc.arg_i64(cmd->lease_ms);
        owner_arg(rc, c, l, cmd->owner);
        break;
    case CmdKind::Info:
        script(rc, cmd, kScriptLockInfo, 4);
        key(rc, l);
        prefixed(rc, l, kLockQueuePrefix);
        prefixed(rc, l, kLockTimeoutPrefix);
        prefixed(rc, l, kLockTokenPrefix);
        break;
    }
    return rc.finish(out, len);
}

ScriptId cmd_script(Client *c, const Command *cmd)
{
    edgelock_lock_kind kind =
        cmd->lock_id && lock_get(c, cmd->lock_id) ? lock_kind(c, cmd->lock_id) : EDGELOCK_REENTRANT;
    switch (cmd->kind) {
    case CmdKind::Acquire:
        switch (kind) {
        case EDGELOCK_REENTRANT: return kScriptAcquire;
        case EDGELOCK_FENCED: return kScriptFencedAcquire;
        case EDGELOCK_FAIR: return kScriptFairAcquire;
        case EDGELOCK_READ: return kScriptReadAcquire;
        case EDGELOCK_WRITE: return kScriptWriteAcquire;
        }
        break;
    case CmdKind::Release:
    case CmdKind::Cleanup:
        switch (kind) {
        case EDGELOCK_REENTRANT:
        case EDGELOCK_FENCED: return kScriptRelease;
        case EDGELOCK_FAIR: return kScriptFairRelease;
        case EDGELOCK_READ: return kScriptReadRelease;
        case EDGELOCK_WRITE: return kScriptWriteRelease;
        }
        break;
    case CmdKind::ForceRelease: return kind == EDGELOCK_FAIR ? kScriptFairForceRelease : kScriptForceRelease;
    case CmdKind::Renew: return cmd->read_batch ? kScriptReadRenew : kScriptRenew;
    case CmdKind::Extend: return kind == EDGELOCK_READ ? kScriptReadRenew : kScriptRenew;
    case CmdKind::Abandon: return kScriptFairAbandon;
    case CmdKind::Info: return kScriptLockInfo;
    default: break;
    }
    return kScriptCount;
}

} // namespace edgelock
