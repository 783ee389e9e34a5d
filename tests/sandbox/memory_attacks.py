"""Programs that look for the expected answers in every memory they can reach, for the memory isolation tests.

Every answer of the references in ``test_memory_isolation.py`` is ``ans<n>:<16 random hex digits>``
for the input ``n``: a program cannot guess one, so it can only print or return one it found. Each
program answers ``nope`` (a wrong answer) unless its one way of looking finds the answer to its
input. The patterns below never match their own text, so a program never finds itself.
"""

from __future__ import annotations

import textwrap

PYTHON_LOOK = r'''
import gc, inspect, os, re, sys

_PATTERN = re.compile(r"ans(\d+):[0-9a-f]{16}")
_BYTES = re.compile(rb"ans(\d+):[0-9a-f]{16}")


def _in_text(text, n):
    pattern = _BYTES if isinstance(text, bytes) else _PATTERN
    for match in pattern.finditer(text):
        if int(match.group(1)) == n:
            found = match.group(0)
            return found.decode() if isinstance(found, bytes) else found
    return None


def _in_value(value, n, depth=0):
    if isinstance(value, (str, bytes)):
        return _in_text(value, n)
    if depth > 6:
        return None
    if isinstance(value, dict):
        items = list(value.keys()) + list(value.values())
    elif isinstance(value, (list, tuple, set, frozenset)):
        items = list(value)
    else:
        return None
    for item in items[:100000]:
        found = _in_value(item, n, depth + 1)
        if found:
            return found
    return None


def _in_scopes(frame, n):
    for scope in (frame.f_locals, frame.f_globals):
        found = _in_value(dict(scope), n)
        if found:
            return found
    return None


def _dumpable():
    """A process that changed its uid is not dumpable, and then not even it may open its own
    /proc/self/mem: a program makes itself dumpable again first (any process may)."""
    import ctypes
    ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)  # PR_SET_DUMPABLE


def _in_memory(pid, n):
    """Every readable mapping of a process, through /proc/<pid>/mem."""
    _dumpable()
    try:
        with open(f"/proc/{pid}/maps") as maps:
            lines = maps.read().splitlines()
        mem = open(f"/proc/{pid}/mem", "rb", buffering=0)
    except OSError:
        return None
    with mem:
        for line in lines:
            fields = line.split()
            start, end = (int(x, 16) for x in fields[0].split("-"))
            if "r" not in fields[1] or end - start > (256 << 20) or "[v" in line:
                continue
            try:
                mem.seek(start)
                data = mem.read(end - start)
            except (OSError, ValueError, OverflowError):
                continue
            found = _in_text(data or b"", n)
            if found:
                return found
    return None


def _in_file(path, n):
    try:
        with open(path, "rb") as handle:
            return _in_text(handle.read(), n)
    except OSError:
        return None
'''

PYTHON_METHODS = {
    "the sys._getframe chain": """
        def look(n):
            frame = sys._getframe()
            while frame is not None:
                found = _in_scopes(frame, n)
                if found:
                    return found
                frame = frame.f_back
            return None
    """,
    "inspect.stack()": """
        def look(n):
            for info in inspect.stack():
                found = _in_scopes(info.frame, n)
                if found:
                    return found
            return None
    """,
    "gc.get_objects()": """
        def look(n):
            for obj in gc.get_objects():
                found = _in_value(obj, n, depth=6)
                if found:
                    return found
            return None
    """,
    "/proc/self/mem": """
        def look(n):
            return _in_memory("self", n)
    """,
    "/proc/<ppid>/mem, environ and cmdline (and every other process's)": """
        def look(n):
            others = [os.getppid()] + [int(p) for p in os.listdir("/proc") if p.isdigit()]
            for pid in others:
                if pid == os.getpid():
                    continue
                found = _in_file(f"/proc/{pid}/environ", n) or _in_file(f"/proc/{pid}/cmdline", n)
                found = found or _in_memory(pid, n)
                if found:
                    return found
            return None
    """,
    "the descriptors of the parent and every other process (/proc/<pid>/fd)": """
        def look(n):
            others = [os.getppid()] + [int(p) for p in os.listdir("/proc") if p.isdigit()]
            for pid in others:
                try:
                    fds = os.listdir(f"/proc/{pid}/fd") if pid != os.getpid() else []
                except OSError:
                    continue
                for fd in fds:
                    try:
                        opened = os.open(f"/proc/{pid}/fd/{fd}", os.O_RDONLY | os.O_NONBLOCK)
                    except OSError:
                        continue
                    try:
                        found = _in_text(os.read(opened, 1 << 20), n)
                    except OSError:
                        found = None
                    finally:
                        os.close(opened)
                    if found:
                        return found
            return None
    """,
    "inherited descriptors 0 and 3-1024": """
        def look(n):
            for fd in [0, *range(3, 1025)]:
                try:
                    os.fstat(fd)
                    os.set_blocking(fd, False)
                except OSError:
                    continue
                try:
                    os.lseek(fd, 0, 0)
                except OSError:
                    pass
                chunks = []
                try:
                    while len(chunks) < 64 and (chunk := os.read(fd, 1 << 16)):
                        chunks.append(chunk)
                except OSError:
                    pass
                found = _in_text(b"".join(chunks), n)
                if found:
                    return found
            return None
    """,
    "environment variables": """
        def look(n):
            return _in_value(dict(os.environ), n) or _in_file("/proc/self/environ", n)
    """,
}

