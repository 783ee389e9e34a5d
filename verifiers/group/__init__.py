"""Group verifiers: rewards that judge a sample against the other samples drawn for its prompt.

They run after the per-sample verifiers of a request, over all samples sharing a ``group``
(a sample without one is a group of its own), and see only those samples: per-sample scores reach
them through ``metadata`` when a trainer puts them there.
"""
