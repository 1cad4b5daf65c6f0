// SPDX-License-Identifier: BSD-3-Clause
// A throwaway 3+3 Redis Cluster (redis_cluster.hpp).
#include "redis_cluster.hpp"

#include <string>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_certs.hpp"

namespace
{

bool reply_is(redisReply *r, const char *want)
{
    bool ok =
        r && (r->type == REDIS_REPLY_STATUS || r->type == REDIS_REPLY_STRING) && strcmp(r->str, want) == 0;
    if (r)
        freeReplyObject(r);
    return ok;
}

// True when a bulk reply (CLUSTER INFO, INFO) contains needle.
bool reply_contains(redisReply *r, const char *needle)
{
    bool ok = r && r->type == REDIS_REPLY_STRING && strstr(r->str, needle);
    if (r)
        freeReplyObject(r);
    return ok;
}

void remove_tree(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        while (struct dirent *e = readdir(d)) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char child[512];
            snprintf(child, sizeof(child), "%s/%s", path, e->d_name);
            struct stat st;
            if (lstat(child, &st) == 0 && S_ISDIR(st.st_mode))
                remove_tree(child);
            else
                unlink(child);
        }
        closedir(d);
    }
    rmdir(path);
}

} // namespace

bool RedisCluster::start_node_on(int i, uint16_t port, uint16_t bus)
{
    char sub[96], bus_s[16], tls_s[16];
    snprintf(sub, sizeof(sub), "%s/n%d", dir_, i);
    mkdir(sub, 0700);
    snprintf(bus_s, sizeof(bus_s), "%u", bus);
    // --repl-diskless-sync-delay 0: a replica syncs at once. By default a
    // master waits 5 s for more replicas to share the transfer, on every
    // start, failover and rejoin.
    const char *args[32] = {
        "--cluster-enabled",      "yes",  "--cluster-config-file",      "nodes.conf", "--cluster-port", bus_s,
        "--cluster-node-timeout", "5000", "--repl-diskless-sync-delay", "0",          "--dir",          sub};
    int n = 12;
    // The cluster bus always asks its peers for a certificate: the nodes
    // present the client one (the server one is for serverAuth only).
    std::string crt = test_cert("server") + ".crt", key = test_cert("server") + ".key",
                ca = test_cert("ca.crt"), ccrt = test_cert("client") + ".crt",
                ckey = test_cert("client") + ".key";
    uint16_t tls_port = 0;
    if (tls_) {
        tls_port = tls_ports_[i] ? tls_ports_[i] : free_loopback_port();
        snprintf(tls_s, sizeof(tls_s), "%u", tls_port);
        const char *more[] = {"--tls-port",
                              tls_s,
                              "--tls-cert-file",
                              crt.c_str(),
                              "--tls-key-file",
                              key.c_str(),
                              "--tls-ca-cert-file",
                              ca.c_str(),
                              "--tls-auth-clients",
                              "no",
                              "--tls-cluster",
                              "yes",
                              "--tls-replication",
                              "yes",
                              "--tls-client-cert-file",
                              ccrt.c_str(),
                              "--tls-client-key-file",
                              ckey.c_str()};
        for (const char *a : more)
            args[n++] = a;
    }
    args[n] = nullptr;
    if (!nodes_[i].start_args(port, args))
        return false;
    bus_[i] = bus;
    tls_ports_[i] = tls_port;
    return true;
}

bool RedisCluster::start_node(int i)
{
    // The cluster bus needs a port of its own: port + 10000 overflows for
    // ephemeral ports, so name one. A taken port costs an attempt.
    for (int attempt = 0; attempt < 5; attempt++) {
        uint16_t port = free_loopback_port(), bus = free_loopback_port();
        tls_ports_[i] = 0; // a new one too
        if (port && bus && port != bus && start_node_on(i, port, bus))
            return true;
    }
    fprintf(stderr, "cluster: node %d did not start\n", i);
    return false;
}

bool RedisCluster::restart_node(int i)
{
    nodes_[i].stop();
    if (start_node_on(i, nodes_[i].port(), bus_[i]))
        return true;
    fprintf(stderr, "cluster: node %d did not restart\n", i);
    return false;
}

bool RedisCluster::all_ok(unsigned within_ms)
{
    for (uint64_t end = mono_ms() + within_ms; mono_ms() < end; sleep_ms(50)) {
        bool ok = true;
        for (int i = 0; i < kNodes && ok; i++)
            ok = reply_contains(nodes_[i].command("CLUSTER INFO"), "cluster_state:ok") &&
                 reply_contains(nodes_[i].command("CLUSTER INFO"), "cluster_known_nodes:6");
        for (int i = kMasters; i < kNodes && ok; i++) // replicas attached and in sync
            ok = reply_contains(nodes_[i].command("INFO replication"), "master_link_status:up");
        if (ok)
            return true;
    }
    return false;
}

