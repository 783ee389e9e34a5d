"""Every language, the same specification: it reads stdin and writes stdout, its compile errors,
crashes, endless loops and memory hogs get their verdicts, and it can neither fork past the process
limit nor reach the host's network. A build is made once per distinct submission.

Each program is written the way a user of that language would write it. The attack programs
report what they achieved ("refused N" after N children, "BLOCKED" or "CONNECTED"), so a test
fails if the attack got further than it may, not only if the program misbehaved.
"""

from __future__ import annotations

import socket
import textwrap
from collections.abc import Iterator

import pytest
from sandbox_support import QUICK

from rewardhub.sandbox import SandboxPool, SandboxSettings, language

ADD = {
    "python": "a, b = map(int, input().split())\nprint(a + b)\n",
    "c": '#include <stdio.h>\nint main(){long a,b; scanf("%ld %ld",&a,&b); printf("%ld\\n", a+b);}\n',
    "cpp": '#include <iostream>\nint main(){long long a,b; std::cin>>a>>b; std::cout<<a+b<<"\\n";}\n',
    "javascript": "const [a, b] = require('fs').readFileSync(0, 'utf8').trim().split(/\\s+/).map(Number);\nconsole.log(a + b);\n",
    "typescript": "const text: string = require('fs').readFileSync(0, 'utf8');\nconst [a, b]: number[] = text.trim().split(/\\s+/).map(Number);\nconsole.log(a + b);\n",
    "go": 'package main\n\nimport "fmt"\n\nfunc main() {\n\tvar a, b int\n\tfmt.Scan(&a, &b)\n\tfmt.Println(a + b)\n}\n',
    "java": "import java.util.*;\n\npublic class Main {\n    public static void main(String[] args) {\n        Scanner in = new Scanner(System.in);\n        System.out.println(in.nextLong() + in.nextLong());\n    }\n}\n",
    "rust": 'use std::io::Read;\n\nfn main() {\n    let mut s = String::new();\n    std::io::stdin().read_to_string(&mut s).unwrap();\n    let v: Vec<i64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();\n    println!("{}", v[0] + v[1]);\n}\n',
    "bash": "read -r a b\necho $((a + b))\n",
}
LANGS = list(ADD)

SYNTAX_ERROR = {
    "python": "def f(:\n    pass\n",
    "c": "int main( {\n",
    "cpp": "int main() { int x = ; }\n",
    "javascript": "function f( {\n",
    "typescript": "let x: number = ;\n",
    "go": "package main\n\nfunc main() {\n\tx :=\n}\n",
    "java": "public class Main { public static void main(String[] a) { int x = ; } }\n",
    "rust": 'fn main() { let x: i32 = "a"; }\n',
    "bash": "if then fi\n",
}
COMPILED = {"c", "cpp", "typescript", "go", "java", "rust"}
"""Their syntax errors are compile errors; an interpreter's (node, bash) are the run failing."""

CRASH = {
    "python": "raise ValueError('boom')\n",
    "c": "#include <stdlib.h>\nint main(){ abort(); }\n",
    "cpp": '#include <stdexcept>\nint main(){ throw std::runtime_error("boom"); }\n',
    "javascript": "throw new Error('boom');\n",
    "typescript": "const why: string = 'boom';\nthrow new Error(why);\n",
    "go": 'package main\n\nfunc main() {\n\tpanic("boom")\n}\n',
    "java": 'public class Main { public static void main(String[] a) { throw new RuntimeException("boom"); } }\n',
    "rust": 'fn main() {\n    panic!("boom");\n}\n',
    "bash": "echo partial\nexit 3\n",
}

