#!/bin/sh
# /init (PID 1) of the siw peer's initramfs; build-peer.sh puts it there, SiwPeer talks to it.
#
# Sets the guest up (modules, eth0 = 10.0.2.15/24 via 10.0.2.2 on QEMU's user network, the siw0
# device on eth0), logs that to the console (ttyS0) and /tmp/jw/setup.log, then serves commands
# on the virtio-serial port named org.jiwarp.cmd (/dev/vportNpM). The protocol, one line each way,
# ASCII only; <n> in an id "x<n>" or "b<n>" grows with every request, <try> counts its copies:
#
#   host:  X <id> <try> <seconds> <md5 of the script> <the script, escaped>
#                                              run the script, kill its process group after <seconds>
#          (escaped: every octet but the printable ASCII ones other than space and backslash as
#          \0 and three octal digits, as printf's %b reads it: the shell decodes it without a fork)
#   guest: @@JW <id> ACK <try>@@              at once, for the first intact copy, before running it
#          @@JW <id> BEGIN@@
#          <output (stdout and stderr) in base64, 76 characters a line>
#          @@JW <id> END <exit status> <1 if it was killed for time, else 0> <md5 of the output>@@
#
#   host:  B <id> <try> 0 <md5> <the script, escaped>   start the script in the background
#   guest: @@JW <id> ACK <try>@@
#          @@JW <id> STARTED <pid = process group>@@
#          later: /tmp/jw/<id>.out holds its output, /tmp/jw/<id>.rc its exit status once it ends
#
#   guest: @@JW <id> NAK <try> <why>@@        a damaged copy (its script not as its md5 says): the
#          @@JW ? NAK <why>@@                 host sends it again; "?" when no id can be read
#          @@JW <id> DUP <try>@@              a later copy of the request it ran last (the host
#                                             resent it when the ACK was late): the same answer
#                                             again, the script is not run twice
#          @@JW <id> STALE <try>@@            a copy of a request older than that: ignored
#
# Once the setup is over, the guest prints "@@JW READY <0 or the number of failed steps>@@".
# Scripts run under /bin/sh (busybox ash) with stdin from /dev/null, in /tmp.
#
# Why the loop runs in a process of its own that has no child while it reads: busybox ash's `read`
# takes one byte at a time with poll(), and a signal that interrupts the poll (ash catches SIGCHLD
# always) makes it start the line again with the bytes read so far thrown away. The loop used to
# be PID 1, reading ttyS1: every orphan in the guest ended as its child (the watchdogs' sleeps
# among them) and each one's end could cut the head off a request, which the loop then refused
# ("bad id") while the host waited for an answer (siw-peer/README.md, "The command channel").

export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root
umask 022
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm /tmp/jw
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
hostname siw-peer

FAILED=0
step() {
  echo "siw-peer: $*"
  "$@" || { echo "siw-peer: FAILED (exit $?): $*"; FAILED=$((FAILED + 1)); }
}

load_modules() {
  dir=/lib/modules/$(uname -r)
  while read -r mod; do
    case $mod in
      \?*) insmod "$dir/${mod#?}" 2>/dev/null || echo "siw-peer: optional ${mod#?} not loaded" ;;
      *) step insmod "$dir/$mod" ;;
    esac
  done </etc/siw-peer/modules
}

PORT_NAME=org.jiwarp.cmd

# Prints the device of the virtio-serial port named $PORT_NAME (no udev here: sysfs has the names).
find_port() {
  for p in /sys/class/virtio-ports/*; do
    [ "$(cat "$p/name" 2>/dev/null)" = "$PORT_NAME" ] && [ -e "/dev/${p##*/}" ] && { echo "/dev/${p##*/}"; return 0; }
  done
  return 1
}

wait_for_port() { # $1 = tenths of a second
  i=0
  while ! find_port >/dev/null && [ "$i" -lt "$1" ]; do sleep 0.1; i=$((i + 1)); done
  find_port
}

wait_for() { # $1 = path, $2 = tenths of a second
  i=0
  while [ ! -e "$1" ] && [ "$i" -lt "$2" ]; do sleep 0.1; i=$((i + 1)); done
  [ -e "$1" ]
}

setup() {
  echo "siw-peer: kernel $(uname -r), $(sed -n 's/^linux-image-.*=//p' /etc/siw-peer/versions)"
  load_modules
  step wait_for /sys/class/net/eth0 100
  step ip link set lo up
  step ip addr add 10.0.2.15/24 dev eth0
  step ip link set eth0 up
  step ip route add default via 10.0.2.2
  step rdma link add siw0 type siw netdev eth0
  step wait_for /dev/infiniband/rdma_cm 50
  step wait_for /dev/infiniband/uverbs0 50
  step wait_for_port 100
  rdma link show
  echo "siw-peer: setup done, $FAILED failed step(s)"
}

