"""The operator's view: a live page of what the verifiers do, served by the service at ``GET /ui``.

- :mod:`rewardhub.ui.stats`: the figures as plain data, and how several processes add up;
- :mod:`rewardhub.ui.store`: where processes share them (memory, a sqlite file, Redis);
- :mod:`rewardhub.ui.recorder`: the score pipeline's observe hook, and the reader;
- :mod:`rewardhub.ui.workers`: Celery workers' own statistics;
- ``static/``: the page's only assets; :mod:`rewardhub.api.routes.ui` answers for the page and its JSON.
"""

from rewardhub.ui.recorder import StatsRecorder
from rewardhub.ui.store import open_store

__all__ = ["StatsRecorder", "open_store"]
