# The battery of `sessionpad probe` (docs/cli.md, "probe"): run as session code
# in a fresh session, it looks at what the session can see and do, and prints
# one JSON line per check:
#
#   {"check": NAME, "tried": WHAT IT DID, "result": "held"|"open"|"not tried",
#    "evidence": WHAT IT SAW}
#
# "held" means the sandbox stopped it (or the limit is set), "open" that the
# session could do or see it, "not tried" that the check could not run or
# chose not to. The Rust side (src/cli/probe.rs) prepends one line,
# `_SP_PROBE_TIMEOUT = N` (the execution timeout in seconds), parses every
# line that is a JSON object, and renders the table or `--json`.
#
# It never harms the machine it runs on:
# - the system calls that escape sandboxes (unshare, mount, ptrace, bpf,
#   io_uring_setup) run in a forked child that exits at once, killed after
#   5 s; a tmpfs is mounted only inside a new mount namespace, never in the
#   session's; ptrace attaches only to the child's own child, never a parent;
# - nothing is sent off the machine: reachability is judged by the route
#   table and by a UDP connect(), which looks up a route and sends no
#   packet; no name is resolved; 169.254.169.254 and IDENTITY_ENDPOINT are
#   never contacted; TCP connections go to loopback addresses only;
# - files are only read (never printed: /etc/shadow is reported by its size),
#   and each write test creates one empty file with a random name and removes
#   it at once;
# - no fork bomb, no big allocation: limits are read, not reached.
import ctypes
import errno
import json
import os
import platform
import resource
import signal
import socket
import time
import uuid

try:
    _TIMEOUT = _SP_PROBE_TIMEOUT  # noqa: F821 (set by sessionpad)
except NameError:
    _TIMEOUT = None

_LIBC = ctypes.CDLL(None, use_errno=True)
_ARCH = platform.machine()
# System call numbers without a libc wrapper, by architecture.
_SYS_BPF = {"x86_64": 321, "aarch64": 280}.get(_ARCH)
_SYS_IO_URING_SETUP = 425  # the same on every architecture (generic table)
CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18
PTRACE_ATTACH, PTRACE_DETACH = 16, 17


def _emit(check, tried, result, evidence):
    print(json.dumps({"check": check, "tried": tried, "result": result,
                      "evidence": str(evidence)[:2000]}), flush=True)


def _err(e):
    return errno.errorcode.get(e, str(e)) + " (" + os.strerror(e) + ")"


