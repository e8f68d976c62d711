#!/bin/sh
# /init (PID 1) of the siw peer's initramfs; build-peer.sh puts it there, SiwPeer talks to it.
#
# Sets the guest up (modules, eth0 = 10.0.2.15/24 via 10.0.2.2 on QEMU's user network, the siw0
# device on eth0), logs that to the console (ttyS0) and /tmp/jw/setup.log, then serves commands
# on the second serial port (ttyS1). The protocol, one line each way, ASCII only:
#
#   host:  X <id> <seconds> <base64 script>   run the script, kill its process group after <seconds>
#   guest: @@JW <id> BEGIN@@
#          <output (stdout and stderr) in base64, 76 characters a line>
#          @@JW <id> END <exit status> <1 if it was killed for time, else 0>@@
#
#   host:  B <id> 0 <base64 script>           start the script in the background
#   guest: @@JW <id> STARTED <pid = process group>@@
#          later: /tmp/jw/<id>.out holds its output, /tmp/jw/<id>.rc its exit status once it ends
#
# Once the setup is over, the guest prints "@@JW READY <0 or the number of failed steps>@@".
# Scripts run under /bin/sh (busybox ash) with stdin from /dev/null, in /tmp.

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
  rdma link show
  echo "siw-peer: setup done, $FAILED failed step(s)"
}

setup >/tmp/jw/setup.log 2>&1
cat /tmp/jw/setup.log >/dev/console

# --- the command channel ---------------------------------------------------------------------
exec </dev/ttyS1 >/dev/ttyS1 2>>/tmp/jw/serve.log
stty raw -echo
cd /tmp
echo "@@JW READY $FAILED@@"

while read -r verb id secs b64; do
  case $id in *[!0-9A-Za-z_-]*|'') echo "@@JW ? ERROR bad id@@"; continue ;; esac
  f=/tmp/jw/$id
  if ! echo "$b64" | base64 -d >"$f.sh"; then
    echo "@@JW $id ERROR bad base64@@"; continue
  fi
  case $verb in
    X)
      # setsid: the script leads its own process group, so a timeout kills all it started.
      setsid sh "$f.sh" </dev/null >"$f.out" 2>&1 &
      pid=$!
      (sleep "$secs"; : >"$f.timeout"; kill -9 -- "-$pid" 2>/dev/null || rm -f "$f.timeout") \
        </dev/null >/dev/null 2>&1 &
      watchdog=$!
      wait "$pid"
      rc=$?
      kill "$watchdog" 2>/dev/null
      wait "$watchdog" 2>/dev/null
      timedout=0
      [ -e "$f.timeout" ] && timedout=1
      echo "@@JW $id BEGIN@@"
      base64 "$f.out"
      echo "@@JW $id END $rc $timedout@@"
      rm -f "$f.sh" "$f.out" "$f.timeout"
      ;;
    B)
      # The subshell that records the exit status stays outside the script's process group, so
      # killing the group still leaves an exit status (137).
      rm -f "$f.pid"
      (
        setsid sh "$f.sh" </dev/null >"$f.out" 2>&1 &
        echo $! >"$f.pid"
        wait $!
        echo $? >"$f.rc.tmp"
        mv "$f.rc.tmp" "$f.rc"
      ) </dev/null >/dev/null 2>&1 &
      while [ ! -s "$f.pid" ]; do sleep 0.01; done
      echo "@@JW $id STARTED $(cat "$f.pid")@@"
      ;;
    *)
      echo "@@JW $id ERROR unknown verb $verb@@"
      ;;
  esac
done

# The host never closes the serial line, but PID 1 must not exit.
echo "siw-peer: command channel closed" >/dev/console
while :; do sleep 3600; done
