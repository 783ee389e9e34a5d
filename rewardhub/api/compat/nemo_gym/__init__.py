"""NeMo-Gym's resources-server protocol (:mod:`.routes`), its verify requests read as samples
(:mod:`.convert`) and its metrics aggregated as NeMo-Gym aggregates them (:mod:`.metrics`)."""

from .routes import router

__all__ = ["router"]