def _in_child(fn, seconds=5):
    """Runs fn() in a forked child; returns its short string answer, or what
    ended the child. The child exits at once after fn; it is killed after
    `seconds`."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            try:
                answer = fn()
            except BaseException as e:  # noqa: BLE001 (report anything)
                answer = "error: " + repr(e)
            os.write(w, str(answer).encode()[:1000])
        finally:
            os._exit(0)
    os.close(w)
    deadline = time.monotonic() + seconds
    status = None
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.01)
    else:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(r)
        return "child killed after %d s" % seconds
    answer = os.read(r, 1000).decode(errors="replace")
    os.close(r)
    if os.WIFSIGNALED(status):
        return "child killed by signal %d (the sandbox's answer)" % os.WTERMSIG(status)
    return answer


def _call(name, *args):
    """Calls libc `name`; ("ok", value) or ("errno", text)."""
    ctypes.set_errno(0)
    value = getattr(_LIBC, name)(*args)
    if value == -1:
        return ("errno", _err(ctypes.get_errno()))
    return ("ok", value)


# ---------------------------------------------------------------- files

def check_files():
    tried = "opened /etc/shadow for reading (its text is never shown)"
    try:
        with open("/etc/shadow", "rb") as f:
            n = len(f.read(1 << 16))
        _emit("host /etc/shadow", tried, "open", "readable: %d bytes" % n)
    except OSError as e:
        _emit("host /etc/shadow", tried, "held", _err(e.errno) if e.errno else e)

    tried = "listed /home"
    try:
        names = sorted(os.listdir("/home"))
        _emit("host /home", tried, "open" if names else "held",
              "%d entries: %s" % (len(names), ", ".join(names[:8])))
    except OSError as e:
        _emit("host /home", tried, "held", _err(e.errno))

    _host_processes()

    socks = ["/var/run/docker.sock", "/run/docker.sock", "/run/containerd/containerd.sock",
             "/run/podman/podman.sock", "/run/crio/crio.sock", "/var/run/crio/crio.sock"]
    found = [p for p in socks if os.path.exists(p)]
    _emit("container sockets",
          "looked for the docker, containerd, podman and CRI-O sockets (never connected)",
          "open" if found else "held",
          ("present: " + ", ".join(found)) if found else "none of %d present" % len(socks))

    # A sessionpad local pool keeps each session's runtime folder (connection
    # file, sockets) in /tmp/sp-<pool>/<n>; a sandboxed session sees its own only.
    import glob
    pools = glob.glob("/tmp/sp-*")
    folders = []
    for d in pools:
        try:
            folders += [os.path.join(d, n) for n in os.listdir(d)]
        except OSError:
            pass
    try:
        mnt = [os.path.join("/mnt", n) for n in os.listdir("/mnt") if n != "data"]
    except OSError:
        mnt = []
    seen = (folders[1:] if len(folders) == 1 else folders) + mnt
    _emit("other sessions' files",
          "listed /tmp/sp-*/ (a local pool's session folders; one is this session's) and /mnt beside data",
          "open" if seen or len(pools) > 1 else "held",
          "%d pool folders, %d session folders; /mnt: %s" % (
              len(pools), len(folders), ", ".join(mnt[:4]) or "data only"))


def _tree():
    """{pid: ppid} of every process this session can see."""
    parents = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name) as f:
                stat = f.read()
            parents[int(name)] = int(stat.rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            pass
    return parents


def _host_processes():
    tried = "read /proc/1/cmdline and counted processes outside this session's own tree"
    try:
        with open("/proc/1/cmdline", "rb") as f:
            pid1 = f.read(300).replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError as e:
        pid1 = "unreadable: " + _err(e.errno)
    parents = _tree()
    # The session's tree: this process's ancestors and everything under them
    # up to the first ancestor that is the root of the namespace (pid 1) or
    # our own session's top (kernel launcher).
    ancestors, p = [], os.getpid()
    while p in parents and p not in ancestors:
        ancestors.append(p)
        p = parents[p]
    top = ancestors[-1] if ancestors else os.getpid()
    # Below pid 1 every process is someone's: ours are those under the
    # ancestor that is a child of pid 1 (or pid 1 itself when the namespace
    # is the session's).
    under = [a for a in ancestors if parents.get(a) in (0, 1)]
    root = under[0] if under else top
    ours = {root}
    changed = True
    while changed:
        changed = False
        for pid, ppid in parents.items():
            if ppid in ours and pid not in ours:
                ours.add(pid)
                changed = True
    foreign = sorted(p for p in parents if p not in ours and p != 1)
    _emit("host processes", tried, "open" if foreign else "held",
          "pid 1: %s; %d processes, %d outside the session's tree" %
          (pid1[:120], len(parents), len(foreign)))


# ---------------------------------------------------------------- identity

def _status():
    out = {}
    with open("/proc/self/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            out[k] = v.strip()
    return out


CAP_NAMES = {0: "CHOWN", 1: "DAC_OVERRIDE", 2: "DAC_READ_SEARCH", 5: "KILL", 6: "SETGID",
             7: "SETUID", 12: "NET_ADMIN", 13: "NET_RAW", 16: "SYS_MODULE", 17: "SYS_RAWIO",
             18: "SYS_CHROOT", 19: "SYS_PTRACE", 21: "SYS_ADMIN", 24: "SYS_RESOURCE",
             25: "SYS_TIME", 27: "MKNOD", 39: "BPF"}


def check_identity():
    st = _status()
    try:
        with open("/proc/self/uid_map") as f:
            uid_map = " ".join(f.read().split())
    except OSError:
        uid_map = "unreadable"
    uid, gid = os.getuid(), os.getgid()
    outside_root = uid_map.startswith("0 0 ")
    _emit("uid and gid", "read the ids, groups and /proc/self/uid_map",
          "open" if uid == 0 and outside_root else "held",
          "uid %d gid %d groups %s; uid_map %s" % (uid, gid, os.getgroups()[:8], uid_map[:80]))
    eff = int(st.get("CapEff", "0"), 16)
    names = [CAP_NAMES.get(b, str(b)) for b in range(64) if eff >> b & 1]
    _emit("capabilities", "read CapEff from /proc/self/status",
          "open" if eff else "held",
          "CapEff %s%s" % (st.get("CapEff", "?"), (": " + " ".join(names[:12])) if names else " (none)"))
    nnp = st.get("NoNewPrivs", "?")
    _emit("no_new_privs", "read NoNewPrivs from /proc/self/status",
          "held" if nnp == "1" else "open", "NoNewPrivs %s" % nnp)
    sec = st.get("Seccomp", "?")
    _emit("seccomp", "read Seccomp from /proc/self/status",
          "held" if sec == "2" else "open",
          "Seccomp %s (%s)" % (sec, {"0": "off", "1": "strict", "2": "filter"}.get(sec, "unknown")))


# ---------------------------------------------------------------- system calls

def _unshare(flags):
    def child():
        kind, v = _call("unshare", ctypes.c_int(flags))
        return "succeeded" if kind == "ok" else "failed: " + v
    return _in_child(child)


def _mount_tmpfs():
    import tempfile
    where = tempfile.mkdtemp(prefix="sp-probe-")

    def child():
        flags = CLONE_NEWNS if os.getuid() == 0 else CLONE_NEWUSER | CLONE_NEWNS
        kind, v = _call("unshare", ctypes.c_int(flags))
        if kind != "ok":
            kind, v = _call("unshare", ctypes.c_int(CLONE_NEWUSER | CLONE_NEWNS))
        if kind != "ok":
            return "no new mount namespace (%s): mount not tried" % v
        kind, v = _call("mount", None, b"/", None, ctypes.c_ulong(MS_REC | MS_PRIVATE), None)
        if kind != "ok":
            return "could not make mounts private (%s): mount not tried" % v
        kind, v = _call("mount", b"none", where.encode(), b"tmpfs", ctypes.c_ulong(0), b"size=1m")
        if kind != "ok":
            return "failed: " + v
        _call("umount2", where.encode(), ctypes.c_int(2))
        return "succeeded (in the new namespace only)"
    try:
        return _in_child(child)
    finally:
        os.rmdir(where)


def _ptrace():
    def child():
        kid = os.fork()
        if kid == 0:
            time.sleep(3)
            os._exit(0)
        kind, v = _call("ptrace", ctypes.c_long(PTRACE_ATTACH), ctypes.c_long(kid), None, None)
        if kind == "ok":
            os.waitpid(kid, 0)
            _call("ptrace", ctypes.c_long(PTRACE_DETACH), ctypes.c_long(kid), None, None)
        os.kill(kid, signal.SIGKILL)
        os.waitpid(kid, 0)
        return "attach to own child " + ("succeeded" if kind == "ok" else "failed: " + v)
    return _in_child(child)


def _bpf():
    if _SYS_BPF is None:
        return None

    def child():
        # union bpf_attr for BPF_MAP_CREATE: map_type ARRAY (2), key_size 4,
        # value_size 4, max_entries 1; the rest zero.
        attr = (ctypes.c_uint32 * 32)(2, 4, 4, 1)
        _LIBC.syscall.restype = ctypes.c_long
        kind, v = _call("syscall", ctypes.c_long(_SYS_BPF), ctypes.c_long(0),
                        ctypes.byref(attr), ctypes.c_uint(ctypes.sizeof(attr)))
        if kind == "ok":
            os.close(v)
            return "succeeded (a 1-entry array map, closed)"
        return "failed: " + v
    return _in_child(child)


def _io_uring():
    def child():
        params = (ctypes.c_uint8 * 120)()
        _LIBC.syscall.restype = ctypes.c_long
        kind, v = _call("syscall", ctypes.c_long(_SYS_IO_URING_SETUP), ctypes.c_uint(1),
                        ctypes.byref(params))
        if kind == "ok":
            os.close(v)
            return "succeeded (a 1-entry ring, closed)"
        return "failed: " + v
    return _in_child(child)


def _judge(answer):
    return "open" if answer.startswith("succeeded") else "held"


def check_syscalls():
    a = _unshare(CLONE_NEWUSER)
    _emit("unshare user namespace", "unshare(CLONE_NEWUSER) in a forked child", _judge(a), a)
    a = _unshare(CLONE_NEWNS)
    _emit("unshare mount namespace", "unshare(CLONE_NEWNS) in a forked child", _judge(a), a)
    a = _mount_tmpfs()
    _emit("mount tmpfs",
          "in a forked child: a new mount namespace (with a user namespace unless root), "
          "then mount a 1 MiB tmpfs on a fresh /tmp folder, unmounted after",
          _judge(a) if "not tried" not in a else "held", a)
    a = _ptrace()
    attach_ok = "attach to own child succeeded" in a
    _emit("ptrace", "in a forked child: PTRACE_ATTACH to its own child (never a parent), then detach",
          "open" if attach_ok else "held", a)
    a = _bpf()
    if a is None:
        _emit("bpf", "bpf(BPF_MAP_CREATE)", "not tried", "no bpf number known for " + _ARCH)
    else:
        _emit("bpf", "bpf(BPF_MAP_CREATE) of a 1-entry array map in a forked child", _judge(a), a)
    a = _io_uring()
    _emit("io_uring", "io_uring_setup(1) in a forked child", _judge(a), a)


# ---------------------------------------------------------------- network

def _interfaces():
    with open("/proc/net/dev") as f:
        return [line.split(":")[0].strip() for line in f.readlines()[2:]]


def _udp_route(host, port=53):
    """The local address a route to host would use (connect() on UDP sends
    nothing), or the error."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    s = socket.socket(family, socket.SOCK_DGRAM)
    try:
        s.connect((host, port))
        return True, "route found, source %s" % s.getsockname()[0]
    except OSError as e:
        return False, "no route: " + _err(e.errno)
    finally:
        s.close()