SPIN = {
    "python": "while True:\n    pass\n",
    "c": "int main(){ volatile long x = 0; for(;;) x++; }\n",
    "cpp": "int main(){ volatile long x = 0; for(;;) x++; }\n",
    "javascript": "for (;;) {}\n",
    "typescript": "let n: number = 0;\nfor (;;) { n++; }\n",
    "go": "package main\n\nfunc main() {\n\tfor {\n\t}\n}\n",
    "java": "public class Main { public static void main(String[] a) { long x = 0; while (true) { x++; } } }\n",
    "rust": "fn main() {\n    loop {}\n}\n",
    "bash": "while :; do :; done\n",
}

HOG = {
    "python": "keep = []\nwhile True:\n    keep.append(b'x' * (1 << 24))\n",
    "c": "#include <stdlib.h>\n#include <string.h>\nint main(){ for(;;){ char *p = malloc(1<<24); if(!p) return 1; memset(p, 1, 1<<24);} }\n",
    "cpp": "#include <vector>\nint main(){ std::vector<std::vector<char>> keep; for(;;) keep.emplace_back(1 << 24, 'x'); }\n",
    "javascript": "const keep = [];\nfor (;;) keep.push(Buffer.alloc(1 << 24, 1));\n",
    "typescript": "const keep: Buffer[] = [];\nfor (;;) keep.push(Buffer.alloc(1 << 24, 1));\n",
    "go": 'package main\n\nimport "fmt"\n\nfunc main() {\n\tvar keep [][]byte\n\tfor i := 0; i < 4096; i++ {\n\t\tb := make([]byte, 1<<20)\n\t\tfor j := range b {\n\t\t\tb[j] = 1\n\t\t}\n\t\tkeep = append(keep, b)\n\t}\n\tfmt.Println(len(keep))\n}\n',
    "java": "import java.util.*;\n\npublic class Main {\n    public static void main(String[] a) {\n        List<long[]> keep = new ArrayList<>();\n        while (true) keep.add(new long[1 << 20]);\n    }\n}\n",
    "rust": "fn main() {\n    let mut keep = Vec::new();\n    loop {\n        keep.push(vec![1u8; 1 << 24]);\n    }\n}\n",
    "bash": "x=$(head -c 400000000 /dev/zero | tr '\\0' a)\necho ${#x}\n",
}

FORK = {
    "python": """
        import os, time
        n = 0
        try:
            for _ in range(200):
                if os.fork() == 0:
                    time.sleep(30)
                    os._exit(0)
                n += 1
        except OSError:
            print("refused", n)
    """,
    "c": """
        #include <stdio.h>
        #include <unistd.h>
        int main(){ int n = 0; for (int i = 0; i < 200; i++) { pid_t p = fork();
            if (p == 0) { sleep(30); _exit(0); } if (p < 0) { printf("refused %d\\n", n); return 0; } n++; } }
    """,
    "cpp": """
        #include <cstdio>
        #include <unistd.h>
        int main(){ int n = 0; for (int i = 0; i < 200; i++) { pid_t p = fork();
            if (p == 0) { sleep(30); _exit(0); } if (p < 0) { std::printf("refused %d\\n", n); return 0; } n++; } }
    """,
    "javascript": """
        const { spawn } = require('child_process');
        let n = 0;
        for (let i = 0; i < 200; i++) {
          const child = spawn('sleep', ['30']);
          child.on('error', () => {});
          if (child.pid === undefined) { console.log('refused', n); process.exit(0); }
          n++;
        }
    """,
    "typescript": """
        const { spawn } = require('child_process');
        let n: number = 0;
        for (let i = 0; i < 200; i++) {
          const child = spawn('sleep', ['30']);
          child.on('error', () => {});
          if (child.pid === undefined) { console.log('refused', n); process.exit(0); }
          n++;
        }
    """,
    "go": """
        package main

        import (
        \t"fmt"
        \t"os/exec"
        )

        func main() {
        \tn := 0
        \tfor i := 0; i < 200; i++ {
        \t\tif err := exec.Command("sleep", "30").Start(); err != nil {
        \t\t\tfmt.Println("refused", n)
        \t\t\treturn
        \t\t}
        \t\tn++
        \t}
        }
    """,
    "java": """
        public class Main {
            public static void main(String[] a) {
                int n = 0;
                try {
                    for (int i = 0; i < 200; i++) { new ProcessBuilder("sleep", "30").start(); n++; }
                } catch (Throwable e) {  // the JVM's own reaper thread may be what the limit refuses: an Error
                    System.out.println("refused " + n);
                }
            }
        }
    """,
    "rust": """
        use std::process::Command;

        fn main() {
            let mut n = 0;
            for _ in 0..200 {
                if Command::new("sleep").arg("30").spawn().is_err() {
                    println!("refused {}", n);
                    return;
                }
                n += 1;
            }
        }
    """,
    "bash": """
        for i in $(seq 200); do sleep 30 & done
    """,
}

