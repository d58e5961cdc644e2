"""A confirmation script's interpreter with its library already imported: the CTest run of the
scripts about one library (tests/peers/confirm.cmake) pays that library's import once, not once
a script (TensorFlow's import takes 3 to 4 s, a script's own work well under 0.1 s).

  _forkserver.py serve SOCKET LIB   import LIB as _libs.lib does, then answer on SOCKET (a Unix
                                    socket) until stopped; returns once it listens (the server
                                    runs on, detached)
  _forkserver.py stop SOCKET        stop it
  _forkserver.py run SOCKET SCRIPT [ARG...]
                                    run SCRIPT ARG... in a child forked from the server, with
                                    this process's stdout, stderr, working directory and
                                    environment, and exit as it exits (a signal: 128 + its
                                    number, as a shell says it); with no server on SOCKET, run
                                    SCRIPT in this interpreter instead (the same as
                                    `python SCRIPT ARG...`)

One request at a time: the server forks the child and waits for it before the next. The child
is a fresh process as far as the script can tell (its own pid, argv, __main__), except that
the library's and NumPy's modules are already loaded. A script that provokes a crash does it in
a child interpreter of its own (_dl.dies_with_signal), never in the forked child."""
import json
import os
import runpy
import select
import signal
import socket
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def _run_script(argv):
    """Run a script as `python SCRIPT ARG...` would, in this process; the exit code."""
    sys.argv = list(argv)
    sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
    try:
        runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as e:
        if e.code is None:
            return 0
        if isinstance(e.code, int):
            return e.code
        print(e.code, file=sys.stderr)
        return 1
    except BaseException:  # noqa: BLE001 - reported as the interpreter would
        import traceback
        traceback.print_exc()
        return 1
    return 0


def _listen(path, name):
    """Import the library, then a socket listening on `path`."""
    sys.path.insert(0, HERE)
    from _libs import lib
    lib(name)  # the import paid here, once
    if os.path.exists(path):
        os.unlink(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(8)
    return listener


def _serve(listener, path):
    while True:
        conn, _ = listener.accept()
        with conn:
            msg, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
            request = json.loads(msg.decode())
            if request.get("stop"):
                for fd in fds:
                    os.close(fd)
                conn.sendall(b"0")
                break
            pid = os.fork()
            if pid == 0:
                listener.close()
                conn.close()
                for target, fd in zip((0, 1, 2), fds):
                    os.dup2(fd, target)
                os.chdir(request["cwd"])
                os.environ.clear()
                os.environ.update(request["env"])
                code = _run_script(request["argv"])
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code & 0xFF)
            for fd in fds:
                os.close(fd)
            # The child ends, or the client goes (CTest's timeout killed it): then the child is
            # killed too, so that a hung script holds up no other request.
            pidfd = os.pidfd_open(pid)
            readable, _, _ = select.select([pidfd, conn], [], [])
            if pidfd not in readable:
                os.kill(pid, signal.SIGKILL)
            os.close(pidfd)
            _, status = os.waitpid(pid, 0)
            code = os.waitstatus_to_exitcode(status)
            try:
                conn.sendall(str(128 - code if code < 0 else code).encode())
            except OSError:
                pass
    listener.close()
    os.unlink(path)


def main():
    cmd, path = sys.argv[1], sys.argv[2]
    if cmd == "serve":
        # Detached: the caller (a CTest fixture's setup) returns once the socket listens.
        read, write = os.pipe()
        if os.fork():
            os.close(write)
            ok = os.read(read, 1) == b"1"
            print(f"_forkserver: {'serving' if ok else 'failed to serve'} {sys.argv[3]} on {path}")
            return 0 if ok else 1
        os.close(read)
        os.setsid()
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        try:
            listener = _listen(path, sys.argv[3])
        except BaseException:  # noqa: BLE001 - the caller says it failed
            os.write(write, b"0")
            os._exit(1)
        os.write(write, b"1")
        os.close(write)
        _serve(listener, path)
        os._exit(0)
    if cmd == "stop":
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.connect(path)
                socket.send_fds(s, [json.dumps({"stop": True}).encode()], [])
                s.recv(16)
        except OSError:
            pass
        return 0
    argv = sys.argv[3:]
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if s.connect_ex(path) != 0:
        s.close()
        return _run_script(argv)
    with s:
        request = {"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ)}
        socket.send_fds(s, [json.dumps(request).encode()], [0, 1, 2])
        reply = b""
        while chunk := s.recv(16):
            reply += chunk
    if not reply:
        print("_forkserver: the server closed the connection without an exit status", file=sys.stderr)
        return 1
    return int(reply)


if __name__ == "__main__":
    sys.exit(main())