def check_network():
    names = _interfaces()
    _emit("network interfaces", "listed /proc/net/dev",
          "held" if names == ["lo"] or not names else "open", " ".join(names[:12]))
    routes = []
    try:
        with open("/proc/net/route") as f:
            for line in f.readlines()[1:]:
                p = line.split()
                if len(p) > 2 and p[0] != "lo":
                    routes.append("%s %s" % (p[0], "default" if p[1] == "00000000" else p[1]))
    except OSError:
        pass
    try:
        with open("/proc/net/if_inet6") as f:
            v6 = [line.split()[-1] for line in f if line.split()[-1] != "lo"]
    except OSError:
        v6 = []
    _emit("routes", "read /proc/net/route and /proc/net/if_inet6 (interfaces other than lo)",
          "open" if routes or v6 else "held",
          "%d IPv4 routes (%s); IPv6 on %s" % (len(routes), ", ".join(routes[:4]),
                                                ", ".join(sorted(set(v6))[:4]) or "none"))
    for check, host in (("route off the machine (IPv4)", "192.0.2.1"),
                        ("route off the machine (IPv6)", "2001:db8::1")):
        ok, ev = _udp_route(host)
        _emit(check, "UDP connect() to %s (a documentation address; no packet is sent)" % host,
              "open" if ok else "held", ev)
    ok, ev = _udp_route("169.254.169.254", 80)
    _emit("cloud metadata endpoint", "UDP connect() to 169.254.169.254:80 (route only; never contacted)",
          "open" if ok else "held", ev)
    _dns()
    ep = os.environ.get("IDENTITY_ENDPOINT")
    _emit("managed identity endpoint",
          "read IDENTITY_ENDPOINT and whether IDENTITY_HEADER is set (never sent to; the header's value never shown)",
          "open" if ep else "held",
          ("IDENTITY_ENDPOINT=%s; IDENTITY_HEADER %s" % (ep, "set" if os.environ.get("IDENTITY_HEADER") else "not set"))
          if ep else "IDENTITY_ENDPOINT not set")
    keys = [k for k in os.environ if k.lower() in ("http_proxy", "https_proxy", "all_proxy", "no_proxy")]
    shown = []
    for k in sorted(keys):
        v = os.environ[k]
        if "@" in v:  # credentials in a proxy URL are not shown
            v = v.split("://", 1)[0] + "://…@" + v.rsplit("@", 1)[1]
        shown.append("%s=%s" % (k, v))
    _emit("proxy variables", "read HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY",
          "open" if any(not k.lower().startswith("no_") for k in keys) else "held",
          "; ".join(shown) or "none set")
    _loopback()


