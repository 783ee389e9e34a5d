"""The README and the guides in docs/ stay true to the code.

The README stays a page a newcomer finishes: the two commands first, at most 250 lines, a link to
every guide. Every code block of the README and the guides parses in its language, and a block
marked ``<!-- contract: NAME -->`` is read by a test that runs it. Every ``rewardhub`` command
line they show is accepted by rewardhub's own argument parser. Every relative link points at a
file that exists (and at a heading that exists, when it names one): files move, and a guide that
still names the old path fails here with its page and line.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml
from doc_blocks import REPO, Block, blocks, doc_blocks, pages

from rewardhub.cli import _parser

README = REPO / "README.md"
README_MAX_LINES = 250
README_HEAD = """\
# rewardhub

```bash
# 1. install and start the service (embedded default: local process pools, no broker, no GPU)
./scripts/install_system_deps.sh && python3 -m venv .venv && . .venv/bin/activate && pip install -e . && rewardhub serve
# 2. install everything and run the whole test suite (exactly what CI runs)
./.ci/run
```
"""

ALL_BLOCKS = [block for page in pages() for block in blocks(page)]
LINK = re.compile(r"\[[^\]]*\]\((?P<target>[^)\s]+)\)")
FENCED = re.compile(r"^```.*?^```[ \t]*$", re.DOTALL | re.MULTILINE)
INLINE_COMMAND = re.compile(r"`(?P<command>rewardhub [^`]+)`")
SHELL_OPERATORS = {"&&", "||", "|", ";", "&", "(", ")"}


def _bash(body: str) -> None:
    run = subprocess.run(["bash", "-n"], input=body, capture_output=True, text=True)
    if run.returncode != 0:
        raise SyntaxError(run.stderr.strip())


def _yaml(body: str) -> None:
    list(yaml.safe_load_all(body))


def _unchecked(body: str) -> None:
    """Plain text (a folder map, an output sample): nothing to parse."""


PARSERS = {"bash": _bash, "python": ast.parse, "json": json.loads, "yaml": _yaml, "text": _unchecked}


def test_the_readme_opens_with_the_two_commands_and_stays_short() -> None:
    text = README.read_text()
    assert text.startswith(README_HEAD), "README.md must open with its title and the two commands, as they are"
    assert len(text.splitlines()) <= README_MAX_LINES, "README.md grew past 250 lines: move the detail to a guide"


def test_the_readme_links_every_guide() -> None:
    linked = {match["target"].partition("#")[0] for match in LINK.finditer(_prose(README.read_text()))}
    missing = [f"docs/{page.name}" for page in pages()[1:] if f"docs/{page.name}" not in linked]
    assert not missing, f"README.md's 'Where to read on' does not link {missing}"


@pytest.mark.parametrize("block", ALL_BLOCKS, ids=Block.where)
def test_every_code_block_parses(block: Block) -> None:
    assert block.lang in PARSERS, f"{block.where()}: fence language {block.lang!r}; use one of {sorted(PARSERS)}"
    try:
        PARSERS[block.lang](block.body)
    except (SyntaxError, ValueError, yaml.YAMLError) as exc:
        pytest.fail(f"{block.where()}: the {block.lang} block does not parse: {exc}")


def test_every_marked_block_is_read_by_a_test() -> None:
    this = Path(__file__).resolve()
    sources = "\n".join(
        path.read_text()
        for path in (REPO / "tests").rglob("*.py")
        if path.resolve() not in {this, REPO / "tests" / "doc_blocks.py"}
    )
    unread = [
        f"{block.where()} ({name})"
        for name, block in doc_blocks().items()
        if not re.search(rf'doc_\w+\("{name}"', sources)
    ]
    assert not unread, f"blocks marked for a test that no test reads: {unread}"


def test_every_rewardhub_command_line_is_accepted_by_its_parser(capsys: pytest.CaptureFixture[str]) -> None:
    refused = []
    for where, argv in _block_commands():
        try:
            _parser().parse_args(argv)
        except SystemExit:
            refused.append(f"{where}: rewardhub {shlex.join(argv)}: {capsys.readouterr().err.strip().splitlines()[-1]}")
    assert not refused, "\n".join(refused)


def test_every_rewardhub_command_named_in_the_text_exists() -> None:
    """A command named in running text (`rewardhub audit`, `rewardhub serve --api-workers N`) need not
    be complete, but its subcommands and its flags must be rewardhub's."""
    unknown = []
    for where, argv in _inline_commands():
        parser, words = _parser(), list(argv)
        while words and not words[0].startswith("-") and (choices := _subcommands(parser)):
            if words[0] not in choices:
                unknown.append(f"{where}: rewardhub {shlex.join(argv)}: no subcommand {words[0]!r}")
                break
            parser = choices[words.pop(0)]
        flags = [word.partition("=")[0] for word in words if word.startswith("-")]
        unknown += [f"{where}: rewardhub {shlex.join(argv)}: no flag {f}" for f in flags if f not in _flags(parser)]
    assert not unknown, "\n".join(unknown)


