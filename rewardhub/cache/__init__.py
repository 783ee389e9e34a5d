"""The reward cache: verdicts by content address, so a duplicate completion is judged once.

``keys`` makes addresses (verdict key + the sample fields the verifier reads), ``entries`` what
is stored and the checks before it is served, ``backends`` where it lives (memory, sqlite,
Redis), ``reward_cache`` the counted front the scorer consults in the parent process, for local
and Celery mode alike.
"""

from rewardhub.cache.backends import Backend, MemoryBackend, RedisBackend, SqliteBackend
from rewardhub.cache.entries import CorruptEntry, decode_entry, encode_entry
from rewardhub.cache.keys import cache_key, sample_digest
from rewardhub.cache.reward_cache import CacheStats, RewardCache, cache_url, open_cache

__all__ = [
    "Backend",
    "CacheStats",
    "CorruptEntry",
    "MemoryBackend",
    "RedisBackend",
    "RewardCache",
    "SqliteBackend",
    "cache_key",
    "cache_url",
    "decode_entry",
    "encode_entry",
    "open_cache",
    "sample_digest",
]
