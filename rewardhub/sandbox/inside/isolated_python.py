"""How ``python3`` starts in a session's test command: the system's interpreter with the session's hooks off.

A session's calls can leave files that a plain ``python3`` would run before the tests: a
``usercustomize.py``, ``sitecustomize.py`` or ``.pth`` file in the user site (``HOME`` is the
session's scratch), or a ``unittest.py`` beside the tests that ``python3 -m unittest`` would import
instead of the standard library's. So the test command's ``python3`` and ``python``
(:func:`rewardhub.sessions.sandbox.test_environment` puts them first on a fixed ``PATH``)
start the system interpreter by absolute path as ``python -I`` (no user site, no ``PYTHON*``
variables, nothing prepended to ``sys.path``) running this file, which then does what ``python``
would have done with the rest of the command line: ``-c CODE``, ``-m MODULE`` or ``SCRIPT``, with
the folder that ``python`` would have put first on ``sys.path`` (the working directory, or the
script's folder) put *last*. The standard library and the installed packages are found first;
the tests' own modules and the session's solution are still found, by any name those do not take.

Standard library only: this file runs inside the sandbox.
"""

import os
import runpy
import sys


def main(args):
    if not args or args[0] == "-":  # the program on stdin, as python reads it
        sys.argv = args or [""]
        sys.path.append(os.getcwd())
        source = sys.stdin.read()
        runpy._run_code(compile(source, "<stdin>", "exec"), vars(sys.modules["__main__"]), mod_name="__main__")
        return
    if args[0] == "-c" and len(args) > 1:
        sys.argv = ["-c", *args[2:]]
        sys.path.append(os.getcwd())
        runpy._run_code(compile(args[1], "<string>", "exec"), vars(sys.modules["__main__"]), mod_name="__main__")
        return
    if args[0] == "-m" and len(args) > 1:
        sys.argv = ["-m", *args[2:]]
        sys.path.append(os.getcwd())
        runpy._run_module_as_main(args[1])
        return
    script = args[0]
    sys.argv = list(args)
    sys.path.append(os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")


main(sys.argv[1:])
