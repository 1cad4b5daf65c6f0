// SPDX-License-Identifier: BSD-3-Clause
// A throwaway Redis Cluster for one test binary: 3 masters and 3 replicas on
// free loopback ports, each node in a directory of its own under a temp dir
// (its nodes.conf), built with CLUSTER ADDSLOTSRANGE, MEET and REPLICATE, and
// ready when every node reports cluster_state:ok. Stopped (SIGKILL) and its
// directory removed by the destructor.
#pragma once

#include <stdint.h>

#include "redis_server.hpp"

class RedisCluster
{
public:
    static constexpr int kMasters = 3;
    static constexpr int kNodes = 2 * kMasters; // master i is node i, its replica node kMasters + i

    RedisCluster() = default;
    ~RedisCluster() { stop(); }
    RedisCluster(const RedisCluster &) = delete;
    RedisCluster &operator=(const RedisCluster &) = delete;

    // Start every node and build the cluster; false (with a message) if it
    // did not come up within a generous bound. tls: every node also takes
    // TLS clients on a port of its own (test_certs' server certificate,
    // which names 127.0.0.1), and the nodes speak TLS among themselves; the
    // plain port stays for the tests' own commands.
    bool start(bool tls = false);
    void stop();
    RedisServer &node(int i) { return nodes_[i]; }
    uint16_t tls_port(int i) const { return tls_ports_[i]; } // 0 without tls
    // Master i serves slots [slot_lo(i), slot_hi(i)].
    static uint16_t slot_lo(int i) { return (uint16_t)(16384 * i / kMasters); }
    static uint16_t slot_hi(int i) { return (uint16_t)(16384 * (i + 1) / kMasters - 1); }
    // The master node that serves slot.
    RedisServer &master_of(uint16_t slot);
    // Node i (stopped, or failed over) comes back empty, on a new port, as a
    // replica of node `master`, in sync: a cluster that lost a node to a
    // failover gets its replica back. False (with a message) if it did not
    // within a generous bound.
    bool rejoin_as_replica(int i, int master);
    // Node i stopped (SIGKILL, as a crash) and started again on its ports
    // with what its directory holds: its nodes.conf, and the dump.rdb of its
    // last SAVE (the tests' servers save nothing on their own).
    bool restart_node(int i);

private:
    bool start_node(int i);
    bool start_node_on(int i, uint16_t port, uint16_t bus);
    bool all_ok(unsigned within_ms);
    RedisServer nodes_[kNodes];
    uint16_t bus_[kNodes] = {}; // each node's cluster bus port (MEET names it)
    uint16_t tls_ports_[kNodes] = {};
    bool tls_ = false;
    char dir_[64] = {0};
};

// The binary's one cluster, built on first use (aborts the binary if it
// cannot be: every test that asks for it needs it).
RedisCluster &shared_cluster();
