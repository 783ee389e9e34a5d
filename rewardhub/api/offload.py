"""Where the routes run blocking session operations: threads of their own, off the event loop.

A session's call blocks its thread for as long as the program runs (up to minutes), so these
threads are not the event loop's default executor, which the rest of the service shares.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Any

__all__ = ["off_loop"]

_threads = ThreadPoolExecutor(max_workers=64, thread_name_prefix="session")


async def off_loop(work: Any, *args: Any) -> Any:
    """``work(*args)`` in a session thread, awaited."""
    return await asyncio.get_running_loop().run_in_executor(_threads, work, *args)
