#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Normalise a `redis-cli MONITOR` log of tests/wire/scenario.c (see compare.sh).

stdin: the raw log; stdout: the normalised one. Only what varies between runs
of one build is replaced; every other byte of every command is kept.

- The MONITOR timestamp is dropped. The client address becomes the
  connection's role, cmdN or pubsubN (the connection that SUBSCRIBEs), numbered
  in order of first appearance. Each connection's commands are listed in their
  order, one connection after the other: how two connections interleave is
  scheduling, and it varies between runs of one build. The calls a script makes
  ("lua") stay, indented, under the client command that ran it.
- Unlock latch request ids (8 random bytes per client, then an 8-byte counter,
  in hex) keep the counter; the random prefix becomes latchN.
- 13-digit numbers (epoch ms: fair lock ARGV and what scripts compute from it)
  become <wall-ms>.
- The owner id in "wire:<owner>" becomes ownerN in order of first appearance
  (blocking calls use kernel thread ids).
- The TTL in a script's own "pexpire" call becomes <ms>: scripts compute it from
  PTTL, so it moves with the clock (the lease ARGV it comes from is compared
  as sent).
The marker command ECHO "wire-compare-end" (sent by compare.sh once the
scenario has exited), everything after it, and everything else its
connection sent (AUTH) are dropped.
"""
import re
import sys

LINE = re.compile(r'^\d+\.\d+ \[(\d+) ([^\]]+)\] (.*)$')
END = '"ECHO" "wire-compare-end"'


def main():
    owners, latches = {}, {}

    def idx(table, key, stem):
        if key not in table:
            table[key] = '%s%d' % (stem, len(table) + 1)
        return table[key]

    lines = [l.rstrip('\n') for l in sys.stdin]
    # The marker's own connection (redis-cli: AUTH, then ECHO) is not the scenario's.
    marker = None
    for line in lines:
        m = LINE.match(line)
        if m and m.group(3) == END:
            marker = m.group(2)
            break
    blocks = []  # [client address, db, command, [script calls]]
    for line in lines:
        if line == 'OK':
            continue
        m = LINE.match(line)
        if not m:
            blocks.append(['??', '?', line, []])
            continue
        db, who, cmd = m.groups()
        if cmd == END:
            break
        if who == marker:
            continue
        cmd = re.sub(r':([0-9a-f]{16})([0-9a-f]{16})(?![0-9a-f])',
                     lambda x: ':' + idx(latches, x.group(1), 'latch') + '-' + x.group(2), cmd)
        cmd = re.sub(r'(?<![0-9a-zA-Z.])\d{13}(?![0-9])', '<wall-ms>', cmd)
        cmd = re.sub(r'wire:(\d+)', lambda x: 'wire:' + idx(owners, x.group(1), 'owner'), cmd)
        if who == 'lua':
            cmd = re.sub(r'^("pexpire" "[^"]*") "\d+"$', r'\1 "<ms>"', cmd)
            if not blocks:
                blocks.append(['??', db, '(script call without a client command)', []])
            blocks[-1][3].append('  [%s lua] %s' % (db, cmd))
        else:
            blocks.append([who, db, cmd, []])

    pubsub = {b[0] for b in blocks if re.match(r'"P?(UN)?SUBSCRIBE"', b[2])}
    names, count = {}, {}
    for b in blocks:
        if b[0] not in names:
            role = 'pubsub' if b[0] in pubsub else 'cmd'
            count[role] = count.get(role, 0) + 1
            names[b[0]] = '%s%d' % (role, count[role])
    for who in sorted(names, key=lambda w: names[w]):
        for b in blocks:
            if b[0] == who:
                print('[%s %s] %s' % (b[1], names[who], b[2]))
                for call in b[3]:
                    print(call)


if __name__ == '__main__':
    main()
