#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Decode the bytes a scenario run wrote to its Redis sockets (see compare.sh,
WIRE_STRACE=1).

argv[1]: the output of `strace -f -xx -s 1000000 -e trace=write,sendto -o FILE`.
Every write to a socket whose stream starts with '*' is collected per file
descriptor. Each stream must parse as RESP arrays of bulk strings with nothing
left over, and re-encoding what was parsed must give back the same bytes (so the
bytes are exactly determined by the argument lists printed here). stdout: per
connection (cmd or pubsub: the one that SUBSCRIBEs) its commands, one a line
(byte counts go to stderr: owner ids of another digit count change them), normalised as normalise.py does (latch id prefixes,
13-digit epoch ms, owner thread ids). Exit status 1 when a stream does not parse.
"""
import re
import sys

WRITE = re.compile(r'^(?:\[pid\s+\d+\] |\d+\s+)?(?:write|sendto)\((\d+), "((?:\\x[0-9a-f]{2})*)"')
HEADER = re.compile(rb'\*([1-9][0-9]*)\r\n')
BULK = re.compile(rb'\$(0|[1-9][0-9]*)\r\n')


def parse(b):
    i, cmds = 0, []
    while i < len(b):
        m = HEADER.match(b, i)
        if not m:
            raise ValueError('no array header at byte %d: %r' % (i, b[i:i + 40]))
        n, i, args = int(m.group(1)), m.end(), []
        for _ in range(n):
            m = BULK.match(b, i)
            if not m:
                raise ValueError('no bulk string at byte %d: %r' % (i, b[i:i + 40]))
            ln, i = int(m.group(1)), m.end()
            if b[i + ln:i + ln + 2] != b'\r\n':
                raise ValueError('bulk string at byte %d not ended by CRLF' % i)
            args.append(b[i:i + ln])
            i += ln + 2
        cmds.append(args)
    enc = b''.join(b'*%d\r\n' % len(a) + b''.join(b'$%d\r\n%s\r\n' % (len(x), x) for x in a) for a in cmds)
    if enc != b:
        raise ValueError('not the canonical encoding of its own arguments')
    return cmds


def main():
    streams, order = {}, []
    with open(sys.argv[1], errors='replace') as f:
        for line in f:
            m = WRITE.match(line)
            if not m:
                continue
            fd = int(m.group(1))
            data = bytes(int(h, 16) for h in re.findall(r'\\x([0-9a-f]{2})', m.group(2)))
            if fd <= 2 or (fd not in streams and not data.startswith(b'*')):
                continue  # stdio, or not Redis (the event loop's wakeup pipe/eventfd)
            if fd not in streams:
                streams[fd] = b''
                order.append(fd)
            streams[fd] += data

    owners, latches = {}, {}

    def idx(table, key, stem):
        if key not in table:
            table[key] = '%s%d' % (stem, len(table) + 1)
        return table[key]

    out, total = [], 0
    for fd in order:
        try:
            cmds = parse(streams[fd])
        except ValueError as e:
            print('fd %d: %s' % (fd, e))
            return 1
        total += len(cmds)
        sub = any(c[0].upper() in (b'SUBSCRIBE', b'UNSUBSCRIBE', b'PSUBSCRIBE') for c in cmds)
        out.append(('pubsub' if sub else 'cmd', fd, cmds))
    out.sort(key=lambda o: o[0])  # roles, not fd numbers (connect order may vary)
    for role, fd, cmds in out:
        print('== %s: %d commands' % (role, len(cmds)))
        print('%s: %d commands, %d bytes' % (role, len(cmds), len(streams[fd])), file=sys.stderr)
        for c in cmds:
            s = ' '.join(repr(x)[1:] for x in c)
            s = re.sub(r':([0-9a-f]{16})([0-9a-f]{16})(?![0-9a-f])',
                       lambda x: ':' + idx(latches, x.group(1), 'latch') + '-' + x.group(2), s)
            s = re.sub(r'(?<![0-9a-zA-Z.])\d{13}(?![0-9])', '<wall-ms>', s)
            s = re.sub(r'wire:(\d+)', lambda x: 'wire:' + idx(owners, x.group(1), 'owner'), s)
            print(s)
    print('== total: %d commands' % total)
    return 0


if __name__ == '__main__':
    sys.exit(main())