bool RedisCluster::start(bool tls)
{
    tls_ = tls;
    if (tls && !test_certs_make()) {
        fprintf(stderr, "cluster: no test certificates (openssl)\n");
        return false;
    }
    snprintf(dir_, sizeof(dir_), "%s/edgelock-cluster.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir_)) {
        dir_[0] = 0;
        return false;
    }
    for (int i = 0; i < kNodes; i++)
        if (!start_node(i))
            return false;
    // Distinct config epochs from the start, as redis-cli --cluster create
    // sets them (only a node that knows no other may be told one). Left at
    // 0, the nodes make them distinct by gossip, which takes a while: a
    // slot moved by SETSLOT NODE meanwhile could go back to its old master,
    // whose claim had the higher epoch (seen as MOVED from the new one).
    for (int i = 0; i < kNodes; i++)
        if (!reply_is(nodes_[i].command("CLUSTER SET-CONFIG-EPOCH %d", i + 1), "OK")) {
            fprintf(stderr, "cluster: SET-CONFIG-EPOCH on node %d refused\n", i);
            return false;
        }
    for (int i = 0; i < kMasters; i++)
        if (!reply_is(nodes_[i].command("CLUSTER ADDSLOTSRANGE %u %u", slot_lo(i), slot_hi(i)), "OK")) {
            fprintf(stderr, "cluster: ADDSLOTSRANGE on node %d refused\n", i);
            return false;
        }
    for (int i = 1; i < kNodes; i++)
        if (!reply_is(nodes_[i].command("CLUSTER MEET 127.0.0.1 %u %u", nodes_[0].port(), bus_[0]), "OK")) {
            fprintf(stderr, "cluster: MEET from node %d refused\n", i);
            return false;
        }
    for (int i = 0; i < kMasters; i++) {
        redisReply *id = nodes_[i].command("CLUSTER MYID");
        if (!id || id->type != REDIS_REPLY_STRING) {
            if (id)
                freeReplyObject(id);
            return false;
        }
        // A replica can follow its master only once it knows it (the MEETs
        // spread by gossip): try until it agrees.
        bool ok = false;
        char last[256] = "no reply";
        for (uint64_t end = mono_ms() + 30000; !ok && mono_ms() < end;) {
            redisReply *r = nodes_[kMasters + i].command("CLUSTER REPLICATE %s", id->str);
            if (r && r->str)
                snprintf(last, sizeof(last), "%s", r->str);
            ok = reply_is(r, "OK");
            if (!ok)
                sleep_ms(50);
        }
        freeReplyObject(id);
        if (!ok) {
            fprintf(stderr, "cluster: node %d would not replicate master %d: %s\n", kMasters + i, i, last);
            return false;
        }
    }
    if (!all_ok(60000)) {
        fprintf(stderr, "cluster: not ok within 60 s\n");
        return false;
    }
    return true;
}

void RedisCluster::stop()
{
    for (auto &n : nodes_)
        n.stop();
    if (dir_[0])
        remove_tree(dir_);
    dir_[0] = 0;
}

bool RedisCluster::rejoin_as_replica(int i, int master)
{
    nodes_[i].stop();
    char sub[96];
    snprintf(sub, sizeof(sub), "%s/n%d", dir_, i);
    remove_tree(sub); // a new node: no nodes.conf, no data
    if (!start_node(i))
        return false;
    if (!reply_is(nodes_[i].command("CLUSTER MEET 127.0.0.1 %u %u", nodes_[master].port(), bus_[master]),
                  "OK"))
        return false;
    redisReply *id = nodes_[master].command("CLUSTER MYID");
    if (!id || id->type != REDIS_REPLY_STRING) {
        if (id)
            freeReplyObject(id);
        return false;
    }
    bool ok = false;
    for (uint64_t end = mono_ms() + 30000; !ok && mono_ms() < end;) {
        ok = reply_is(nodes_[i].command("CLUSTER REPLICATE %s", id->str), "OK");
        if (!ok)
            sleep_ms(50);
    }
    freeReplyObject(id);
    for (uint64_t end = mono_ms() + 30000; ok && mono_ms() < end; sleep_ms(50))
        if (reply_contains(nodes_[i].command("INFO replication"), "master_link_status:up"))
            return true;
    fprintf(stderr, "cluster: node %d did not come back as a replica of node %d\n", i, master);
    return false;
}

RedisServer &RedisCluster::master_of(uint16_t slot)
{
    for (int i = 0; i < kMasters; i++)
        if (slot >= slot_lo(i) && slot <= slot_hi(i))
            return nodes_[i];
    return nodes_[0];
}

RedisCluster &shared_cluster()
{
    static RedisCluster cluster;
    static bool started = false;
    if (!started) {
        if (!cluster.start()) {
            fprintf(stderr, "cannot start a Redis Cluster; is redis-server 7 installed?\n");
            abort();
        }
        started = true;
    }
    return cluster;
}
