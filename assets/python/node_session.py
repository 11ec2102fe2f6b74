# Run by the kernels of a NodeLTS pool at start (IPKernelApp.exec_files, after
# kernel_startup.py): starts the session's Node.js process
# (assets/node/session.js, written next to this file in the kernel's runtime
# folder) at once, so a ready session has it running, and defines the call the
# pool sends for each cell, _sessionpad_node('<base64 JSON {"code","timeoutMs"}>'):
# the JavaScript runs in the session's one context, what it writes to stdout and
# stderr becomes the cell's, an exception's stack is the cell's error, and the
# value of the last expression is the cell's value (util.inspect text, and JSON
# where it has one). Node.js runs in this sandbox as a child of the kernel, with
# the kernel's allow-listed environment. If it ends (process.exit, a crash, a
# timeout that had to kill it), the next cell starts a new context and says so.

_sessionpad_node_state = {}


def _sessionpad_node_folder():
    # The kernel's runtime folder, which holds session.js: IPython runs this
    # file with sys.argv = [this file]; later, the kernel's own arguments name
    # its connection file there (-f).
    import os
    import sys

    if "-f" in sys.argv:
        return os.path.dirname(sys.argv[sys.argv.index("-f") + 1])
    return os.path.dirname(os.path.abspath(sys.argv[0]))


_sessionpad_node_state["folder"] = _sessionpad_node_folder()
del _sessionpad_node_folder


def _sessionpad_node_start():
    import os
    import subprocess

    folder = _sessionpad_node_state["folder"]
    # SESSIONPAD_MNT_DATA (unsandboxed sessions only): the session's folder,
    # which session.js maps /mnt/data paths to, as kernel_startup.py does.
    # The egress proxy's variables where the pool set them (allow-list,
    # audit), and Node's switch to honour them in fetch and http (Node 24+).
    keep = ("PATH", "HOME", "LANG", "TZ", "SESSIONPAD_MNT_DATA",
            "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "NO_PROXY", "no_proxy")
    env = {k: v for k, v in os.environ.items() if k in keep}
    if "HTTP_PROXY" in env:
        env["NODE_USE_ENV_PROXY"] = "1"
    req_r, req_w = os.pipe()
    ans_r, ans_w = os.pipe()
    try:
        proc = subprocess.Popen(
            ["node", os.path.join(folder, "session.js"), str(req_r), str(ans_w)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(req_r, ans_w),
            env=env,
            start_new_session=True,
        )
    except OSError as e:
        for fd in (req_r, req_w, ans_r, ans_w):
            os.close(fd)
        _sessionpad_node_state.clear()
        _sessionpad_node_state.update(folder=folder, error=f"cannot start Node.js (node): {e.strerror}")
        return
    os.close(req_r)
    os.close(ans_w)
    for pipe in (proc.stdout, proc.stderr):
        os.set_blocking(pipe.fileno(), False)
    os.set_blocking(ans_r, False)
    _sessionpad_node_state.clear()
    _sessionpad_node_state.update(folder=folder, proc=proc, requests=req_w, answers=ans_r)


def _sessionpad_node_stop():
    import os
    import signal

    proc = _sessionpad_node_state.get("proc")
    if proc is not None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
        for fd in (_sessionpad_node_state["requests"], _sessionpad_node_state["answers"]):
            os.close(fd)
        proc.stdout.close()
        proc.stderr.close()
    folder = _sessionpad_node_state["folder"]
    _sessionpad_node_state.clear()
    _sessionpad_node_state["folder"] = folder


class _SessionpadJavaScriptError(Exception):
    # IPython shows what _render_traceback_ returns instead of a Python
    # traceback: the JavaScript stack, as the cell's stderr.
    def _render_traceback_(self):
        return [str(self.args[0])]


class _SessionpadJavaScriptValue:
    # The value of a cell: its util.inspect text for people (text/plain), its
    # JSON for the wire (the start-up script's value formatter, below).
    def __init__(self, text, json_value):
        self.text = text
        self.json_value = json_value

    def __repr__(self):
        return self.text


def _sessionpad_node_value_formatter():
    from IPython import get_ipython

    ip = get_ipython()
    formatter = ip and ip.display_formatter.formatters.get("application/vnd.sessionpad.value+json")
    if formatter is not None:
        formatter.for_type(_SessionpadJavaScriptValue, lambda v: v.json_value)


_sessionpad_node_value_formatter()
del _sessionpad_node_value_formatter


def _sessionpad_node(request):
    import base64
    import codecs
    import json
    import os
    import selectors
    import sys

    req = json.loads(base64.b64decode(request))
    proc = _sessionpad_node_state.get("proc")
    if proc is not None and proc.poll() is not None:
        _sessionpad_node_stop()
        sys.stderr.write("[the Node.js process had ended: this cell runs in a new context]\n")
    if "proc" not in _sessionpad_node_state:
        _sessionpad_node_start()
    if "error" in _sessionpad_node_state:
        raise _SessionpadJavaScriptError(_sessionpad_node_state["error"])
    proc = _sessionpad_node_state["proc"]
    answers = _sessionpad_node_state["answers"]
    line = (json.dumps({"code": req["code"], "timeoutMs": req["timeoutMs"]}) + "\n").encode()
    view = memoryview(line)
    while view:
        view = view[os.write(_sessionpad_node_state["requests"], view):]

    outs = {
        proc.stdout.fileno(): (sys.stdout, codecs.getincrementaldecoder("utf-8")("replace")),
        proc.stderr.fileno(): (sys.stderr, codecs.getincrementaldecoder("utf-8")("replace")),
    }

    import _sessionpad  # kernel_startup.py's private module

    def pump(fd):
        return _sessionpad.pump(fd, *outs[fd])

    sel = selectors.DefaultSelector()
    for fd in list(outs) + [answers]:
        sel.register(fd, selectors.EVENT_READ)
    pending = b""
    answer = None
    try:
        while answer is None:
            for key, _ in sel.select(0.5):
                if key.fd != answers:
                    if not pump(key.fd):
                        sel.unregister(key.fd)
                    continue
                try:
                    data = os.read(answers, 1 << 16)
                except BlockingIOError:
                    continue
                if not data:
                    answer = {"gone": True}
                    break
                pending += data
                if b"\n" in pending:
                    answer = json.loads(pending.split(b"\n", 1)[0])
                    break
            if answer is None and proc.poll() is not None:
                answer = {"gone": True}
        for fd in outs:
            pump(fd)
    except KeyboardInterrupt:
        # A timeout the context's own limit did not end (a promise that never
        # settles), or an interrupt: the process goes, and its context with it.
        _sessionpad_node_stop()
        raise
    finally:
        sel.close()
    sys.stdout.flush()
    sys.stderr.flush()
    if answer.get("gone"):
        _sessionpad_node_stop()
        raise _SessionpadJavaScriptError(
            "the Node.js process ended (process.exit, or it crashed); the next cell starts a new context"
        )
    if "error" in answer:
        raise _SessionpadJavaScriptError(answer["error"])
    if "text" in answer:
        return _SessionpadJavaScriptValue(answer["text"], answer.get("json"))
    return None


_sessionpad_node_start()
