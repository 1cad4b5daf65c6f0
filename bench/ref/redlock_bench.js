// SPDX-License-Identifier: BSD-3-Clause
// Reference rows for `make bench`: node-redlock (npm `redlock`) over ioredis,
// one Redis server, at redlock's default retry settings (retryCount 10,
// retryDelay 200 ms, retryJitter 100 ms). One JSON object per call on stdout.
//
//   node redlock_bench.js a --port P [--pairs N --samples FILE]
//   node redlock_bench.js b --port P [--pairs K --handoffs N --samples FILE]
//   node redlock_bench.js c --port P [--clients 8 --ms 2000]
'use strict';

const fs = require('fs');
const path = require('path');

const modules = path.join(__dirname, '..', 'node_modules');
const Redis = require(path.join(modules, 'ioredis'));
const Redlock = require(path.join(modules, 'redlock'));

const LEASE_MS = 10000; // the same fixed lease edgelock's rows use

function parseArgs(argv) {
  const args = { scenario: argv[2], port: 0, pairs: 0, handoffs: 200, samples: '', clients: 8, ms: 2000 };
  for (let i = 3; i + 1 < argv.length; i += 2) {
    const k = argv[i].replace(/^--/, '');
    args[k] = k === 'samples' ? argv[i + 1] : Number(argv[i + 1]);
  }
  return args;
}

function pct(values, p) {
  const s = values.slice().sort((a, b) => a - b);
  if (s.length === 0) return 0;
  const rank = Math.max(1, Math.min(s.length, Math.ceil((p / 100) * s.length - 1e-9)));
  return s[rank - 1];
}

function latency(prefix, ns) {
  const us = ns.map((v) => Number(v) / 1000);
  const mean = us.length ? us.reduce((a, b) => a + b, 0) / us.length : 0;
  return {
    [prefix + '_p50_us']: pct(us, 50),
    [prefix + '_p99_us']: pct(us, 99),
    [prefix + '_mean_us']: mean,
    [prefix + '_n']: us.length,
  };
}

const now = () => process.hrtime.bigint();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function client(port) {
  return new Redis({ host: '127.0.0.1', port, lazyConnect: false });
}

async function scenarioA(args) {
  const r = client(args.port);
  const redlock = new Redlock([r]);
  const warm = 200;
  const n = args.pairs || 2000;
  const lat = [];
  let start = 0n;
  for (let i = 0; i < warm + n; i++) {
    if (i === warm) start = now();
    const t0 = now();
    const lock = await redlock.lock('bench:rl:a:' + (i % 1000), LEASE_MS);
    await lock.unlock();
    const t1 = now();
    if (i >= warm) lat.push(t1 - t0);
  }
  const elapsed = Number(now() - start) / 1e9;
  r.disconnect();
  if (args.samples) fs.writeFileSync(args.samples, lat.map((v) => (Number(v) / 1000).toFixed(3)).join('\n') + '\n');
  return Object.assign({ scenario: 'a', library: 'redlock', pairs_per_s: n / elapsed, ops_total: warm + n }, latency('pair', lat));
}

async function scenarioB(args) {
  // `pairs` independent (A, B) pairs on distinct locks run side by side, each
  // doing handoffs/pairs handoffs in turn, so releases land at random points
  // of B's 100-300 ms retry cycle without taking minutes.
  const pairs = args.pairs || 4;
  const perPair = Math.max(1, Math.floor(args.handoffs / pairs));
  const samples = [];
  async function runPair(k) {
    const ra = client(args.port);
    const rb = client(args.port);
    const la = new Redlock([ra]);
    const lb = new Redlock([rb]);
    const name = 'bench:rl:b:' + k;
    for (let i = 0; i < perPair; i++) {
      const a = await la.lock(name, LEASE_MS);
      let t1 = 0n;
      const waiter = lb.lock(name, LEASE_MS).then((b) => {
        t1 = now();
        return b.unlock();
      });
      // Hold for a random time spanning a whole retry interval.
      await sleep(5 + Math.random() * 300);
      const t0 = now();
      await a.unlock();
      await waiter;
      samples.push(t1 - t0);
    }
    ra.disconnect();
    rb.disconnect();
  }
  const runs = [];
  for (let k = 0; k < pairs; k++) runs.push(runPair(k));
  await Promise.all(runs);
  if (args.samples) fs.writeFileSync(args.samples, samples.map((v) => (Number(v) / 1000).toFixed(3)).join('\n') + '\n');
  return Object.assign({ scenario: 'b', library: 'redlock', concurrent_pairs: pairs, ops_total: samples.length }, latency('handoff', samples));
}

async function scenarioC(args) {
  const admin = client(args.port);
  await admin.del('bench:rl:c:counter', 'bench:rl:c:lock');
  const n = args.clients;
  const counts = new Array(n).fill(0);
  const gaveUp = new Array(n).fill(0);
  let holders = 0;
  let overlaps = 0;
  const conns = [];
  for (let i = 0; i < n; i++) {
    const r = client(args.port);
    await r.ping();
    conns.push(r);
  }
  const start = now();
  const deadline = start + BigInt(Math.round(args.ms * 1e6));
  async function worker(i) {
    const r = conns[i];
    const redlock = new Redlock([r]);
    while (now() < deadline) {
      let lock;
      try {
        lock = await redlock.lock('bench:rl:c:lock', LEASE_MS);
      } catch (e) {
        gaveUp[i]++; // LockError after retryCount attempts: try again, as a caller would
        continue;
      }
      if (++holders !== 1) overlaps++;
      const v = Number((await r.get('bench:rl:c:counter')) || 0);
      await r.set('bench:rl:c:counter', v + 1);
      counts[i]++;
      holders--;
      await lock.unlock();
    }
  }
  const ws = [];
  for (let i = 0; i < n; i++) ws.push(worker(i));
  await Promise.all(ws);
  const elapsed = Number(now() - start) / 1e9;
  const total = counts.reduce((a, b) => a + b, 0);
  const counter = Number((await admin.get('bench:rl:c:counter')) || 0);
  for (const r of conns) r.disconnect();
  admin.disconnect();
  return {
    scenario: 'c', library: 'redlock', kind: 'plain', clients: n, seconds: elapsed, acquisitions: total, ops_total: total,
    acquisitions_per_s: total / elapsed, per_client_min: Math.min(...counts), per_client_max: Math.max(...counts),
    per_client: counts, gave_up: gaveUp.reduce((a, b) => a + b, 0), counter, overlaps,
    exclusion_ok: counter === total && overlaps === 0,
  };
}

async function main() {
  const args = parseArgs(process.argv);
  let out;
  if (args.scenario === 'a') out = await scenarioA(args);
  else if (args.scenario === 'b') out = await scenarioB(args);
  else if (args.scenario === 'c') out = await scenarioC(args);
  else throw new Error('unknown scenario ' + args.scenario);
  out.version = require(path.join(modules, 'redlock', 'package.json')).version;
  out.ioredis_version = require(path.join(modules, 'ioredis', 'package.json')).version;
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  process.stderr.write('redlock_bench: ' + (e && e.stack ? e.stack : e) + '\n');
  process.exit(1);
});
