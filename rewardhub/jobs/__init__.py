"""``/v1/jobs``: jobs run in the API process that accepted them; records let any process answer their polls.

- :mod:`~rewardhub.jobs.store`: :class:`~rewardhub.jobs.store.JobStore`, this process's jobs and the
  answer to every poll (the 404s included);
- :mod:`~rewardhub.jobs.records`: what a record holds and the one protocol a journal speaks;
- :mod:`~rewardhub.jobs.journals`: which journal the settings give (``open_job_journal``);
- :mod:`~rewardhub.jobs.sqlite_journal` (one machine) and :mod:`~rewardhub.jobs.redis_journal`
  (several machines, and the Celery engine's records), both writing through the one thread of
  :mod:`~rewardhub.jobs.writer`; the Redis one knows who is alive through :mod:`~rewardhub.jobs.liveness`.

The package sits under the API and the execution engines: both import it, it imports neither
(``tests/test_layering.py``). An engine's part, such as Celery's liveness keys, lives in the engine
(:mod:`rewardhub.execution.celery_jobs`).
"""
