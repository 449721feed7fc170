"""The first process inside the sandbox (musify/sandbox.py): lock the file system, set limits, run.

Run as `python -I -S _sandbox_child.py CONFIG_JSON -- PROGRAM ARGS...`, standard library only, so
it starts in a few milliseconds. Inside fresh user, mount, network and PID namespaces (made by
unshare(1)) it bind-mounts the working directory onto itself and remounts every other mount
read-only, so a program can write only there; as PID 1 of its namespace it forks the program,
reaps every orphan, and when the program ends it exits, which makes the kernel kill whatever
the program left running. Without namespaces it only sets the limits and execs the program.

The outcome (exit status or signal, file-system lock-down failures) goes to the parent on the
status descriptor as one JSON line, because PID 1 cannot die of a signal to pass it on.
"""

import ctypes
import ctypes.util
import json
import os
import resource
import sys

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC = 32, 4096, 16384
MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 1024, 2048, 1 << 21
# statvfs f_flag bit -> mount flag; a user namespace may not clear these "locked" flags on remount
_KEPT = ((os.ST_NOSUID, MS_NOSUID), (os.ST_NODEV, MS_NODEV), (os.ST_NOEXEC, MS_NOEXEC),
         (getattr(os, "ST_NOATIME", 1024), MS_NOATIME), (getattr(os, "ST_NODIRATIME", 2048), MS_NODIRATIME),
         (getattr(os, "ST_RELATIME", 4096), MS_RELATIME))


def _mount_points() -> list[str]:
    points = []
    with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as fh:
        for line in fh:
            raw = line.split()[4]
            points.append(raw.encode("latin-1", "surrogateescape").decode("unicode_escape")
                          if "\\" in raw else raw)
    return points


def _lock_filesystem(workdir: str) -> list[str]:
    """Make everything but `workdir` read-only; return the mounts that could not be locked."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.mount.argtypes = (ctypes.c_char_p,) * 3 + (ctypes.c_ulong, ctypes.c_void_p)
    work = workdir.encode()
    if libc.mount(work, work, None, MS_BIND | MS_REC, None) != 0:
        return [f"{workdir} (bind: {os.strerror(ctypes.get_errno())})"]
    failed = []
    for point in reversed(_mount_points()):  # deepest first, as listed last
        if point == workdir or point.startswith(workdir.rstrip("/") + "/"):
            continue
        if point in ("/proc", "/sys") or point.startswith(("/proc/", "/sys/")):
            continue  # kernel views: /proc is this namespace's own, /sys is not writable by us
        try:
            present = os.statvfs(point).f_flag
        except OSError:
            continue
        flags = MS_REMOUNT | MS_BIND | MS_RDONLY
        flags |= sum(bit for st, bit in _KEPT if present & st)
        if libc.mount(None, point.encode(), None, flags, None) != 0:
            failed.append(f"{point} ({os.strerror(ctypes.get_errno())})")
    return failed


def _limits(limits: dict) -> None:
    for name, value in limits.items():
        if value is not None:
            resource.setrlimit(getattr(resource, name), (value, value))


def _report(fd: int, **status) -> None:
    if fd >= 0:
        os.write(fd, (json.dumps(status) + "\n").encode())


def main() -> None:
    config = json.loads(sys.argv[1])
    program = sys.argv[sys.argv.index("--") + 1 :]
    fd = config.get("status_fd", -1)
    failed = _lock_filesystem(config["workdir"]) if config.get("lock_fs") else []
    if failed:
        _report(fd, lock_failed=failed)
    os.chdir(config["workdir"])
    if os.getpid() != 1:  # no PID namespace: become the program
        _limits(config["rlimits"])
        if fd >= 0:
            os.close(fd)
        os.execv(program[0], program)
    child = os.fork()
    if child == 0:
        os.close(fd)
        _limits(config["rlimits"])
        try:
            os.execv(program[0], program)
        except OSError as exc:
            os.write(2, f"musify sandbox: cannot run {program[0]}: {exc.strerror}\n".encode())
            os._exit(127)
    while True:  # PID 1 reaps every orphan until the program itself ends
        pid, status = os.wait()
        if pid == child:
            break
    if os.WIFSIGNALED(status):
        _report(fd, signal=os.WTERMSIG(status))
    else:
        _report(fd, exit=os.WEXITSTATUS(status))
    os._exit(0)


if __name__ == "__main__":
    main()
