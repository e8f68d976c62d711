#!/usr/bin/env python3
"""Experiment: how the ttyS1 command loop of guest-init.sh before issue 23 lost requests.

Needs the image built from the commit before the virtio-serial channel (5718d6d), e.g.

    git worktree add /tmp/old 5718d6d
    JIWARP_SIW_CACHE=/tmp/old-image /tmp/old/conformance-tests/siw-peer/build-peer.sh
    python3 ttys1-loss.py /tmp/old-image watchdog 400      # with `sh -c 'while :; do :; done' &` beside it

Boots that image under TCG as SiwPeer did, speaks the old line protocol on ttyS1 and runs N
requests of about 1.6 KB, one at a time, in one of these modes:
  plain    X requests with a 3600 s limit: no watchdog sleep ends during the run
  sigchld  before each X, a B request 'sleep 0.0N' whose subshell ends while the X line arrives
  watchdog X requests with a 2 s limit: each leaves its watchdog's 'sleep 2' to PID 1, which ends
           2 s later (the suites' requests did the same with 5, 30 and 60 s limits)
A request is lost when its END line does not come within 20 s; every line the guest sent
meanwhile is printed. At the end: /proc/tty/driver/serial (the UART's counters: an overrun
would show as oe:), the loop's log and its processes.
Results (siw-peer/README.md, "The command channel"): watchdog mode, idle host: 0 of 400 lost;
with one CPU hog: 5 of 400, each answered "@@JW ? ERROR bad id@@"; plain mode with two hogs: 0.
"""
import base64, os, random, re, socket, subprocess, sys, tempfile, time

image, mode, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
work = tempfile.mkdtemp(prefix="uartloss-")
sock_path = os.path.join(work, "cmd.sock")
qemu = subprocess.Popen([
    "qemu-system-x86_64", "-nodefaults", "-nographic", "-no-reboot", "-m", "512M", "-smp", "1",
    "-accel", "tcg", "-cpu", "max", "-kernel", image + "/vmlinuz", "-initrd", image + "/initrd.img",
    "-append", "console=ttyS0 panic=-1", "-serial", "file:" + work + "/console.log",
    "-chardev", "socket,id=jwcmd,path=" + sock_path + ",server=on,wait=on", "-serial", "chardev:jwcmd",
    "-netdev", "user,id=n0", "-device", "virtio-net-pci,netdev=n0"],
    stdin=subprocess.DEVNULL, stdout=open(work + "/qemu.log", "w"), stderr=subprocess.STDOUT)
s = None
for _ in range(500):
    try:
        s = socket.socket(socket.AF_UNIX); s.connect(sock_path); break
    except OSError:
        s = None; time.sleep(0.02)
buf = b""


def lines(deadline):
    global buf
    while True:
        if b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            yield line.decode("latin-1").rstrip("\r")
            continue
        left = deadline - time.time()
        if left <= 0:
            return
        s.settimeout(left)
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            return
        if not chunk:
            return
        buf += chunk


def wait_for(pattern, seconds):
    seen = []
    for line in lines(time.time() + seconds):
        if re.fullmatch(pattern, line):
            return line, seen
        seen.append(line)
    return None, seen


start = time.time()
ready, _ = wait_for(r"@@JW READY \d+@@", 120)
print("boot", round(time.time() - start, 1), "s:", ready, flush=True)
n = 0
lost = []


def send(verb, script, secs=60):
    global n
    n += 1
    ident = ("x" if verb == "X" else "b") + str(n)
    s.sendall(("%s %s %d %s\n" % (verb, ident, secs, base64.b64encode(script.encode()).decode())).encode())
    return ident


pad = "# " + "p" * 1200  # the line is ~1.6 KB, about the size of a test's longer scripts
t0 = time.time()
for i in range(count):
    if mode == "sigchld":
        b = send("B", "sleep 0.0%d" % random.randint(1, 9))
        got, seen = wait_for(r"@@JW %s STARTED \d+@@" % b, 20)
        if got is None:
            lost.append((b, seen)); print("LOST", b, "guest sent meanwhile:", seen, flush=True)
    x = send("X", "echo ok %d\n%s\n" % (i, pad), 2 if mode == "watchdog" else 3600)
    got, seen = wait_for(r"@@JW %s END \d+ [01]@@" % x, 20)
    if got is None:
        lost.append((x, seen)); print("LOST", x, "guest sent meanwhile:", seen, flush=True)
elapsed = time.time() - t0
x = send("X", "cat /proc/tty/driver/serial; echo ---; cat /tmp/jw/serve.log; ps -o pid,ppid,stat,args | grep -v '\\[' | head -20")
out, _ = None, None
b64 = []
for line in lines(time.time() + 30):
    if line == "@@JW %s END 0 0@@" % x:
        break
    if not line.startswith("@@JW"):
        b64.append(line)
print(base64.b64decode("".join(b64)).decode(errors="replace"))
print("mode %s: %d rounds in %.1f s, %d request(s) lost" % (mode, count, elapsed, len(lost)), flush=True)
qemu.kill()
