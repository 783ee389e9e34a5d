"""abstain-bench's subject: one artifact file scored by the service, the answer as an exit code.

abstain-bench runs a shell command per case (``... {input}``) and reads its exit code: 0 claims the
artifact passed, anything else does not. This file is that command: it sends the file's text as the
response of one sample to ``POST /v1/score`` and exits 0 when the verdict is ``ok`` with a score of
at least 1, 1 when it is lower, 2 when the service could not judge (abstain-bench's "not checked").

It is run by path with the standard library only (``python -I probe_subject.py URL SPEC REFERENCE FILE``),
so each of the corpus's cases costs an interpreter's start, not rewardhub's imports. The service's
key, if it has keys, comes in the environment (``REWARDHUB_PROBE_AUTHORIZATION``), not on the command line.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.request


def main(argv: list[str]) -> int:
    url, spec, reference, path = argv
    with open(path, encoding="utf-8", errors="replace") as artifact:
        response = artifact.read()
    body = {"verifier": json.loads(spec), "samples": [{"response": response, "reference": json.loads(reference)}]}
    headers = {"content-type": "application/json"}
    if os.environ.get("REWARDHUB_PROBE_AUTHORIZATION"):
        headers["authorization"] = os.environ["REWARDHUB_PROBE_AUTHORIZATION"]
    request = urllib.request.Request(url.rstrip("/") + "/v1/score", data=json.dumps(body).encode(), headers=headers)
    with urllib.request.urlopen(request, timeout=60) as answer:
        [result] = json.load(answer)["results"]
    if result["status"] != "ok":
        return 2
    return 0 if result["score"] >= 1.0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
