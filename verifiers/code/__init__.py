"""The ``code`` verifier and its trusted half: everything that decides whether a program passed.

The sandbox (:mod:`rewardhub.sandbox`) runs programs and says what happened; this package decides
what that means, in the service's process, where the program cannot reach. It reaches the sandbox
only through the sandbox's public face (``tests/test_layering.py`` holds it to that). A tour:

- ``verifier``: :class:`CodeVerifier`, a sample's way: read the reference, pick the code block and
  its language, run the tests in one job in the sandbox (batched, or a run each; what goes in of a
  test is never its expected value), answer with the Result; its ``Config`` is in ``config``;
- ``outcomes``: what a run means: each test's outcome against the expected value, the sample's Result;
- ``session``: the tests run in a live session of the caller's, through :mod:`rewardhub.sessions`;
- ``testcases``: the data sets' test formats read into one list of tests (with ``lcb``, the
  LiveCodeBench private tests read without running a pickle);
- ``asserts``: assert-style tests split so their expected values never enter the sandbox;
- ``compare``: outputs and values compared here, never inside;
- ``checkers``: special judges (testlib's way) for problems with several right answers, and the
  session in which one judges the outputs left to it.
"""

from .verifier import CodeVerifier, last_code_block

__all__ = ["CodeVerifier", "last_code_block"]