PLANTS = {
    "the sys._getframe chain": "PLANTED = [{answers}]\n",
    "inspect.stack()": "PLANTED = [{answers}]\n",
    "gc.get_objects()": "PLANTED = [{answers}]\n",
    "/proc/self/mem": "PLANTED = ' '.join([{answers}]).encode()\n",
    "/proc/<ppid>/mem, environ and cmdline (and every other process's)": (
        "import subprocess\n"
        "SLEEPER = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)', {answers}])\n"
    ),
    "the descriptors of the parent and every other process (/proc/<pid>/fd)": (
        "import subprocess, tempfile\nPLANTED = tempfile.TemporaryFile()\n"
        "PLANTED.write(' '.join([{answers}]).encode())\nPLANTED.flush()\n"
        "SLEEPER = subprocess.Popen(['sleep', '30'], stdin=PLANTED.fileno())\n"
        "import time\ntime.sleep(0.2)  # until its exec has made it dumpable (a fork of ours is not)\n"
    ),
    "inherited descriptors 0 and 3-1024": (
        "import tempfile\nPLANTED = tempfile.TemporaryFile()\nPLANTED.write(' '.join([{answers}]).encode())\n"
        "PLANTED.flush()\n"
    ),
    "environment variables": "os.environ['PLANTED'] = ' '.join([{answers}])\n",
}
"""Where a control program puts the answers itself: each way of looking must find them there."""


def python_function(method: str, planted: list[str] | None = None) -> str:
    """A program whose ``f(n)`` returns the answer it found for ``n``, else ``nope``."""
    return _python(method, planted) + "def f(n):\n    return look(n) or 'nope'\n"


def python_stdio(method: str, planted: list[str] | None = None) -> str:
    """A program that reads ``n`` and prints the answer it found for it, else ``nope``."""
    return _python(method, planted) + "n = int(input())\nprint(look(n) or 'nope')\n"


def _python(method: str, planted: list[str] | None) -> str:
    code = PYTHON_LOOK + textwrap.dedent(PYTHON_METHODS[method])
    if planted is not None:
        code += PLANTS[method].format(answers=", ".join(repr(answer) for answer in planted))
    return code


