# Run by every local-pool kernel at start (IPKernelApp.exec_files). It makes the
# value of a cell's last expression available with its JSON type, as the service's
# `result` / `executionResult` carries it (aca-api.md §3.1, §4.2): 6*7 -> 42,
# 'a' -> "a", 2.5 -> 2.5, float('nan') -> "nan", [1, 2] -> [1, 2].


def _sessionpad_install_value_formatter():
    import json
    import math
    import numbers

    from IPython import get_ipython
    from IPython.core.formatters import BaseFormatter
    from traitlets import ObjectName, Unicode

    mime = "application/vnd.sessionpad.value+json"

    class ValueFormatter(BaseFormatter):
        format_type = Unicode(mime)
        print_method = ObjectName("_repr_sessionpad_value_")
        _return_type = (dict, list, int, float, str, bool, type(None))

    def to_json(value):
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, numbers.Integral):
            return int(value)
        if isinstance(value, numbers.Real):
            v = float(value)
            if math.isnan(v):
                return "nan"
            if math.isinf(v):
                return "inf" if v > 0 else "-inf"
            return v
        if isinstance(value, (list, tuple, dict)):
            try:
                return json.loads(json.dumps(value, allow_nan=False))
            except (TypeError, ValueError):
                return None
        return None

    ip = get_ipython()
    if ip is None:
        return
    formatter = ValueFormatter(parent=ip.display_formatter)
    formatter.for_type(object, to_json)
    ip.display_formatter.formatters[mime] = formatter


_sessionpad_install_value_formatter()
del _sessionpad_install_value_formatter


def _sessionpad_fast_completion():
    # Tab completion (/.sessionpad/complete): IPython's own completer looks at
    # the live objects (df.gr finds DataFrame.groupby) and answers in
    # milliseconds; jedi's static analysis of pandas takes seconds.
    from IPython import get_ipython

    ip = get_ipython()
    if ip is not None and getattr(ip, "Completer", None) is not None:
        ip.Completer.use_jedi = False


_sessionpad_fast_completion()
del _sessionpad_fast_completion


def _sessionpad_map_mnt_data():
    # Without a sandbox there is no /mnt/data mount: map paths below it to this
    # session's folder so code written for the service still works.
    import builtins
    import io
    import os

    root = os.environ.get("SESSIONPAD_MNT_DATA")
    if not root:
        return
    prefix = "/mnt/data"

    def fix(p):
        s = os.fspath(p) if isinstance(p, os.PathLike) else p
        if isinstance(s, str) and (s == prefix or s.startswith(prefix + "/")):
            return root + s[len(prefix):]
        return p

    def one(f):
        def wrapper(*args, **kwargs):
            if args:
                args = (fix(args[0]),) + args[1:]
            elif "path" in kwargs:
                kwargs["path"] = fix(kwargs["path"])
            elif "file" in kwargs:
                kwargs["file"] = fix(kwargs["file"])
            return f(*args, **kwargs)

        wrapper.__name__ = getattr(f, "__name__", "wrapper")
        wrapper.__doc__ = getattr(f, "__doc__", None)
        return wrapper

    def two(f):
        def wrapper(src, dst, *args, **kwargs):
            return f(fix(src), fix(dst), *args, **kwargs)

        wrapper.__name__ = getattr(f, "__name__", "wrapper")
        return wrapper

    builtins.open = io.open = one(io.open)
    # IPython wraps open() for cells with a copy of io.open taken at import.
    try:
        import IPython.core.interactiveshell as shell

        shell.io_open = builtins.open
    except (ImportError, AttributeError):
        pass
    for name in ("open", "stat", "lstat", "listdir", "scandir", "mkdir", "makedirs",
                 "remove", "unlink", "rmdir", "chdir", "access", "utime", "chmod"):
        if hasattr(os, name):
            setattr(os, name, one(getattr(os, name)))
    for name in ("rename", "replace"):
        setattr(os, name, two(getattr(os, name)))


_sessionpad_map_mnt_data()
del _sessionpad_map_mnt_data


def _sessionpad_bound_stream_messages():
    # ipykernel sends what a cell printed every 0.2 s as one IOPub `stream`
    # message, however large: 200 MB printed in a loop arrive as one 200 MB
    # message, which the pool has to hold whole (several times over while it is
    # decoded) before it can drop what is past its output cap. Send at most about
    # 1 Mi characters per message instead: a write that would fill the buffer past
    # that flushes it first (flush waits for the IO thread, so a fast printer is
    # paced by the sending), and one long write goes in pieces. What the pool
    # keeps is capped without this; what it holds while reading a message is not:
    # code that sends one huge message itself still costs the pool that message.
    try:
        from ipykernel.iostream import OutStream
    except ImportError:
        return
    chunk = 1 << 20
    write = OutStream.write

    def pending(stream):
        try:
            with stream._buffer_lock:
                return sum(b.tell() for b in stream._buffers.values())
        except Exception:
            return 0

    def bounded_write(self, string):
        if not isinstance(string, str):
            return write(self, string)
        # Fast path: a running count of what was written since the count was
        # last made exact; it only overestimates (timed flushes empty the buffer
        # without lowering it), so when it passes the chunk, count exactly.
        guess = getattr(self, "_sessionpad_pending", 0) + len(string)
        if guess <= chunk:
            self._sessionpad_pending = guess
            return write(self, string)
        for i in range(0, len(string), chunk):
            piece = string[i:i + chunk]
            if pending(self) + len(piece) > chunk:
                self.flush()
            write(self, piece)
        self._sessionpad_pending = pending(self)
        return len(string)

    bounded_write.__doc__ = write.__doc__
    OutStream.write = bounded_write


_sessionpad_bound_stream_messages()
del _sessionpad_bound_stream_messages


def _sessionpad_private_module():
    # The runners' shared helpers live in a module of their own
    # (`import _sessionpad`), never in the session's namespace, where a
    # person's `globals()`, `dir()` or `%whos` would see them.
    import sys
    import types

    module = types.ModuleType("_sessionpad")

    def pump(fd, stream, decoder):
        # Copies what the non-blocking pipe `fd` holds to `stream` (the cell's
        # stdout or stderr), decoding UTF-8 with `decoder` as it goes; False
        # once the pipe is at its end. Used by the shell and Node.js runners
        # (shell_session.py, node_session.py).
        import os

        while True:
            try:
                data = os.read(fd, 1 << 16)
            except BlockingIOError:
                return True
            if not data:
                stream.write(decoder.decode(b"", True))
                return False
            stream.write(decoder.decode(data))

    module.pump = pump
    sys.modules["_sessionpad"] = module


_sessionpad_private_module()
del _sessionpad_private_module


def _sessionpad_ordered_streams():
    # stdout and stderr in the order the code wrote them (issue 27): ipykernel
    # buffers each stream on its own and sends it every 0.2 s, so print(1);
    # warnings.warn(2); print(3) arrives as "1 3" then "2". Switching from one
    # stream to the other first sends what the other holds.
    import sys

    out, err = sys.stdout, sys.stderr
    if not all(hasattr(s, "write") and hasattr(s, "flush") for s in (out, err)):
        return
    last = [None]

    def ordered(stream, other):
        write = stream.write

        def ordered_write(text):
            if last[0] is other:
                try:
                    other.flush()
                except Exception:
                    pass
            last[0] = stream
            return write(text)

        return ordered_write

    try:
        out.write = ordered(out, err)
        err.write = ordered(err, out)
    except (AttributeError, TypeError):
        pass


_sessionpad_ordered_streams()
del _sessionpad_ordered_streams
