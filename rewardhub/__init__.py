"""rewardhub: rewards and verifiers for reinforcement learning of language models, over HTTP.

The public surface: the vocabulary (:class:`Sample`, :class:`Result`, specs), the verifier base
class for plugins, the registry, and the clients.
"""

from rewardhub.client import AsyncRewardClient, ClientError, RewardClient
from rewardhub.registry import Registry
from rewardhub.types import Gate, Result, Sample, VerifierRef, VerifierSpec, WeightedSum
from rewardhub.verifier import Verifier, VerifierConfig

__version__ = "0.1.0"

__all__ = [
    "AsyncRewardClient",
    "ClientError",
    "Gate",
    "Registry",
    "Result",
    "RewardClient",
    "Sample",
    "Verifier",
    "VerifierConfig",
    "VerifierRef",
    "VerifierSpec",
    "WeightedSum",
    "__version__",
]