C_LOOK = r"""
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

extern char **environ;
static char found[64];
static char buffer[1 << 20];

static int in_buffer(const char *data, size_t size, int n) {
    char needle[32];
    int length = snprintf(needle, sizeof needle, "ans%d:", n);
    const char *at = data, *end = data + size;
    while (at < end && (at = memmem(at, end - at, needle, length)) != NULL) {
        const char *hex = at + length;
        int ok = hex + 16 <= end;
        for (int i = 0; ok && i < 16; i++)
            ok = isdigit((unsigned char)hex[i]) || (hex[i] >= 'a' && hex[i] <= 'f');
        if (ok) {
            memcpy(found, at, length + 16);
            found[length + 16] = 0;
            return 1;
        }
        at++;
    }
    return 0;
}

static int in_file(const char *path, int n) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    ssize_t got = read(fd, buffer, sizeof buffer);
    close(fd);
    return got > 0 && in_buffer(buffer, got, n);
}

static int in_memory(const char *pid, int n) {
    char path[64], line[512];
    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);  /* a process that changed its uid must be dumpable to read itself */
    snprintf(path, sizeof path, "/proc/%s/maps", pid);
    FILE *maps = fopen(path, "r");
    if (!maps) return 0;
    snprintf(path, sizeof path, "/proc/%s/mem", pid);
    int mem = open(path, O_RDONLY);
    int hit = 0;
    while (mem >= 0 && !hit && fgets(line, sizeof line, maps)) {
        unsigned long start, end;
        char perms[8];
        if (sscanf(line, "%lx-%lx %7s", &start, &end, perms) != 3 || perms[0] != 'r') continue;
        if (end - start > (256UL << 20) || strstr(line, "[v")) continue;
        char *copy = malloc(end - start);
        if (!copy) continue;
        ssize_t got = pread(mem, copy, end - start, (off_t)start);
        if (got > 0) hit = in_buffer(copy, got, n);
        free(copy);
    }
    fclose(maps);
    if (mem >= 0) close(mem);
    return hit;
}

static int in_process(const char *pid, int n) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%s/environ", pid);
    if (in_file(path, n)) return 1;
    snprintf(path, sizeof path, "/proc/%s/cmdline", pid);
    if (in_file(path, n)) return 1;
    return in_memory(pid, n);
}

static int look_self_mem(int n) { return in_memory("self", n); }

static int look_processes(int n) {
    char name[32];
    snprintf(name, sizeof name, "%d", getppid());
    if (in_process(name, n)) return 1;
    DIR *proc = opendir("/proc");
    struct dirent *entry;
    int hit = 0;
    while (proc && !hit && (entry = readdir(proc)) != NULL)
        if (isdigit((unsigned char)entry->d_name[0]) && atoi(entry->d_name) != getpid())
            hit = in_process(entry->d_name, n);
    if (proc) closedir(proc);
    return hit;
}

static int look_descriptors(int n) {
    for (int fd = 0; fd <= 1024; fd++) {
        if (fd == 1 || fd == 2 || fcntl(fd, F_SETFL, O_NONBLOCK) != 0) continue;
        lseek(fd, 0, SEEK_SET);
        ssize_t got = read(fd, buffer, sizeof buffer);
        if (got > 0 && in_buffer(buffer, got, n)) return 1;
    }
    return 0;
}

static int look_environment(int n) {
    for (char **entry = environ; *entry; entry++)
        if (in_buffer(*entry, strlen(*entry), n)) return 1;
    return in_file("/proc/self/environ", n);
}

int main(void) {
    int n;
    if (scanf("%d", &n) != 1) return 1;
    PLANT
    puts(LOOK(n) ? found : "nope");
    return 0;
}
"""

C_METHODS = {
    "/proc/self/mem": "look_self_mem",
    "/proc/<ppid>/mem, environ and cmdline (and every other process's)": "look_processes",
    "inherited descriptors 0 and 3-1024": "look_descriptors",
    "environment variables": "look_environment",
}

C_PLANTS = {
    "/proc/self/mem": 'static char planted[256]; snprintf(planted, sizeof planted, "%s", ANSWERS);',
    "/proc/<ppid>/mem, environ and cmdline (and every other process's)": (
        'if (fork() == 0) { execl("/bin/sh", "sh", "-c", "sleep 30; exit", ANSWERS, (char *)0); _exit(1); } usleep(100000);'
    ),
    "inherited descriptors 0 and 3-1024": (
        "int planted[2]; pipe(planted); write(planted[1], ANSWERS, strlen(ANSWERS));"
    ),
    "environment variables": 'setenv("PLANTED", ANSWERS, 1);',
}


def c_stdio(method: str, planted: list[str] | None = None) -> str:
    """A C program that reads ``n`` and prints the answer it found for it, else ``nope``."""
    plant = C_PLANTS[method] if planted is not None else ""
    answers = " ".join(planted or [])
    header = f'#define LOOK {C_METHODS[method]}\n#define PLANT {plant}\n#define ANSWERS "{answers}"\n'
    return header + C_LOOK