setup >/tmp/jw/setup.log 2>&1
cat /tmp/jw/setup.log >/dev/console

# --- the command channel ---------------------------------------------------------------------

# Sends the answer to request $1 (the one run last), from what running it left in /tmp/jw.
answer() {
  if [ -e "/tmp/jw/$1.end" ]; then
    read -r rc timedout sum <"/tmp/jw/$1.end"
    echo "@@JW $1 BEGIN@@"
    base64 "/tmp/jw/$1.out"
    echo "@@JW $1 END $rc $timedout $sum@@"
  else
    read -r line <"/tmp/jw/$1.reply"
    echo "$line"
  fi
}

# The time limits of X requests, kept by one process for all of them: told "<pid> <seconds>
# <files>" when a script starts and "done" when it ends, over a FIFO, it kills the script's process
# group if "done" does not come in time. (A watchdog per request cost two more processes each.)
keep_limits() {
  while read -r pid secs f; do
    if ! read -r -t "$secs" done; then
      : >"$f.timeout"
      kill -9 "-$pid" 2>/dev/null || rm -f "$f.timeout"  # busybox kill takes no "--"
      read -r done
    fi
  done
}

# Runs X request $id (script $f.sh) to its end or its time limit.
run_x() {
  # setsid: the script leads its own process group, so a timeout kills all it started.
  setsid sh "$f.sh" </dev/null >"$f.out" 2>&1 4>&- &
  pid=$!
  echo "$pid $secs $f" >&4
  wait "$pid"
  rc=$?
  echo done >&4
  timedout=0
  [ -e "$f.timeout" ] && timedout=1
  sum=$(md5sum <"$f.out")
  echo "$rc $timedout ${sum%% *}" >"$f.end"
}

# Starts B request $id in the background. Twice forked: the loop must have no child that could
# end (and signal it) while it reads; the script's keeper becomes PID 1's.
run_b() {
  rm -f "$f.pid"
  (
    (
      setsid sh "$f.sh" </dev/null >"$f.out" 2>&1 &
      echo $! >"$f.pid"
      wait $!
      echo $? >"$f.rc.tmp"
      mv "$f.rc.tmp" "$f.rc"
    ) &
  ) </dev/null >/dev/null 2>&1 4>&-
  while [ ! -s "$f.pid" ]; do sleep 0.01; done
  read -r pid <"$f.pid"
  echo "@@JW $id STARTED $pid@@" >"$f.reply"
}

serve() {
  cd /tmp
  exec 4<>/tmp/jw/limits  # read and write: a write never finds the FIFO without a reader
  last=0 lastid=
  echo "@@JW READY $FAILED@@"
  while read -r verb id try secs sum script; do
    n=${id#[xb]}
    case $id in [xb]*) ;; *) n= ;; esac
    case "$n.$try.$secs" in
      *[!0-9.]*|.*|*..*|*.) echo "@@JW ? NAK unreadable request@@"; continue ;;
    esac
    if [ "$n" -le "$last" ]; then
      if [ "$id" = "$lastid" ]; then
        echo "@@JW $id DUP $try@@"
        answer "$id"
      else
        echo "@@JW $id STALE $try@@"
      fi
      continue
    fi
    # The host has the answers to the requests before this one (it sent this one after them):
    # now and then, drop what only those answers needed. A background request's files stay for
    # its poller.
    if [ $((n % 32)) = 0 ]; then
      rm -f /tmp/jw/x* /tmp/jw/b*.reply
    fi
    f=/tmp/jw/$id
    printf '%b' "$script" >"$f.sh"
    got=$(md5sum <"$f.sh")
    if [ "${got%% *}" != "$sum" ]; then
      echo "@@JW $id NAK $try damaged@@"
      continue
    fi
    echo "@@JW $id ACK $try@@"
    last=$n lastid=$id
    case $verb in
      X) run_x ;;
      B) run_b ;;
      *) echo "@@JW $id ERROR unknown verb $verb@@" >"$f.reply" ;;
    esac
    answer "$id"
  done
}

mkfifo /tmp/jw/limits
keep_limits <>/tmp/jw/limits >/dev/null 2>>/tmp/jw/serve.log &

# The loop reads and writes the port; should the port close (the host went away), it opens it
# again. PID 1 itself stays behind: orphans are reparented to it, and its `wait` reaps them.
(
  while :; do
    if port=$(find_port); then
      serve <>"$port" >&0
      echo "siw-peer: command channel closed, opening it again" >/dev/console
    fi
    sleep 1
  done
) </dev/null >/dev/null 2>>/tmp/jw/serve.log &
while :; do
  wait
  sleep 1
done
