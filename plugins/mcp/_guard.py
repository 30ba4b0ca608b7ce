"""Runs one stdio MCP server and stops its whole process group when pi goes away.

pi starts ``python -I -S _guard.py COMMAND ARGS...`` in a new session (the MCP SDK does that), so the
guard leads the server's process group. pi stops a server by closing its stdin and signalling the
group; but if pi itself is killed (``kill -9``), nothing would stop a server that ignores the end of
its input, or the grandchildren of a wrapper such as ``npx``. The guard notices that its parent is
gone and stops the group; when the server exits, whatever it left in the group goes too (after pi
is killed the server often sees its input end before the guard sees pi gone). It runs without site packages: only the standard library, started fast.
"""

import os
import signal
import sys
import time

POLL_SECONDS = 0.1
GRACE_SECONDS = 2.0


def _exit_code(status: int) -> int:
    if os.WIFEXITED(status):
        return os.WEXITSTATUS(status)
    return 128 + os.WTERMSIG(status) if os.WIFSIGNALED(status) else 1


def _others_in_group() -> list[int] | None:
    """The live processes other than the guard in its group; None where /proc cannot be read."""
    me, group = os.getpid(), os.getpgid(0)
    try:
        entries = os.listdir("/proc")
    except OSError:
        return None
    others = []
    for entry in entries:
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[0] != "Z" and int(fields[2]) == group:
            others.append(int(entry))
    return others


def _stop_group(child: int | None) -> None:
    """SIGTERM to the group, a grace period while anything is left in it, then SIGKILL to what is left."""
    try:
        os.killpg(0, signal.SIGTERM)
    except OSError:
        pass
    deadline = time.monotonic() + GRACE_SECONDS
    while time.monotonic() < deadline:
        if child is not None:
            try:
                if os.waitpid(child, os.WNOHANG)[0]:
                    child = None
            except ChildProcessError:
                child = None
        if child is None and _others_in_group() == []:
            return
        time.sleep(POLL_SECONDS)
    others = _others_in_group()
    if others is None:
        os.killpg(0, signal.SIGKILL)
    for pid in others or ():
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def main() -> int:
    argv = sys.argv[1:]
    if not argv:
        sys.stderr.write("usage: _guard.py COMMAND [ARGS...]\n")
        return 2
    parent = os.getppid()
    child = os.fork()
    if child == 0:
        try:
            os.execvp(argv[0], argv)
        except OSError as exc:
            sys.stderr.write(f"cannot start {argv[0]}: {exc.strerror}\n")
            os._exit(127)
    # The server has its own copies of the pipes: pi must see the end of its output when it exits.
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    # The group is signalled by pi when it stops the server; the guard leaves when the server does,
    # and takes with it what the server left in the group.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while True:
        pid, status = os.waitpid(child, os.WNOHANG)
        if pid:
            # What the server started and left behind (it may ignore the end of its input) goes with it;
            # when pi was killed, the server often sees its input end before the guard sees pi gone.
            _stop_group(None)
            return _exit_code(status)
        if os.getppid() != parent:
            _stop_group(child)
            return 1
        time.sleep(POLL_SECONDS)


if __name__ == "__main__":
    sys.exit(main())
