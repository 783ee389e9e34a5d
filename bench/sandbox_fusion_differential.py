"""Does rewardhub's ``POST /run_code`` answer as SandboxFusion's own server does, beyond its runner tests?

A generated corpus of ``/run_code`` requests over SandboxFusion's behaviour space, for every language
both servers accept (python, cpp, bash, nodejs, java; go and typescript too), each behaviour in
several seeded variants: stdout, stdin, exit codes, stderr, runtime errors and signals, compile
errors, run and compile timeouts, large stdout, files sent in and fetched back (and a fetch of a
file that is not there), empty code, unicode in code, stdin and output; plus languages one side
does not run, and programs that look at the host. Each request goes to SandboxFusion's released
server (its shipped local config, started from ``bench/peers/sandbox_fusion/run_server.sh``) and
to a real ``rewardhub serve``, and the bench compares what a client reads:

  status             exact
  compile_status     ``compile_result.status`` (``None`` when there is no build step), exact
  run_status         ``run_result.status`` (``None`` when nothing ran), exact
  return_code        ``run_result.return_code``, else ``compile_result.return_code``, exact
  stdout             ``run_result.stdout``, exact (compile output for a failed build)
  stderr             the failing step's stderr, exact once each side's name for the program's own
                     source file (SandboxFusion: ``/tmp/tmpXXXX/tmpYYYY.py``; rewardhub:
                     ``/tmp/main.py``) is replaced by ``<source>``
  files              the fetched files, exact (names and base64 contents)
  http               the HTTP status, exact

Named conventions (a disagreement there is on purpose, counted apart, never silent):

  isolation          the program reads the host or the network: SandboxFusion's local config runs
                     with ``isolation: none``; rewardhub's sandbox must not agree
  peer_cannot_run    SandboxFusion's runtime for the language is not on this machine (its Go
                     runner's go.mod needs Go >= 1.22's ``toolchain`` directive; TypeScript needs
                     its ``tsx`` from npm): it answers a build or ``command not found`` failure
  not_installed      a language SandboxFusion knows that neither server has installed (php, lua,
                     ...): SandboxFusion runs ``php`` and reports its shell's exit 127 as
                     ``Failed``; rewardhub says ``SandboxError`` and which languages run here,
                     so that a trainer masks the sample instead of scoring it 0
  large_output       stdout of hundreds of KB: SandboxFusion's runner takes its program's output
                     from the pipe once, without waiting, after the program exits (at most 1 MiB,
                     ``get_output_non_blocking``); seen here: of 300,000 characters 219,264 came
                     back, 1.5 MB ended ``TimeLimitExceeded`` (480 KB too, in an earlier run).
                     rewardhub returns it all (up to 4 MiB, then stops the program); it must not cut or
                     hang a program to agree. Below 100 KB (``large_stdout``) both agree
  timing             a run or build that ends in a timeout: what was written before the kill (a
                     buffered stream) is not compared, the statuses are (in one of three runs
                     rewardhub's 0.2 s C++ build finished in time: it keeps a build per distinct
                     submission, and the machine's load varied; which it was is not known). The builds out of
                     time are sent last: after one, SandboxFusion's local server was seen to
                     finish no later command at all (every one ``TimeLimitExceeded``)
  undecodable_output stdout that is not UTF-8: SandboxFusion answers the text
                     ``[DecodeError] ...`` instead of the output; rewardhub decodes with U+FFFD

The one disagreement left outside them (seed 0, 2 variants: 121 of 122 requests agree on every
field): Python recursing to depth 100,000 (``sys.setrecursionlimit(100000)``) ends with
``RecursionError``, exit 1, in SandboxFusion (and bare, in 0.2 s) but runs past its 10 s in
rewardhub's sandbox (depth 50,000 takes 4.8 s there): ``TimeLimitExceeded``. It is the sandbox's
speed on deep stacks, not the protocol, and is left as found.

    bench/peers/setup_sandbox_fusion.sh [SOURCE]   # once: SandboxFusion's server, git-ignored
    python bench/sandbox_fusion_differential.py [--seed 0] [--variants 2] [--sandbox-fusion-url URL]
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import RESULTS  # noqa: E402
from _serve import start_service  # noqa: E402
from code_verifier_speed import FusionServer  # noqa: E402

FIELDS = ("http", "status", "compile_status", "run_status", "return_code", "stdout", "stderr", "files")
CONVENTIONS = {
    "isolation": "SandboxFusion's local config runs with isolation: none; the program reads the host or the network",
    "peer_cannot_run": "SandboxFusion's runtime for this language is missing on this machine",
    "not_installed": "neither server runs the language: SandboxFusion reports exit 127 as Failed, rewardhub SandboxError",
    "large_output": "stdout of hundreds of KB: SandboxFusion cuts it short or the run ends TimeLimitExceeded",
    "timing": "a timeout: what a stream held before the kill is not compared",
    "undecodable_output": "output that is not UTF-8: SandboxFusion answers '[DecodeError] ...', rewardhub decodes with U+FFFD",
}
PEER_CANNOT_RUN = ("go", "typescript")
NOT_INSTALLED = ("php", "lua", "ruby", "perl", "R", "julia", "swift", "racket", "scala", "csharp")
WORDS = ("alpha", "beta", "gamma", "δέλτα", "ε", "日本語", "emoji 🎲", "tab\there", "quote'\"", "back\\slash")


@dataclass
class Case:
    id: str
    behaviour: str
    language: str
    request: dict[str, Any]
    convention: str | None = None
    skip_fields: tuple[str, ...] = field(default=())


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


# --- the programs, one table per language: behaviour -> source (format fields from the seed) -----

PYTHON = {
    "print": "print({text!r})",
    "stdin_sum": "import sys\nprint(sum(int(x) for x in sys.stdin.read().split()))",
    "stdin_echo": "import sys\nsys.stdout.write(sys.stdin.read()[::-1])",
    "exit_code": "print('bye')\nimport sys\nsys.exit({code})",
    "stderr": "import sys\nprint('out')\nsys.stderr.write({text!r} + '\\n')",
    "runtime_error": "print('before')\nraise ValueError({text!r})",
    "division": "print(1 // {zero})",
    "compile_error": "def f(:\n    return {code}",
    "large_stdout": "for i in range({lines}):\n    print(i, 'x' * {width})",
    "huge_stdout": "import sys\nsys.stdout.write(('x' * 99 + '\\n') * {huge})",
    "run_timeout": "import time\nprint('start', flush=True)\nwhile True:\n    time.sleep(0.01)",
    "file_in": "print(open('data/in.txt', encoding='utf-8').read()[::-1])",
    "file_out": "open('out.txt', 'w', encoding='utf-8').write({text!r} * {code})",
    "empty": "",
    "unicode_code": "名前 = {text!r}\nprint(名前, len(名前))",
    "invalid_utf8": "import sys\nsys.stdout.buffer.write(b'ok \\xff\\xfe {code}\\n')",
    "recursion": "import sys\nsys.setrecursionlimit(100000)\ndef f(n):\n    return f(n + 1)\nf(0)",
    "signal": "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)",
}
CPP = {
    "print": "#include <cstdio>\nint main(){{ std::puts({ctext}); }}",
    "stdin_sum": "#include <iostream>\nint main(){{ long long s=0,x; while(std::cin>>x) s+=x; std::cout<<s<<std::endl; }}",
    "stdin_echo": "#include <iostream>\n#include <string>\n#include <algorithm>\nint main(){{ std::string s((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>()); std::cout<<s.size()<<'\\n'<<s; }}",
    "exit_code": '#include <cstdio>\nint main(){{ std::puts("bye"); return {code}; }}',
    "stderr": '#include <cstdio>\nint main(){{ std::puts("out"); std::fprintf(stderr, "%s\\n", {ctext}); }}',
    "runtime_error": '#include <cstdio>\n#include <cstdlib>\nint main(){{ std::puts("before"); std::fflush(stdout); std::abort(); }}',
    "division": '#include <cstdio>\nint main(){{ volatile int z = {zero}; std::printf("%d\\n", 1 / z); }}',
    "compile_error": "int main(){{ return {code} }}",
    "large_stdout": "#include <cstdio>\n#include <string>\nint main(){{ for(int i=0;i<{lines};i++) std::printf(\"%d %s\\n\", i, std::string({width}, 'x').c_str()); }}",
    "run_timeout": '#include <cstdio>\nint main(){{ std::puts("start"); std::fflush(stdout); for(;;){{}} }}',
    "compile_timeout": "template<int N> struct F {{ static const long v = F<N-1>::v + F<N-2>::v; }};\ntemplate<> struct F<0> {{ static const long v = 0; }};\ntemplate<> struct F<1> {{ static const long v = 1; }};\nint main(){{ return F<{code}>::v == 0; }}",
    "file_in": '#include <fstream>\n#include <iostream>\n#include <string>\nint main(){{ std::ifstream f("data/in.txt"); std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>()); std::cout<<s.size()<<"\\n"<<s; }}',
    "file_out": '#include <fstream>\nint main(){{ std::ofstream f("out.txt"); for(int i=0;i<{code};i++) f<<{ctext}; }}',
    "empty": "",
    "unicode_code": '#include <cstdio>\nint main(){{ const char* s = {ctext}; std::printf("%s\\n", s); }}',
    "signal": "#include <csignal>\nint main(){{ std::raise(SIGSEGV); }}",
}
BASH = {
    "print": "printf '%s\\n' {stext}",
    "stdin_sum": "s=0; for x in $(cat); do s=$((s + x)); done; echo $s",
    "stdin_echo": "cat; echo",
    "exit_code": "echo bye\nexit {code}",
    "stderr": "echo out\necho {stext} >&2",
    "runtime_error": "echo before\nno_such_command_{code}",
    "division": "echo $((1 / {zero}))",
    "compile_error": "if then fi {code}",
    "large_stdout": "for ((i=0;i<{lines};i++)); do printf '%d %s\\n' $i $(printf 'x%.0s' $(seq {width})); done",
    "run_timeout": "echo start\nwhile true; do :; done",
    "file_in": "wc -l < data/in.txt; cat data/in.txt",
    "file_out": "for i in $(seq {code}); do printf '%s' {stext}; done > out.txt",
    "empty": "",
    "unicode_code": '名={stext}\necho "$名" ${{#名}}',
    "signal": "kill -TERM $$",
}
NODE = {
    "print": "console.log({jtext});",
    "stdin_sum": "const t = require('fs').readFileSync(0, 'utf8').split(/\\s+/).filter(Boolean);\nconsole.log(t.reduce((a, x) => a + Number(x), 0));",
    "stdin_echo": "process.stdout.write([...require('fs').readFileSync(0, 'utf8')].reverse().join(''));",
    "exit_code": "console.log('bye');\nprocess.exit({code});",
    "stderr": "console.log('out');\nconsole.error({jtext});",
    "runtime_error": "console.log('before');\nthrow new TypeError({jtext});",
    "division": "console.log(1 / {zero});",
    "compile_error": "function f( {{ return {code}; }}",
    "large_stdout": "const w = 'x'.repeat({width}); const out = [];\nfor (let i = 0; i < {lines}; i++) out.push(i + ' ' + w);\nconsole.log(out.join('\\n'));",
    "run_timeout": "console.log('start');\nwhile (true) {{}}",
    "file_in": "const s = require('fs').readFileSync('data/in.txt', 'utf8');\nconsole.log([...s].reverse().join(''));",
    "file_out": "require('fs').writeFileSync('out.txt', {jtext}.repeat({code}));",
    "empty": "",
    "unicode_code": "const 名前 = {jtext};\nconsole.log(名前, [...名前].length);",
    "recursion": "function f(n) {{ return f(n + 1) + 1; }}\nf(0);",
}
JAVA = {
    "print": "public class Main {{ public static void main(String[] a) {{ System.out.println({jtext}); }} }}",
    "stdin_sum": "import java.util.*;\npublic class Main {{ public static void main(String[] a) {{ Scanner s = new Scanner(System.in); long t = 0; while (s.hasNextLong()) t += s.nextLong(); System.out.println(t); }} }}",
    "exit_code": 'public class Main {{ public static void main(String[] a) {{ System.out.println("bye"); System.exit({code}); }} }}',
    "stderr": 'public class Main {{ public static void main(String[] a) {{ System.out.println("out"); System.err.println({jtext}); }} }}',
    "runtime_error": 'public class Main {{ public static void main(String[] a) {{ System.out.println("before"); assert {code} < 0 : "negative"; }} }}',
    "division": "public class Main {{ public static void main(String[] a) {{ int z = {zero}; System.out.println(1 / z); }} }}",
    "compile_error": "public class Main {{ public static void main(String[] a) {{ int x = {code} }} }}",
    "run_timeout": 'public class Main {{ public static void main(String[] a) {{ System.out.println("start"); while (true) {{}} }} }}',
    "file_out": 'import java.nio.file.*;\npublic class Main {{ public static void main(String[] a) throws Exception {{ Files.writeString(Path.of("out.txt"), {jtext}.repeat({code})); }} }}',
}
GO = {
    "print": 'package main\n\nimport "fmt"\n\nfunc main() {{ fmt.Println({jtext}) }}',
    "exit_code": 'package main\n\nimport (\n\t"fmt"\n\t"os"\n)\n\nfunc main() {{ fmt.Println("bye"); os.Exit({code}) }}',
    "compile_error": "package main\n\nfunc main() {{ x := {code} }}",
}
TYPESCRIPT = {
    "print": "const s: string = {jtext};\nconsole.log(s);",
    "exit_code": "console.log('bye');\nprocess.exit({code});",
}
PROGRAMS = {
    "python": PYTHON,
    "cpp": CPP,
    "bash": BASH,
    "nodejs": NODE,
    "java": JAVA,
    "go": GO,
    "typescript": TYPESCRIPT,
}
ISOLATION = {
    "python": {
        "cwd": "import os\nprint(os.getcwd())",
        "hostname_file": "print(open('/etc/hostname').read().strip() != '')",
        "network": "import socket\ns = socket.create_connection(('127.0.0.1', {port}), timeout=2)\nprint('connected')",
        "processes": "import os\nprint(len([p for p in os.listdir('/proc') if p.isdigit()]) > 5)",
        "home": "import os\nprint(sorted(os.listdir('/root'))[:3])",
    },
    "bash": {"cwd": "pwd", "processes": "ls /proc | grep -c '^[0-9]'"},
}


def _c_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a JSON string literal is a valid C, JS and Java one here


def _shell_string(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _values(rng: random.Random, variant: int) -> dict[str, Any]:
    text = rng.choice(WORDS) + " " + rng.choice(WORDS)
    return {
        "text": text,
        "ctext": _c_string(text),
        "jtext": _c_string(text),
        "stext": _shell_string(text),
        "code": (0, 1, 2, 3, 42, 127, 255)[variant % 7] if variant < 7 else rng.randint(0, 255),
        "zero": 0,
        "lines": (10, 500, 4000)[variant % 3],  # at most 96 KiB: below where SandboxFusion stops reading
        "huge": (3000, 15000)[variant % 2],  # 300 KB and 1.5 MB
        "width": rng.choice((1, 5, 17)),
    }


def _stdin(rng: random.Random, behaviour: str) -> str | None:
    if behaviour == "stdin_sum":
        return " ".join(str(rng.randint(-(10**6), 10**6)) for _ in range(rng.randint(0, 40))) + "\n"
    if behaviour == "stdin_echo":
        return "\n".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6))) + "\n"
    return None


def _request(language: str, behaviour: str, source: str, rng: random.Random, values: dict[str, Any]) -> dict[str, Any]:
    request: dict[str, Any] = {"language": language, "code": source, "run_timeout": 10, "compile_timeout": 30}
    stdin = _stdin(rng, behaviour)
    if stdin is not None:
        request["stdin"] = stdin
    if behaviour == "run_timeout":
        request["run_timeout"] = 1
    if behaviour == "compile_timeout":
        request["compile_timeout"] = 0.2
    if behaviour == "file_in":
        request["files"] = {"data/in.txt": b64("\n".join(rng.choice(WORDS) for _ in range(rng.randint(1, 5))))}
    if behaviour == "file_out":
        request["fetch_files"] = ["out.txt", "missing.txt"]
    return request


def corpus(seed: int = 0, variants: int = 3, peer_port: int = 0) -> list[Case]:
    """The generated requests, the same for a seed."""
    rng = random.Random(seed)
    cases: list[Case] = []
    for language, table in PROGRAMS.items():
        for behaviour, template in table.items():
            once = ("run_timeout", "compile_timeout", "empty", "signal", "recursion")
            count = 1 if behaviour in once else 2 if behaviour == "huge_stdout" else variants
            for variant in range(count):
                values = _values(rng, variant)
                source = template.format(**values)
                request = _request(language, behaviour, source, rng, values)
                case = Case(f"{language}/{behaviour}/{variant}", behaviour, language, request)
                if language in PEER_CANNOT_RUN:
                    case.convention = "peer_cannot_run"
                elif behaviour in ("run_timeout", "compile_timeout"):
                    case.convention, case.skip_fields = "timing", ("stdout", "stderr")
                elif behaviour == "invalid_utf8":
                    case.convention = "undecodable_output"
                elif behaviour == "huge_stdout":
                    case.convention = "large_output"
                cases.append(case)
    for language, table in ISOLATION.items():
        for behaviour, template in table.items():
            source = template.format(port=peer_port)
            cases.append(Case(f"{language}/host_{behaviour}/0", "host_" + behaviour, language,
                              {"language": language, "code": source}, convention="isolation"))  # fmt: skip
    for language in NOT_INSTALLED:
        cases.append(Case(f"{language}/not_installed/0", "not_installed", language,
                          {"language": language, "code": "print(1)"}, convention="not_installed"))  # fmt: skip
    # last: after a build it killed for time, SandboxFusion's local server (isolation none) stopped
    # finishing any later command here (each one TimeLimitExceeded), so the builds out of time go last
    cases.sort(key=lambda case: case.behaviour == "compile_timeout")
    cases.insert(
        0, Case("klingon/unknown_language/0", "unknown_language", "klingon", {"language": "klingon", "code": "x"})
    )
    return cases


# --- reading an answer as a client does ---------------------------------------------------------

_SOURCE = re.compile(
    r"(/tmp/tmp\w+/)?(/?tmp/)?\btmp\w{8}\.(py|cpp|sh|js|ts|go)\b|(/tmp/)?\bmain\.(py|cpp|sh|js|ts|go)\b"
)


def normalise_stderr(text: str | None) -> str | None:
    """Each side's name for the program's own source file becomes ``<source>``."""
    return None if text is None else _SOURCE.sub("<source>", text)


def reading(http_status: int, body: Any) -> dict[str, Any]:
    """What a client reads from one answer, field by field (see the module docstring)."""
    if http_status != 200 or not isinstance(body, dict):
        return {"http": http_status, **{f: None for f in FIELDS if f != "http"}}
    build, ran = body.get("compile_result"), body.get("run_result")
    step = ran or build or {}
    failing = ran if ran is not None else build
    return {
        "http": http_status,
        "status": body.get("status"),
        "compile_status": build and build.get("status"),
        "run_status": ran and ran.get("status"),
        "return_code": step.get("return_code"),
        "stdout": step.get("stdout"),
        "stderr": normalise_stderr((failing or {}).get("stderr")),
        "files": body.get("files") or {},
    }


def compare(peer: dict[str, Any], ours: dict[str, Any], skip: tuple[str, ...] = ()) -> list[str]:
    """The fields on which the two readings differ."""
    return [name for name in FIELDS if name not in skip and peer[name] != ours[name]]


def post(client: httpx.Client, url: str, request: dict[str, Any]) -> tuple[int, Any]:
    answer = client.post(f"{url}/run_code", json=request)
    try:
        return answer.status_code, answer.json()
    except ValueError:
        return answer.status_code, answer.text


# --- the run ------------------------------------------------------------------------------------


def differential(peer_url: str, ours_url: str, cases: list[Case], log: Callable[[str], None] = print) -> dict[str, Any]:
    """Every case to both servers, one at a time (peer first, then ours), and the tally."""
    rows = []
    with httpx.Client(timeout=120) as client:
        for case in cases:
            peer, ours = post(client, peer_url, case.request), post(client, ours_url, case.request)
            a, b = reading(*peer), reading(*ours)
            rows.append({"case": case, "peer": a, "ours": b, "differs": compare(a, b, case.skip_fields)})
    return tally(rows, log)


def tally(rows: list[dict[str, Any]], log: Callable[[str], None] = print) -> dict[str, Any]:
    agree: dict[str, list[int]] = {name: [0, 0] for name in FIELDS}
    classes: Counter[tuple[str, str, str]] = Counter()
    examples: dict[tuple[str, str, str], dict[str, Any]] = {}
    conventions: Counter[str] = Counter()
    for row in rows:
        case = row["case"]
        if case.convention is not None:
            conventions[case.convention] += 1
            for name in row["differs"]:
                key = (f"convention:{case.convention}", name, case.behaviour)
                classes[key] += 1
                examples.setdefault(key, _example(row, name))
            continue
        for name in FIELDS:
            if name in case.skip_fields:
                continue
            agree[name][1] += 1
            agree[name][0] += name not in row["differs"]
        for name in row["differs"]:
            key = ("disagreement", name, case.behaviour)
            classes[key] += 1
            examples.setdefault(key, _example(row, name))
    compared = sum(1 for row in rows if row["case"].convention is None)
    every = sum(1 for row in rows if row["case"].convention is None and not row["differs"])
    per_field = {name: (ok / n if n else 1.0) for name, (ok, n) in agree.items()}
    log(f"{len(rows)} requests; {compared} outside the named conventions, {every} of them agree on every field")
    for name in FIELDS:
        ok, n = agree[name]
        log(f"  {name:15s} {ok}/{n} = {per_field[name]:.4f}")
    log("named conventions (requests, fields that differ there):")
    for name, count in sorted(conventions.items()):
        differ = sum(v for (kind, _, _), v in classes.items() if kind == f"convention:{name}")
        log(f"  {name:16s} {count:4d} requests, {differ} field differences: {CONVENTIONS[name]}")
    log("every class of difference (kind, field, behaviour): count, first example")
    for key, count in sorted(classes.items()):
        log(
            f"  {key[0]:28s} {key[1]:14s} {key[2]:16s} {count:4d}  {json.dumps(examples[key], ensure_ascii=False)[:300]}"
        )
    return {
        "requests": len(rows),
        "compared": compared,
        "agree_on_every_field": every,
        "per_field": per_field,
        "per_field_counts": {name: {"agree": ok, "compared": n} for name, (ok, n) in agree.items()},
        "conventions": {name: {"requests": conventions[name], "what": CONVENTIONS[name]} for name in CONVENTIONS},
        "classes": [
            {"kind": k[0], "field": k[1], "behaviour": k[2], "count": c, "example": examples[k]}
            for k, c in sorted(classes.items())
        ],
    }


def _example(row: dict[str, Any], name: str) -> dict[str, Any]:
    def short(value: Any) -> Any:
        if isinstance(value, str) and len(value) > 200:
            return f"{value[:200]}... ({len(value)} characters)"
        return value

    return {"case": row["case"].id, "sandbox_fusion": short(row["peer"][name]), "rewardhub": short(row["ours"][name])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--variants", type=int, default=2, help="seeded variants of each behaviour")
    parser.add_argument("--sandbox-fusion-url", default="", help="a running SandboxFusion server (else started here)")
    args = parser.parse_args()
    peer = FusionServer(args.sandbox_fusion_url)
    if peer.url is None:
        raise SystemExit(f"SandboxFusion's server: {peer.why_not}")
    process, ours = start_service()
    lines: list[str] = []

    def log(line: str) -> None:
        print(line, flush=True)
        lines.append(line)

    try:
        cases = corpus(args.seed, args.variants, peer_port=int(peer.url.rsplit(":", 1)[1]))
        started = time.monotonic()
        report = differential(peer.url, ours, cases, log)
        log(f"seed {args.seed}, {args.variants} variants, {time.monotonic() - started:.0f} s")
    finally:
        process.terminate()
        process.wait(30)
        peer.close()
    RESULTS.mkdir(parents=True, exist_ok=True)
    report = {"seed": args.seed, "variants": args.variants, "sandbox_fusion_commit": "469de0845cb7", **report}
    (RESULTS / "sandbox_fusion_differential.json").write_text(json.dumps(report, indent=1, ensure_ascii=False))
    (RESULTS / "sandbox_fusion_differential.log").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
