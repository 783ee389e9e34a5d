"""What wraps every request, outermost first: request ids, run tags, metrics, the hot routes.

- :mod:`~rewardhub.api.middleware.request_id`: one id per request, in every log line and the answer;
- :mod:`~rewardhub.api.middleware.run_tag`: the training run a request belongs to;
- :class:`rewardhub.api.metrics.MetricsMiddleware`: the request counts and latencies (it lives with
  the metrics it writes);
- :mod:`~rewardhub.api.middleware.hot_routes`: ``POST /v1/score`` and ``/get_reward`` answered
  without FastAPI's router.

A request body's size limit is not a middleware: each route reads its body through
:func:`rewardhub.api.body.read_body` with the limit that route applies.
"""
