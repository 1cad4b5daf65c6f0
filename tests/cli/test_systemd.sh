#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# examples/systemd: the units' own ExecStart lines do what their README says,
# run here against a throwaway Redis (the edgelock under test for
# /usr/bin/edgelock, stand-ins for the daemon and the job):
#  - site-leader.service: of two gateways, one runs the daemon; when it stops
#    (systemd's SIGTERM to edgelock), the other takes over;
#  - firmware-sync.service: while one gateway runs the job, another's run
#    skips at once and succeeds (-n -E 0).
# And where systemd-analyze exists, the units verify.
source "$(dirname "$0")/lib.sh" "$@"
start_redis
SRC=$(cd "$(dirname "$0")/../.." && pwd)
UNITS=$SRC/examples/systemd

# The command of a unit's ExecStart=, with our binary and stand-ins.
exec_start() { # exec_start UNIT DAEMON
    sed -n 's/^ExecStart=//p' "$UNITS/$1" | sed "s|/usr/bin/edgelock|$EDGELOCK|; s|/usr/local/bin/[a-z-]*|$2|"
}

# --- leader election ----------------------------------------------------------
leader_cmd=$(exec_start site-leader.service "$TMP/daemon")
check "site-leader.service has an edgelock run ExecStart" grep -q "run .*site-42:leader -- $TMP/daemon" <<<"$leader_cmd"
cat >"$TMP/daemon" <<EOF
#!/bin/sh
echo "\$GATEWAY" >>"$TMP/leaders"
trap 'exit 0' TERM
while :; do sleep 0.1; done
EOF
chmod +x "$TMP/daemon"
GATEWAY=a bash -c "exec $leader_cmd" &
gw_a=$!
GATEWAY=b bash -c "exec $leader_cmd" &
gw_b=$!
wait_for "one gateway leads" "$HANG_MS" test -s "$TMP/leaders"
sleep 0.5
check "only one daemon runs" [ "$(wc -l <"$TMP/leaders")" = 1 ]
first=$(head -1 "$TMP/leaders")
[ "$first" = a ] && { leader=$gw_a; other=$gw_b; } || { leader=$gw_b; other=$gw_a; }
kill -TERM "$leader" # systemctl stop: SIGTERM to the main process (KillMode=mixed)
wait "$leader"
check "the stopped leader's edgelock ends with its daemon's status (0)" [ $? = 0 ]
leaders_are() { [ "$(wc -l <"$TMP/leaders")" = "$1" ]; } # read again at every poll
wait_for "the other gateway takes over" "$HANG_MS" leaders_are 2
second=$(sed -n 2p "$TMP/leaders")
check "... and it is the other one" test -n "$second" -a "$second" != "$first"
kill -TERM "$other"
wait "$other"
wait_for "the lock is free at the end" "$HANG_MS" lock_free site-42:leader

# --- one gateway at a time ----------------------------------------------------
job_cmd=$(exec_start firmware-sync.service "$TMP/job")
check "firmware-sync.service skips with -n -E 0" grep -q -- "-n -E 0" <<<"$job_cmd"
cat >"$TMP/job" <<EOF
#!/bin/sh
touch "$TMP/job-started"
while [ ! -e "$TMP/job-may-end" ]; do sleep 0.05; done
echo ran >>"$TMP/job-runs"
EOF
chmod +x "$TMP/job"
bash -c "exec $job_cmd" &
job1=$!
wait_for "the first gateway's job runs" "$HANG_MS" test -e "$TMP/job-started"
expect_rc 0 "a second gateway's run skips and succeeds" bash -c "exec $job_cmd"
touch "$TMP/job-may-end"
wait "$job1"
check "the first job ended well" [ $? = 0 ]
check "the job ran once" [ "$(wc -l <"$TMP/job-runs")" = 1 ]

if command -v systemd-analyze >/dev/null; then
    mkdir -p "$TMP/units"
    for u in site-leader.service firmware-sync.service firmware-sync.timer; do
        sed "s|/usr/bin/edgelock|$EDGELOCK|; s|/usr/local/bin/[a-z-]*|/bin/true|" "$UNITS/$u" >"$TMP/units/$u"
    done
    (cd "$TMP/units" && systemd-analyze verify ./site-leader.service ./firmware-sync.service ./firmware-sync.timer) \
        >"$TMP/verify" 2>&1
    check "systemd-analyze verify: no complaint" test ! -s "$TMP/verify"
    cat "$TMP/verify"
fi
finish
