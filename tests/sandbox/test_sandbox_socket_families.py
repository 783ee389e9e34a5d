"""Socket address families: a sandboxed program opens Unix, IP and routing netlink sockets, and
no other kind.

A network namespace confines IP (and routing netlink) only. AF_VSOCK reaches the hypervisor (this
VM has /dev/vsock, and before the filter refused it a program could create, bind and listen on
one); the other families, and netlink's other protocols, are kernel code a program has no use
for. Each is tried with the raw system call (``socket`` and ``socketpair``), so no library
wrapper can hide the kernel's answer, and once with high bits set above the ``int`` the kernel reads.
"""

from __future__ import annotations

import json
import platform
import textwrap

import pytest
from sandbox_support import QUICK, SETTINGS

from rewardhub.sandbox import SandboxPool, SandboxUnavailable
from rewardhub.sandbox.syscall_filter import SOCKET_FAMILIES, docker_profile

pytestmark = pytest.mark.skipif(platform.machine() != "x86_64", reason="the programs use x86_64 call numbers")

EAFNOSUPPORT, EPROTONOSUPPORT = 97, 93
AF_NETLINK = 16
SOCKET, SOCKETPAIR = 41, 53
REFUSED_FAMILIES = {
    "AF_VSOCK": 40,
    "AF_PACKET": 17,
    "AF_BLUETOOTH": 31,
    "AF_ALG": 38,
    "AF_KEY": 15,
    "AF_APPLETALK": 5,
    "AF_X25": 9,
    "AF_AX25": 3,
    "AF_RDS": 21,
    "AF_TIPC": 30,
    "AF_CAN": 29,
    "AF_XDP": 44,
    "AF_IB": 27,
    "AF_MCTP": 45,
    "AF_UNSPEC": 0,
    "46 (past the last family)": 46,
    "AF_VSOCK behind high bits": 0xFFFFFFFF_00000028,
}
REFUSED_NETLINK = {
    "NETLINK_SOCK_DIAG": 4,
    "NETLINK_XFRM": 6,
    "NETLINK_AUDIT": 9,
    "NETLINK_NETFILTER": 12,
    "NETLINK_KOBJECT_UEVENT": 15,
    "NETLINK_GENERIC": 16,
    "NETLINK_CRYPTO": 21,
    "NETLINK_ROUTE behind high bits": 1 << 32,
}

PROGRAM = """
import ctypes, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
answers = {}
for name, (call, family, kind, *protocol) in json.loads(input()).items():
    pair = (ctypes.c_int * 2)(-1, -1)
    extra = [ctypes.byref(pair)] if call == 53 else []
    ctypes.set_errno(0)
    protocol = ctypes.c_ulong(protocol[0] if protocol else 0)
    result = libc.syscall(ctypes.c_long(call), ctypes.c_ulong(family), ctypes.c_long(kind), protocol, *extra)
    answers[name] = [result, ctypes.get_errno()]
    for fd in ([result] if call == 41 else list(pair)) if result >= 0 else []:
        os.close(fd)
print(json.dumps(answers))
"""
SOCK_DGRAM, SOCK_STREAM, SOCK_RAW, SOCK_SEQPACKET = 2, 1, 3, 5


def attempts(pool, tries: dict[str, tuple[int, ...]]) -> dict[str, list[int]]:
    result = pool.run("python", PROGRAM, stdin=json.dumps(tries), limits=QUICK)
    assert result.verdict == "ok", result.stderr
    return json.loads(result.stdout)


@pytest.mark.usefixtures("host")
@pytest.mark.parametrize("name", sorted(REFUSED_FAMILIES))
def test_a_socket_of_any_other_family_is_refused(pool, name):
    family = REFUSED_FAMILIES[name]
    # a datagram and a stream socket, and a pair: whichever type the family takes, none gets through
    tries = {
        "dgram": (SOCKET, family, SOCK_DGRAM),
        "stream": (SOCKET, family, SOCK_STREAM),
        "seqpacket": (SOCKET, family, SOCK_SEQPACKET),
        "pair": (SOCKETPAIR, family, SOCK_STREAM),
    }
    assert attempts(pool, tries) == {kind: [-1, EAFNOSUPPORT] for kind in tries}


@pytest.mark.usefixtures("host")
@pytest.mark.parametrize("name", sorted(REFUSED_NETLINK))
def test_a_netlink_socket_of_any_protocol_but_routing_is_refused(pool, name):
    tries = {kind: (SOCKET, AF_NETLINK, kind, REFUSED_NETLINK[name]) for kind in (SOCK_DGRAM, SOCK_RAW)}
    assert list(attempts(pool, tries).values()) == [[-1, EPROTONOSUPPORT]] * 2


