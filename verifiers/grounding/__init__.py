"""The ``grounding`` verifier: visual grounding answers (points, boxes, detections) judged by rule.

Modules, in the order an answer flows through them: ``answers`` (read points, boxes and labelled
boxes out of the text), ``coordinates`` (pixels, thousandths or normalised, into the unit square),
``geometry`` (point-in-box, point-in-polygon, IoU, NeMo-Gym's click reward, pure functions),
``detection`` (COCO mAP through ``pycocotools``), ``verifier`` (the :class:`GroundingVerifier` the
registry loads).
"""

from .answers import Detection, answer_text, read_detections, read_shapes
from .coordinates import normalise
from .detection import coco_map
from .geometry import box_iou, click_reward, point_in_box, point_in_polygon
from .verifier import GroundingReference, GroundingVerifier

__all__ = [
    "Detection",
    "GroundingReference",
    "GroundingVerifier",
    "answer_text",
    "box_iou",
    "click_reward",
    "coco_map",
    "normalise",
    "point_in_box",
    "point_in_polygon",
    "read_detections",
    "read_shapes",
]
