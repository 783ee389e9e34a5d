"""COCO mAP of one image's detections, computed by ``pycocotools``' own ``COCOeval``.

The way ROLL's detection reward (after MiniMax's V-Triune) packs one answer: every gold label is a
category, the gold boxes its annotations, the predicted boxes with a known label the detections
(score 1 unless the answer gives one; a label the gold does not have cannot match and is dropped),
and ``stats[0]``, ``stats[1]`` or ``stats[2]`` (mAP over IoU 0.5:0.95, at 0.5, at 0.75; areas
"all", 100 detections) is the reward. Boxes arrive normalised and are drawn on a 1000 x 1000
canvas: IoU does not change under that scaling, and these statistics do not look at box sizes.
``pycocotools`` is imported when the first detection is scored, not before.
"""

from __future__ import annotations

import contextlib
import io
from collections.abc import Sequence

from .answers import Detection

__all__ = ["CANVAS", "coco_map"]

CANVAS = 1000.0
_STAT = {"map": 0, "map50": 1, "map75": 2}


def coco_map(gold: Sequence[Detection], predicted: Sequence[Detection], metric: str = "map") -> float:
    """COCO's mAP of ``predicted`` against ``gold`` (normalised xyxy boxes); 1.0 when both are empty."""
    if not gold:
        return 1.0 if not predicted else 0.0
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    categories = {label: index + 1 for index, label in enumerate(sorted({g.label for g in gold}))}
    truth = COCO()
    truth.dataset = {
        "images": [{"id": 1, "width": CANVAS, "height": CANVAS}],
        "categories": [{"id": cid, "name": label} for label, cid in categories.items()],
        "annotations": [
            {"id": i + 1, "image_id": 1, "category_id": categories[g.label], "iscrowd": 0, **_xywh(g.box)}
            for i, g in enumerate(gold)
        ],
    }
    results = [
        {"image_id": 1, "category_id": categories[p.label], "bbox": _xywh(p.box)["bbox"], "score": p.score}
        for p in predicted
        if p.label in categories
    ]
    if not results:
        return 0.0
    with contextlib.redirect_stdout(io.StringIO()):  # COCO reports its progress on stdout
        truth.createIndex()
        evaluation = COCOeval(truth, truth.loadRes(results), "bbox")
        evaluation.evaluate()
        evaluation.accumulate()
        evaluation.summarize()
    # rounded at 12 places: COCO's mean over 101 recall points makes a perfect answer 0.9999999999999998
    return round(max(0.0, float(evaluation.stats[_STAT[metric]])), 12)


def _xywh(box: tuple[float, ...]) -> dict[str, object]:
    x1, y1, x2, y2 = (v * CANVAS for v in box)
    x1, x2, y1, y2 = min(x1, x2), max(x1, x2), min(y1, y2), max(y1, y2)
    return {"bbox": [x1, y1, x2 - x1, y2 - y1], "area": (x2 - x1) * (y2 - y1)}