CONNECT = {
    "python": """
        import socket
        try:
            socket.socket().connect(("127.0.0.1", PORT))
            print("CONNECTED")
        except OSError as exc:
            print("BLOCKED", exc)
    """,
    "c": """
        #include <errno.h>
        #include <stdio.h>
        #include <string.h>
        #include <arpa/inet.h>
        #include <sys/socket.h>
        int main(){ int s = socket(AF_INET, SOCK_STREAM, 0); struct sockaddr_in a; memset(&a, 0, sizeof a);
            a.sin_family = AF_INET; a.sin_port = htons(PORT); a.sin_addr.s_addr = inet_addr("127.0.0.1");
            if (connect(s, (struct sockaddr *)&a, sizeof a) == 0) puts("CONNECTED"); else printf("BLOCKED %s\\n", strerror(errno)); }
    """,
    "cpp": """
        #include <cerrno>
        #include <cstdio>
        #include <cstring>
        #include <arpa/inet.h>
        #include <sys/socket.h>
        int main(){ int s = socket(AF_INET, SOCK_STREAM, 0); sockaddr_in a; std::memset(&a, 0, sizeof a);
            a.sin_family = AF_INET; a.sin_port = htons(PORT); a.sin_addr.s_addr = inet_addr("127.0.0.1");
            if (connect(s, (sockaddr *)&a, sizeof a) == 0) std::puts("CONNECTED"); else std::printf("BLOCKED %s\\n", std::strerror(errno)); }
    """,
    "javascript": """
        const net = require('net');
        const s = net.connect(PORT, '127.0.0.1');
        s.setTimeout(2000, () => { console.log('BLOCKED timeout'); process.exit(0); });
        s.on('connect', () => { console.log('CONNECTED'); process.exit(0); });
        s.on('error', (e) => { console.log('BLOCKED', e.code); process.exit(0); });
    """,
    "typescript": """
        const net = require('net');
        const s = net.connect(PORT, '127.0.0.1');
        s.setTimeout(2000, () => { console.log('BLOCKED timeout'); process.exit(0); });
        s.on('connect', () => { console.log('CONNECTED'); process.exit(0); });
        s.on('error', (e: { code: string }) => { console.log('BLOCKED', e.code); process.exit(0); });
    """,
    "go": """
        package main

        import (
        \t"fmt"
        \t"net"
        \t"time"
        )

        func main() {
        \tif _, err := net.DialTimeout("tcp", "127.0.0.1:PORT", 2*time.Second); err != nil {
        \t\tfmt.Println("BLOCKED", err)
        \t\treturn
        \t}
        \tfmt.Println("CONNECTED")
        }
    """,
    "java": """
        import java.net.*;

        public class Main {
            public static void main(String[] a) {
                try (Socket s = new Socket()) {
                    s.connect(new InetSocketAddress("127.0.0.1", PORT), 2000);
                    System.out.println("CONNECTED");
                } catch (Exception e) { System.out.println("BLOCKED " + e); }
            }
        }
    """,
    "rust": """
        use std::net::TcpStream;
        use std::time::Duration;

        fn main() {
            let address = "127.0.0.1:PORT".parse().unwrap();
            match TcpStream::connect_timeout(&address, Duration::from_secs(2)) {
                Ok(_) => println!("CONNECTED"),
                Err(e) => println!("BLOCKED {}", e),
            }
        }
    """,
    "bash": """
        if exec 3<>/dev/tcp/127.0.0.1/PORT; then echo CONNECTED; else echo BLOCKED; fi
    """,
}