def test_every_relative_link_resolves() -> None:
    broken = []
    for page in pages():
        text = page.read_text()
        for match in LINK.finditer(_prose(text)):
            target = match["target"]
            if re.match(r"[a-z]+:", target):
                continue  # http(s), mailto: not checked here
            path, _, anchor = target.partition("#")
            resolved = (page.parent / path).resolve() if path else page
            where = f"{page.relative_to(REPO)}:{text.count(chr(10), 0, match.start()) + 1}"
            if not resolved.is_relative_to(REPO) or not resolved.exists():
                broken.append(f"{where}: {target} (no such file)")
            elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
                broken.append(f"{where}: {target} (no such heading in {resolved.name})")
    assert not broken, "\n".join(broken)


def _prose(text: str) -> str:
    """The page with its fenced blocks blanked (line numbers kept): links and headings live outside them."""
    return FENCED.sub(lambda match: "\n" * match.group().count("\n"), text)


def _anchors(page: Path) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as hyphens."""
    headings = re.findall(r"^#{1,6} +(.+?) *$", _prose(page.read_text()), re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}


def _block_commands() -> list[tuple[str, list[str]]]:
    """Each ``rewardhub ...`` command of the bash blocks, as its argument list."""
    return [
        (block.where(), command)
        for block in ALL_BLOCKS
        if block.lang == "bash"
        for command in _commands_of(block.body.replace("\\\n", " "))
    ]


def _inline_commands() -> list[tuple[str, list[str]]]:
    """Each ``rewardhub ...`` named in an inline code span of the running text."""
    found = []
    for page in pages():
        text = _prose(page.read_text())
        for match in INLINE_COMMAND.finditer(text):
            where = f"{page.relative_to(REPO)}:{text.count(chr(10), 0, match.start()) + 1}"
            found += [(where, command) for command in _commands_of(match["command"])]
    return found


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    actions = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    return dict(actions[0].choices) if actions else {}


def _flags(parser: argparse.ArgumentParser) -> set[str]:
    return {flag for action in parser._actions for flag in action.option_strings}


def _commands_of(script: str) -> list[list[str]]:
    """The argument lists of every simple command of ``script`` that runs ``rewardhub``."""
    commands = []
    for line in script.splitlines():
        if not re.search(r"(^|[\s;&|(])rewardhub(\s|$)", line):
            continue  # a line without the command (it may be part of a quoted string over several lines)
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        words: list[str] = []
        for token in [*lexer, ";"]:
            if token not in SHELL_OPERATORS:
                words.append(token)
                continue
            while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
                words.pop(0)  # VAR=value before the command
            if words[:1] == ["rewardhub"]:
                commands.append(words[1:])
            words = []
    return commands
