"""Imported last by the worker pools' fork server: importing it is the warm-up.

Only a fork server imports this module (:func:`rewardhub.execution.pool.fork_server_modules` puts
it last in the preload list); see :mod:`rewardhub.execution.warm_up` for what it does and why.
"""

from rewardhub.execution.warm_up import warm_fork_server

warm_fork_server()