LIMITS = QUICK.with_(timeout_s=10.0, memory_mb=256)
"""Room for a JVM and a compiler's first run on a busy machine; the spin and memory tests tighten it."""


@pytest.fixture(autouse=True)
def _installed(request):
    lang = request.node.callspec.params.get("lang") if hasattr(request.node, "callspec") else None
    if lang and not language(lang).available():
        pytest.skip(f"{lang} is not installed here (scripts/install_system_deps.sh installs it)")


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A TCP service on the host's loopback: what a sandboxed program must not reach."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.setblocking(False)
    yield server
    server.close()


def accepted(server: socket.socket) -> bool:
    try:
        connection, _ = server.accept()
    except BlockingIOError:
        return False
    connection.close()
    return True


@pytest.mark.parametrize("lang", LANGS)
def test_reads_stdin_and_writes_stdout(pool, lang):
    result = pool.run(lang, ADD[lang], stdin="20 22\n", limits=LIMITS)
    assert (result.verdict, result.stdout) == ("ok", "42\n"), result.stderr


@pytest.mark.parametrize("lang", LANGS)
def test_a_syntax_error_is_reported_with_the_toolchains_message(pool, lang):
    result = pool.run(lang, SYNTAX_ERROR[lang], limits=LIMITS)
    assert result.verdict == ("compile_error" if lang in COMPILED | {"python"} else "runtime_error")
    assert "error" in result.stderr.lower(), result.stderr


@pytest.mark.parametrize("lang", LANGS)
def test_a_crash_is_a_runtime_error(pool, lang):
    result = pool.run(lang, CRASH[lang], limits=LIMITS)
    assert result.verdict == "runtime_error"
    assert result.exit_code != 0
    assert "boom" in result.stderr or result.stdout == "partial\n" or result.details.get("signal") == "SIGABRT"


@pytest.mark.parametrize("lang", LANGS)
def test_an_endless_loop_is_a_timeout(pool, lang, host):
    with pool.job(lang, SPIN[lang]) as job:
        assert job.setup() is None, job.build
        result = job.run("", QUICK.with_(timeout_s=1.0, memory_mb=256))
    assert result.verdict == "timeout"


@pytest.mark.parametrize("lang", LANGS)
def test_a_memory_hog_is_a_memory_verdict(pool, lang, host):
    result = pool.run(lang, HOG[lang], limits=QUICK.with_(timeout_s=10.0, memory_mb=128))
    assert result.verdict == "memory", (result.verdict, result.stderr[-500:])


@pytest.mark.parametrize("lang", LANGS)
def test_forking_stops_at_the_process_limit_and_leaves_nothing_behind(pool, lang, host):
    limits = QUICK.with_(timeout_s=3.0, memory_mb=256)
    result = pool.run(lang, textwrap.dedent(FORK[lang]), limits=limits)
    said = result.stdout + result.stderr
    if lang == "bash":  # bash reports a refused fork and retries it until the clock runs out
        assert "Resource temporarily unavailable" in said, said[-500:]
    else:  # the program says "refused N"; a JVM may first log its own failed thread start on stdout
        refused = [line for line in said.splitlines() if line.startswith("refused")]
        assert refused, (result.verdict, said[-500:])
        assert int(refused[0].split()[1]) < limits.max_processes
    assert pool.run("python", "print('next')", limits=QUICK).stdout == "next\n"  # the sandbox still serves