def _dns():
    tried = "read /etc/resolv.conf; a loopback name server is tried by TCP connect to port 53, another by route only (no name is resolved)"
    try:
        with open("/etc/resolv.conf") as f:
            servers = [l.split()[1] for l in f if l.startswith("nameserver") and len(l.split()) > 1]
    except OSError as e:
        _emit("DNS resolver", tried, "held", "no /etc/resolv.conf: " + _err(e.errno))
        return
    if not servers:
        _emit("DNS resolver", tried, "held", "no name server configured")
        return
    seen, reach = [], False
    for ns in servers[:3]:
        if ns.startswith("127.") or ns == "::1":
            s = socket.socket(socket.AF_INET6 if ":" in ns else socket.AF_INET)
            s.settimeout(1)
            try:
                s.connect((ns, 53))
                seen.append("%s: something listens" % ns)
                reach = True
            except OSError as e:
                seen.append("%s: %s" % (ns, _err(e.errno) if e.errno else "timed out"))
            finally:
                s.close()
        else:
            ok, ev = _udp_route(ns)
            reach = reach or ok
            seen.append("%s: %s" % (ns, ev))
    _emit("DNS resolver", tried, "open" if reach else "held", "; ".join(seen))


def _socket_inodes(pids):
    inodes = set()
    for pid in pids:
        try:
            for fd in os.listdir("/proc/%d/fd" % pid):
                try:
                    t = os.readlink("/proc/%d/fd/%s" % (pid, fd))
                except OSError:
                    continue
                if t.startswith("socket:["):
                    inodes.add(t[8:-1])
        except OSError:
            pass
    return inodes


