"""The rules of visual grounding as pure functions of coordinates in the unit square.

Every shape here is already normalised: ``x`` divided by the image width, ``y`` by its height
(:mod:`.coordinates` does that). Point-in-box and IoU do not change under that scaling, and
NeMo-Gym's click reward is defined on it.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["box_iou", "click_reward", "point_in_box", "point_in_polygon"]

Point = tuple[float, float]
Box = tuple[float, float, float, float]  # x1, y1, x2, y2


def point_in_box(point: Point, box: Box) -> bool:
    """Whether the point lies in the box, its edges included."""
    x, y = point
    x1, y1, x2, y2 = box
    return min(x1, x2) <= x <= max(x1, x2) and min(y1, y2) <= y <= max(y1, y2)


def point_in_polygon(point: Point, polygon: Sequence[Point]) -> bool:
    """Whether the point lies in the polygon (even-odd rule), its edges included.

    A ray cast to the right counts the edges it crosses: an odd count is inside. A point on an
    edge is inside, which the crossing count alone would leave to rounding.
    """
    x, y = point
    inside = False
    count = len(polygon)
    for i in range(count):
        (ax, ay), (bx, by) = polygon[i], polygon[(i + 1) % count]
        if _on_segment(x, y, ax, ay, bx, by):
            return True
        if (ay > y) != (by > y):
            crossing = ax + (y - ay) * (bx - ax) / (by - ay)
            if x < crossing:
                inside = not inside
    return inside


def _on_segment(x: float, y: float, ax: float, ay: float, bx: float, by: float) -> bool:
    cross = (bx - ax) * (y - ay) - (by - ay) * (x - ax)
    if abs(cross) > 1e-12 * max(1.0, abs(bx - ax) + abs(by - ay)):
        return False
    return min(ax, bx) - 1e-12 <= x <= max(ax, bx) + 1e-12 and min(ay, by) - 1e-12 <= y <= max(ay, by) + 1e-12


def box_iou(first: Box, second: Box) -> float:
    """Intersection over union of two boxes (continuous areas, as COCO's ``maskUtils.iou``)."""
    ax1, ay1, ax2, ay2 = _ordered(first)
    bx1, by1, bx2, by2 = _ordered(second)
    width = min(ax2, bx2) - max(ax1, bx1)
    height = min(ay2, by2) - max(ay1, by1)
    if width <= 0 or height <= 0:
        return 0.0
    overlap = width * height
    union = (ax2 - ax1) * (ay2 - ay1) + (bx2 - bx1) * (by2 - by1) - overlap
    return overlap / union if union > 0 else 0.0


def _ordered(box: Box) -> Box:
    x1, y1, x2, y2 = box
    return min(x1, x2), min(y1, y2), max(x1, x2), max(y1, y2)


def click_reward(predicted: Point, target: Point, max_dist: float = 0.15) -> tuple[float, float]:
    """NeMo-Gym ``gui_coordinate``'s reward and the distance: ``(1 - d / max_dist)^2``, 0 from ``max_dist`` on.

    ``d`` is the Euclidean distance in normalised coordinates; an exact hit scores 1.
    """
    # NeMo-Gym's own expression (not math.hypot), so that the last bit of a reward agrees too
    distance = ((predicted[0] - target[0]) ** 2 + (predicted[1] - target[1]) ** 2) ** 0.5
    if distance >= max_dist:
        return 0.0, distance
    return (1.0 - distance / max_dist) ** 2, distance
