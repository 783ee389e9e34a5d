"""Health check of a rewardhub worker container: exit 0 when this host's worker answers a ping.

Reads the same REWARDHUB_* settings as the worker, so it asks the same broker.
"""

from __future__ import annotations

import socket
import sys

from rewardhub.execution.celery_app import create_celery_app
from rewardhub.settings import Settings


def main() -> int:
    app = create_celery_app(Settings.load())
    try:
        replies = app.control.inspect(timeout=5.0).ping() or {}
    except OSError as exc:
        print(f"broker unreachable: {exc}", file=sys.stderr)
        return 1
    finally:
        app.close()
    host = socket.gethostname()
    return 0 if any(name.endswith("@" + host) for name in replies) else 1


if __name__ == "__main__":
    raise SystemExit(main())