def _loopback():
    tried = "read /proc/net/tcp for listeners on 127.0.0.1 not the session's, then TCP connect (loopback only) to up to 5"
    parents = _tree()
    ours = _socket_inodes(parents.keys())
    listeners = []
    try:
        with open("/proc/net/tcp") as f:
            for line in f.readlines()[1:]:
                p = line.split()
                addr, port = p[1].split(":")
                if p[3] == "0A" and addr in ("0100007F", "00000000") and p[9] not in ours:
                    listeners.append(int(port, 16))
    except OSError as e:
        _emit("loopback services", tried, "not tried", _err(e.errno))
        return
    listeners = sorted(set(listeners))
    answered = []
    for port in listeners[:5]:
        s = socket.socket()
        s.settimeout(1)
        try:
            s.connect(("127.0.0.1", port))
            answered.append(port)
        except OSError:
            pass
        finally:
            s.close()
    _emit("loopback services", tried, "open" if answered else "held",
          "%d listeners not the session's%s" % (len(listeners),
                                                 ("; accepted on " + ", ".join(map(str, answered))) if answered else ""))


# ---------------------------------------------------------------- writable paths

def check_writes():
    home = os.path.expanduser("~")
    paths = ("/", "/etc", "/usr", "/tmp", "/mnt/data", home)
    for i, path in enumerate(paths):
        name = os.path.join(path, ".sp-probe-" + uuid.uuid4().hex[:12])
        tried = "created and removed an empty file in %s" % path
        last = i == len(paths) - 1
        check = "writable home" if last else "writable " + path
        try:
            fd = os.open(name, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        except OSError as e:
            _emit(check, tried, "held", _err(e.errno))
            continue
        os.close(fd)
        os.unlink(name)
        expected = path in ("/tmp", "/mnt/data") or path == home
        _emit(check, tried, "open", "writable" + (" (expected of a session)" if expected else "")
              + (" (%s)" % home if last else ""))


# ---------------------------------------------------------------- limits

def _cgroup_file(name):
    try:
        with open("/proc/self/cgroup") as f:
            lines = f.read().split("\n")
    except OSError:
        return None
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) == 3 and parts[0] == "0":
            # The session's cgroup, else the root of a cgroup namespace.
            for p in ("/sys/fs/cgroup" + parts[2] + "/" + name, "/sys/fs/cgroup/" + name):
                try:
                    with open(p) as f:
                        return f.read().strip()
                except OSError:
                    pass
    return None


