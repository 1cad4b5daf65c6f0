#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Misbehaving Redis servers for the CLI tests (test_deadline.sh).

    slow_redis.py MODE [ARGS...]

Listens on a free loopback port and prints it as its first line of output,
then serves every connection in a thread of its own. MODE:

  trickle-accept      from the accept on, 1 byte every 200 ms of a status line
                      that never ends, whatever the client sends
  trickle-reply       SCRIPT LOAD and INFO answered at once (so the connection
                      setup succeeds); every other command answered 1 byte every
                      200 ms with a reply that never ends
  grow DELAY_MS       SCRIPT LOAD and INFO answered at once; every other command (the
                      lock_info script of `edgelock status`) answered after
                      DELAY_MS with a lock hash of twice as many holders as the
                      last answer had, so the reader always finds more than it
                      has room for; prints "read N" for every such command
  late-replies DELAY_MS PORT
                      a proxy to the Redis on loopback PORT: what the client
                      sends goes on at once, what Redis answers reaches the
                      client DELAY_MS later (a slow way back, as on a WAN)
"""
import queue
import socket
import sys
import threading
import time

TRICKLE_S = 0.2
SHA = b"0" * 40


def bulk(data):
    return b"$%d\r\n%s\r\n" % (len(data), data)


def read_command(f):
    """One RESP array of bulk strings from f; None at end of stream."""
    line = f.readline()
    if not line:
        return None
    if not line.startswith(b"*"):
        return [line.strip()]  # an inline command
    args = []
    for _ in range(int(line[1:])):
        size = int(f.readline()[1:])
        args.append(f.read(size + 2)[:-2])
    return args


def trickle(sock, data):
    for b in data:
        sock.sendall(bytes([b]))
        time.sleep(TRICKLE_S)


def endless(prefix):
    while True:
        yield from prefix
        prefix = b"x"


def serve_trickle_accept(conn):
    trickle(conn, endless(b"+"))


def serve_commands(conn, answer):
    f = conn.makefile("rb")
    while True:
        args = read_command(f)
        if args is None:
            return
        if args and args[0].upper() == b"SCRIPT":
            conn.sendall(bulk(SHA))
        elif args and args[0].upper() == b"INFO":  # the connection setup asks which server
            conn.sendall(bulk(b"# Server\r\nrun_id:" + SHA + b"\r\n"))
        else:
            answer(conn, args)


def answer_trickle(conn, args):
    trickle(conn, endless(b"*8\r\n$4\r\nhash\r\n*1000000\r\n"))


class Grow:
    def __init__(self, delay_ms):
        self.delay_s = delay_ms / 1000.0
        self.holders = 40  # more than `status` reads at first
        self.reads = 0
        self.lock = threading.Lock()

    def __call__(self, conn, args):
        with self.lock:
            self.reads += 1
            n = self.holders
            self.holders *= 2
            print("read %d" % self.reads, flush=True)
        fields = b"".join(bulk(b"gw-%d:1" % i) + bulk(b"1") for i in range(n))
        reply = (b"*8\r\n" + bulk(b"hash") + b"*%d\r\n" % (2 * n) + fields + b":-1\r\n*0\r\n*0\r\n$-1\r\n*2\r\n"
                 + bulk(b"1700000000") + bulk(b"0") + b":0\r\n")
        time.sleep(self.delay_s)
        conn.sendall(reply)


class LateReplies:
    def __init__(self, delay_ms, port):
        self.delay_s = delay_ms / 1000.0
        self.port = port

    def __call__(self, conn):
        upstream = socket.create_connection(("127.0.0.1", self.port))
        due = queue.Queue()  # (when, bytes) from Redis, in order

        def read_redis():
            try:
                while True:
                    data = upstream.recv(65536)
                    due.put((time.monotonic() + self.delay_s, data))
                    if not data:
                        return
            except OSError:
                due.put((0, b""))

        def write_client():
            try:
                while True:
                    when, data = due.get()
                    if not data:
                        break
                    time.sleep(max(0.0, when - time.monotonic()))
                    conn.sendall(data)
            except OSError:
                pass
            conn.shutdown(socket.SHUT_WR)

        threading.Thread(target=read_redis, daemon=True).start()
        writer = threading.Thread(target=write_client, daemon=True)
        writer.start()
        try:
            while True:
                data = conn.recv(65536)
                if not data:
                    break
                upstream.sendall(data)
        finally:
            upstream.close()
            writer.join()


def main():
    mode = sys.argv[1]
    if mode == "trickle-accept":
        serve = serve_trickle_accept
    elif mode == "trickle-reply":
        def serve(c):
            serve_commands(c, answer_trickle)
    elif mode == "grow":
        grow = Grow(int(sys.argv[2]))

        def serve(c):
            serve_commands(c, grow)
    elif mode == "late-replies":
        serve = LateReplies(int(sys.argv[2]), int(sys.argv[3]))
    else:
        sys.exit("unknown mode " + mode)

    def run(c):
        try:
            serve(c)
        except (OSError, ValueError):
            pass  # the client went away
        finally:
            c.close()

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    print(listener.getsockname()[1], flush=True)
    while True:
        c, _ = listener.accept()
        threading.Thread(target=run, args=(c,), daemon=True).start()


if __name__ == "__main__":
    main()
