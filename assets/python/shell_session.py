# Run by the kernels of a Shell pool at start (IPKernelApp.exec_files, after
# kernel_startup.py). The pool sends each shell command as one call of
# _sessionpad_shell with the request as base64 JSON, so nothing of the command
# is ever read as Python:
#
#     {"line": "echo hi"}            -> /bin/bash -c 'echo hi'   (shellCommand)
#     {"argv": ["wc", "-l"]}         -> wc -l, no shell           (execCommandAndArgs)
#     {..., "stdin": "a\nb\n"}       -> given on standard input (else /dev/null)
#
# Each command is a new process in this sandboxed session, as the service runs
# each command of a Shell session: files (/mnt/data, /tmp, $HOME=/tmp) and
# background processes persist between commands, the working directory
# (/mnt/data) and shell variables do not. What the command writes goes to the
# kernel's stdout and stderr as it comes (the pool caps what it keeps); the
# value of the call is the exit code (128+N for a command killed by signal N,
# 127 for a program that is not found, 126 for one that cannot be run).
# Interrupted (a timeout, or Ctrl+C in the notebook), the command's process
# group is killed and the exit code is 130.


def _sessionpad_shell(request):
    import base64
    import codecs
    import json
    import os
    import selectors
    import signal
    import subprocess
    import sys

    req = json.loads(base64.b64decode(request))
    argv = req.get("argv") or ["/bin/bash", "-c", req.get("line", "")]
    stdin = req.get("stdin")
    # The command's environment: the kernel's allow-list without Python's and
    # IPython's own settings (PYTHONUNBUFFERED, TERM, PAGER, CLICOLOR...), with
    # the egress proxy's variables where the pool set them (allow-list, audit).
    keep = ("PATH", "HOME", "LANG", "TZ", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE",
            "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "NO_PROXY", "no_proxy")
    env = {k: v for k, v in os.environ.items() if k in keep}
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
    except FileNotFoundError:
        sys.stderr.write(f"{argv[0]}: command not found\n")
        return 127
    except OSError as e:
        sys.stderr.write(f"{argv[0]}: {e.strerror}\n")
        return 126

    sel = selectors.DefaultSelector()
    outs = {}
    for pipe, stream in ((proc.stdout, sys.stdout), (proc.stderr, sys.stderr)):
        os.set_blocking(pipe.fileno(), False)
        outs[pipe.fileno()] = (stream, codecs.getincrementaldecoder("utf-8")("replace"))
        sel.register(pipe.fileno(), selectors.EVENT_READ)
    pending = memoryview((stdin or "").encode())
    stdin_fd = None
    if proc.stdin is not None:
        if pending:
            stdin_fd = proc.stdin.fileno()
            os.set_blocking(stdin_fd, False)
            sel.register(stdin_fd, selectors.EVENT_WRITE)
        else:
            proc.stdin.close()

    import _sessionpad  # kernel_startup.py's private module

    def pump(fd):
        return _sessionpad.pump(fd, *outs[fd])

    try:
        while outs:
            # A short wait once the command has exited: a background process it
            # left holding the pipes must not keep the command from ending.
            exited = proc.poll() is not None
            for key, _ in sel.select(0.05 if exited else 0.5):
                fd = key.fd
                if fd == stdin_fd:
                    try:
                        n = os.write(fd, pending[: 1 << 16])
                    except BlockingIOError:
                        continue
                    except BrokenPipeError:
                        n = len(pending)
                    pending = pending[n:]
                    if not pending:
                        sel.unregister(fd)
                        proc.stdin.close()
                        stdin_fd = None
                elif not pump(fd):
                    sel.unregister(fd)
                    del outs[fd]
            if exited:
                for fd in list(outs):
                    pump(fd)
                break
        code = proc.wait()
    except KeyboardInterrupt:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
        return 130
    finally:
        sel.close()
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass
    sys.stdout.flush()
    sys.stderr.flush()
    return 128 - code if code < 0 else code