@pytest.mark.parametrize("lang", LANGS)
def test_the_hosts_loopback_services_are_unreachable(pool, lang, listener, host):
    code = textwrap.dedent(CONNECT[lang]).replace("PORT", str(listener.getsockname()[1]))
    result = pool.run(lang, code, limits=LIMITS)
    assert result.stdout.startswith("BLOCKED"), (result.verdict, result.stdout, result.stderr[-500:])
    assert not accepted(listener)


@pytest.fixture(scope="module")
def unwalled() -> Iterator[SandboxPool]:
    pool = SandboxPool(SandboxSettings(backend="unsafe", concurrency=1))
    yield pool
    pool.close()


@pytest.mark.parametrize("lang", LANGS)
def test_the_network_probe_does_connect_without_the_sandboxes_walls(unwalled, lang, listener):
    """The control for the test above: the same program, run with no network namespace, connects."""
    code = textwrap.dedent(CONNECT[lang]).replace("PORT", str(listener.getsockname()[1]))
    result = unwalled.run(lang, code, limits=LIMITS)
    assert result.stdout.startswith("CONNECTED"), (result.verdict, result.stdout, result.stderr[-500:])
    assert accepted(listener)


@pytest.mark.parametrize("lang", sorted(COMPILED))
def test_a_submission_compiles_once_however_often_it_is_sent(lang):
    pool = SandboxPool(SandboxSettings(concurrency=1))
    try:
        answers = [pool.run(lang, ADD[lang], stdin=f"{i} {i}\n", limits=LIMITS) for i in range(3)]
        assert [a.stdout for a in answers] == ["0\n", "2\n", "4\n"]
        assert (pool.builds.misses, pool.builds.hits) == (1, 2)
        broken = [pool.run(lang, SYNTAX_ERROR[lang], limits=LIMITS) for _ in range(2)]
        assert [b.verdict for b in broken] == ["compile_error"] * 2
        assert broken[0].stderr == broken[1].stderr
        assert (pool.builds.misses, pool.builds.hits) == (2, 3)
    finally:
        pool.close()


def test_a_different_submission_is_a_different_build(pool):
    first = pool.run("go", ADD["go"], stdin="1 2\n", limits=LIMITS)
    second = pool.run("go", ADD["go"].replace("a + b", "a * b"), stdin="3 4\n", limits=LIMITS)
    assert (first.stdout, second.stdout) == ("3\n", "12\n")


def test_java_gets_a_heap_from_the_runs_memory_not_the_hosts(pool):
    code = "public class Main { public static void main(String[] a) { System.out.println(Runtime.getRuntime().maxMemory() >> 20); } }\n"
    result = pool.run("java", code, limits=QUICK.with_(timeout_s=10.0, memory_mb=200))
    assert result.verdict == "ok", result.stderr
    assert int(result.stdout) <= 150


def test_go_gets_a_soft_memory_limit_and_few_threads(pool):
    code = 'package main\n\nimport (\n\t"fmt"\n\t"os"\n)\n\nfunc main() {\n\tfmt.Println(os.Getenv("GOMAXPROCS"), os.Getenv("GOMEMLIMIT"))\n}\n'
    result = pool.run("go", code, limits=QUICK.with_(timeout_s=10.0, memory_mb=300))
    assert result.stdout == "2 300MiB\n", result.stderr


@pytest.fixture(scope="module")
def rlimited() -> Iterator[SandboxPool]:
    pool = SandboxPool(SandboxSettings(concurrency=1, memory_limit="rlimit"))
    yield pool
    pool.close()


@pytest.mark.parametrize("lang", LANGS)
def test_every_runtime_starts_under_the_address_space_fallback(rlimited, lang):
    """Where no memory cgroup can be made, memory is RLIMIT_AS, which counts what the JVM, Go and V8
    reserve and never use: each language declares that reservation, and still builds and runs."""
    result = rlimited.run(lang, ADD[lang], stdin="20 22\n", limits=LIMITS)
    assert (result.verdict, result.stdout) == ("ok", "42\n"), result.stderr[-500:]
    assert result.details["memory_limit"] == "rlimit"