def _rlimit(which):
    soft, _ = resource.getrlimit(which)
    return "unlimited" if soft == resource.RLIM_INFINITY else str(soft)


# An RLIMIT_NPROC above this is a machine's default (it counts every process
# of the user), not a limit set for the session.
_NPROC_SET = 4096


def check_limits():
    mem = _cgroup_file("memory.max")
    aslim = _rlimit(resource.RLIMIT_AS)
    if (mem and mem != "max") or aslim != "unlimited":
        mem_result = "held"
    elif mem is None:
        # A pool may still cap the session from outside, where the session
        # cannot look (the local pool's cgroup): no judgement either way.
        mem_result = "not tried"
    else:
        mem_result = "open"
    _emit("memory limit", "read cgroup memory.max and RLIMIT_AS (nothing allocated)",
          mem_result,
          "memory.max %s; RLIMIT_AS %s" % (
              mem or "not visible from the session (a limit set outside it cannot be seen)",
              aslim))
    pids = _cgroup_file("pids.max")
    nproc = _rlimit(resource.RLIMIT_NPROC)
    set_nproc = nproc != "unlimited" and int(nproc) <= _NPROC_SET
    if (pids and pids != "max") or set_nproc:
        proc_result = "held"
    elif pids is None:
        # As for memory: a cgroup outside the session may count its processes.
        proc_result = "not tried"
    else:
        proc_result = "open"
    _emit("process limit", "read cgroup pids.max and RLIMIT_NPROC (nothing forked for it)",
          proc_result,
          "pids.max %s; RLIMIT_NPROC %s%s" % (
              pids or "not visible from the session", nproc,
              "" if nproc == "unlimited" or set_nproc
              else " (above %d: the machine's default, not a session's limit)" % _NPROC_SET))
    parts, separate = [], True
    root = os.stat("/").st_dev
    for path in ("/mnt/data", "/tmp"):
        shown = path
        try:
            try:
                v = os.statvfs(path)
            except FileNotFoundError:
                if path != "/mnt/data":
                    raise
                # An unsandboxed session has no /mnt/data: its working folder
                # (the session's folder on the host) stands for it.
                path = os.getcwd()
                shown = "/mnt/data (not there: its working folder)"
                v = os.statvfs(path)
            own = os.stat(path).st_dev != root
            separate = separate and own
            parts.append("%s %d MiB (%d MiB free%s)" % (shown, v.f_blocks * v.f_frsize >> 20,
                                                       v.f_bavail * v.f_frsize >> 20,
                                                       "" if own else ", the root's filesystem"))
        except OSError as e:
            separate = False
            parts.append("%s: %s" % (shown, _err(e.errno)))
    parts.append("RLIMIT_FSIZE " + _rlimit(resource.RLIMIT_FSIZE))
    _emit("disk limit", "statvfs of /mnt/data and /tmp, RLIMIT_FSIZE (nothing written for it)",
          "held" if separate else "open", "; ".join(parts))
    _emit("time limit", "the execution timeout this probe was sent (not waited out)", "not tried",
          ("timeoutInSeconds %s" % _TIMEOUT) if _TIMEOUT else "not given")


def not_tried():
    _emit("not tried", "what the battery never does", "not tried",
          "sending packets off the machine, resolving names, contacting 169.254.169.254 or "
          "IDENTITY_ENDPOINT, connecting to container sockets, reading secrets' text, "
          "mounting in the session's own namespace, tracing any process but its own child, "
          "fork bombs, big allocations, filling disks, waiting out the timeout")


for _battery in (check_files, check_identity, check_syscalls, check_network, check_writes,
                 check_limits, not_tried):
    try:
        _battery()
    except Exception as _e:  # noqa: BLE001 (a failed part is reported, the rest runs)
        _emit(_battery.__name__, "this part of the battery", "not tried", "error: %r" % (_e,))