@pytest.fixture(scope="module")
def unfiltered_pool():
    try:
        pool = SandboxPool(SETTINGS.model_copy(update={"syscall_filter": False, "concurrency": 1}))
    except SandboxUnavailable as exc:
        pytest.skip(exc.message)
    yield pool
    pool.close()


@pytest.mark.usefixtures("host")
def test_without_the_filter_vsock_and_netlink_sockets_are_made(unfiltered_pool):
    """The attack is real on this host: the namespaces alone leave these open (other families the
    kernel refuses by itself here, lacking the module or the privilege: the filter makes that
    independent of the kernel's build and configuration)."""
    tries = {"AF_VSOCK": (SOCKET, 40, SOCK_STREAM)}
    for name in ("NETLINK_SOCK_DIAG", "NETLINK_KOBJECT_UEVENT", "NETLINK_GENERIC"):
        tries[name] = (SOCKET, AF_NETLINK, SOCK_DGRAM, REFUSED_NETLINK[name])
    answers = attempts(unfiltered_pool, tries)
    assert {name: fd >= 0 for name, (fd, _) in answers.items()} == dict.fromkeys(tries, True)


@pytest.mark.usefixtures("host")
def test_vsock_cannot_be_bound_or_listened_on(pool):
    """The finding itself, through Python's own socket module: create, bind and listen all worked."""
    code = textwrap.dedent("""
        import socket
        try:
            s = socket.socket(40, socket.SOCK_STREAM)  # AF_VSOCK
            s.bind((0xFFFFFFFF, 5555))  # VMADDR_CID_ANY
            s.listen()
            print("listening")
        except OSError as exc:
            print("refused", exc.errno)
    """)
    result = pool.run("python", code, limits=QUICK)
    assert (result.verdict, result.stdout) == ("ok", f"refused {EAFNOSUPPORT}\n")


def test_unix_ip_and_routing_netlink_sockets_still_work(pool):
    tries = {f"{name} {kind}": (SOCKET, SOCKET_FAMILIES[name], kind) for name in ("AF_UNIX", "AF_INET", "AF_INET6")
             for kind in (SOCK_STREAM, SOCK_DGRAM)}  # fmt: skip
    tries["AF_UNIX pair"] = (SOCKETPAIR, SOCKET_FAMILIES["AF_UNIX"], SOCK_STREAM)
    tries["NETLINK_ROUTE dgram"] = (SOCKET, AF_NETLINK, SOCK_DGRAM, 0)  # netlink has no streams
    tries["NETLINK_ROUTE raw"] = (SOCKET, AF_NETLINK, SOCK_RAW, 0)
    answers = attempts(pool, tries)
    assert {name: fd >= 0 for name, (fd, _) in answers.items()} == dict.fromkeys(tries, True)


def test_a_local_tcp_server_name_lookup_and_the_interface_list_still_work(pool):
    code = textwrap.dedent("""
        import socket, threading
        print(sorted(name for _, name in socket.if_nameindex()))  # routing netlink, in the sandbox's namespace
        print(socket.getaddrinfo("localhost", 80, socket.AF_INET)[0][4])
        server = socket.create_server(("localhost", 0))
        threading.Thread(target=lambda: server.accept()[0].sendall(b"hi"), daemon=True).start()
        print(socket.create_connection(server.getsockname()).recv(2).decode())
    """)
    result = pool.run("python", code, limits=QUICK)
    assert (result.verdict, result.stdout, result.stderr) == ("ok", "['lo']\n('127.0.0.1', 80)\nhi\n", "")


def test_the_docker_profile_carries_the_same_family_rules():
    rules = [rule for rule in docker_profile("x86_64")["syscalls"] if "socket" in rule["names"]]
    assert all(rule["names"] == ["socket", "socketpair"] for rule in rules)
    [netlink] = [rule for rule in rules if rule["errnoRet"] == EPROTONOSUPPORT]
    assert [(arg["index"], arg["op"], arg.get("valueTwo", arg["value"])) for arg in netlink["args"]] == [
        (0, "SCMP_CMP_MASKED_EQ", AF_NETLINK), (2, "SCMP_CMP_NE", 0)]  # fmt: skip
    rules = [rule for rule in rules if rule["errnoRet"] == EAFNOSUPPORT]
    masked = {rule["args"][0]["valueTwo"] for rule in rules if rule["args"][0]["op"] == "SCMP_CMP_MASKED_EQ"}
    assert all(
        rule["args"][0]["value"] == 0xFFFFFFFF for rule in rules if rule["args"][0]["op"] == "SCMP_CMP_MASKED_EQ"
    )
    assert masked == set(range(46)) - set(SOCKET_FAMILIES.values())
    assert [rule["args"][0]["value"] for rule in rules if rule["args"][0]["op"] == "SCMP_CMP_GE"] == [46]
