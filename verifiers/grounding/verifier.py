"""``grounding``: visual grounding answers judged by rule; no image is needed.

Four rules, chosen by ``task`` (``auto`` picks by the reference, and for a lone target box by what
the response gives):

- ``point_in_region``: the predicted point lies in the target ``box`` or ``polygon`` (a mask as one
  or more polygons, ``polygons``); edges count as inside. 1 or 0.
- ``click``: NeMo-Gym gui_coordinate's reward ``(1 - d / max_dist)^2`` for the distance ``d`` to the
  target ``point`` in normalised coordinates, 0 from ``max_dist`` (0.15) on.
- ``box_iou``: the IoU of the predicted box with the target ``box``, as the reward or, with
  ``iou_threshold``, 1 at or above it and 0 below.
- ``detection``: COCO mAP (``pycocotools``) of a list of labelled boxes against the gold ``boxes``,
  ROLL's detection reward (after V-Triune), with its optional count penalty.

A box given where a point is asked for counts by its centre (ScreenSpot's convention). The formats
read are in :mod:`.answers`; coordinates may be normalised, thousandths or pixels, with the image
size in the reference (:mod:`.coordinates`). A response with no answer in it scores 0 with
``reason: no_answer``; a reference that cannot be read, or pixels without an image size, is status
``error`` naming the field. It does not look at the image, so it cannot tell a right box around
the wrong object from a right one.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from rewardhub.errors import VerifierError
from rewardhub.types import Result, Sample
from rewardhub.verifier import Verifier, VerifierConfig

from .answers import Detection, answer_text, point_tag, read_detections, read_shapes
from .coordinates import System, normalise
from .detection import coco_map
from .geometry import box_iou, click_reward, point_in_box, point_in_polygon

__all__ = ["GroundingReference", "GroundingVerifier"]

Task = Literal["auto", "point_in_region", "click", "box_iou", "detection"]


class GoldBox(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    bbox_2d: tuple[float, float, float, float] = Field(alias="bbox_2d")
    label: str = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _any_box_key(cls, data: Any) -> Any:
        if isinstance(data, dict) and "bbox_2d" not in data:
            for key in ("bbox", "box"):
                if key in data:
                    return {**data, "bbox_2d": data[key]}
        return data


class GroundingReference(BaseModel):
    """A sample's ``reference``: one target (point, box, polygon(s) or gold boxes) and its frame."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    point: tuple[float, float] | None = None
    box: tuple[float, float, float, float] | None = None
    polygon: list[tuple[float, float]] | None = None
    polygons: list[list[tuple[float, float]]] | None = None
    boxes: list[GoldBox] | None = None
    image_size: tuple[float, float] | None = None
    coordinates: System = "auto"
    max_dist: float | None = Field(None, gt=0)

    @model_validator(mode="before")
    @classmethod
    def _foreign_names(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if "point" not in data and "expected_answer" in data:  # NeMo-Gym gui_coordinate's row
            data["point"] = data.pop("expected_answer")
        if isinstance(data.get("point"), str):
            data["point"] = [part.strip() for part in data["point"].split(",")]
        if "image_size" not in data and "width" in data and "height" in data:
            data["image_size"] = [data["width"], data["height"]]
        for key in ("polygon",):
            if isinstance(data.get(key), list) and data[key] and not isinstance(data[key][0], list | tuple):
                data[key] = _pairs(data[key])  # COCO's flat [x1, y1, x2, y2, ...]
        if isinstance(data.get("polygons"), list):
            data["polygons"] = [_pairs(p) if p and not isinstance(p[0], list | tuple) else p for p in data["polygons"]]
        return data

    @field_validator("image_size")
    @classmethod
    def _positive(cls, size: tuple[float, float] | None) -> tuple[float, float] | None:
        if size is not None and min(size) <= 0:
            raise ValueError("width and height must be positive")
        return size

    @model_validator(mode="after")
    def _one_target(self) -> GroundingReference:
        given = [name for name in ("point", "box", "polygon", "polygons", "boxes") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError(f"give one target (point, box, polygon, polygons or boxes), not {given or 'none'}")
        for polygon in ([self.polygon] if self.polygon is not None else []) + (self.polygons or []):
            if len(polygon) < 3:
                raise ValueError("a polygon needs at least 3 vertices")
        return self

    def unit(self, values: tuple[float, ...]) -> tuple[float, ...]:
        return normalise(values, self.coordinates, self.image_size)


def _pairs(flat: list[Any]) -> list[list[Any]]:
    return [flat[i : i + 2] for i in range(0, len(flat) - 1, 2)]


class GroundingVerifier(Verifier):
    """Point-in-box or polygon, NeMo-Gym's click reward, box IoU and COCO detection mAP, from the answer text."""

    name = "grounding"
    version = "1"
    kind = "rule"
    exploit_corpus = "grounding"

    class Config(VerifierConfig):
        task: Task = Field(
            "auto",
            description="auto: detection for gold boxes, click for a point, point_in_region for a polygon, and for "
            "one box point_in_region or box_iou by whether the response gives a point or a box.",
        )
        coordinates: System = Field(
            "auto",
            description="The response's coordinates: normalized (0-1), thousandths (0-1000), pixel (needs "
            "reference.image_size); auto: normalized when every number is in [0, 1], else pixel.",
        )
        iou_threshold: float | None = Field(
            None, gt=0, le=1, description="box_iou: 1 at or above this IoU, 0 below; unset: the IoU is the reward."
        )
        max_dist: float = Field(0.15, gt=0, description="click: the distance at which the reward reaches 0.")
        answer_format: Literal["any", "point_tag"] = Field(
            "any",
            description="any: every format of the answer part (after a think block, in the last <answer>); "
            "point_tag: NeMo-Gym gui_coordinate's reading, the first <point>(x, y)</point> of the whole "
            "response, whole numbers only.",
        )
        map_metric: Literal["map", "map50", "map75"] = Field(
            "map", description="detection: COCO mAP over IoU 0.5:0.95, or at 0.5, or at 0.75."
        )
        count_penalty: float | None = Field(
            None,
            gt=0,
            le=1,
            description="detection: multiply by this to the power |predicted - gold boxes| (ROLL uses 0.6).",
        )

    def score(self, sample: Sample, config: Config) -> Result:
        reference = _reference(sample.reference)
        text = answer_text(sample.response)
        task = config.task
        if task == "detection" or (task == "auto" and reference.boxes is not None):
            return _detection(reference, text, config)
        shapes = point_tag(sample.response) if config.answer_format == "point_tag" else read_shapes(text)
        if not shapes:
            return Result.ok(0.0, reason="no_answer", error="the response holds no point or box")
        shape = _unit(shapes[0], config.coordinates, reference)
        if task == "auto":
            task = _auto_task(reference, shape)
        if task == "box_iou":
            return _iou(reference, shape, config)
        point = _point(shape)
        if task == "click":
            return _click(reference, point, shape, config)
        return _in_region(reference, point, shape)


def _reference(raw: Any) -> GroundingReference:
    if not isinstance(raw, dict):
        raise VerifierError(
            f"grounding needs reference as an object (point, box, polygon or boxes), got {type(raw).__name__}"
        )
    try:
        return GroundingReference.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise VerifierError(f"reference{'.' + where if where else ''}: {first['msg']}") from None


def _unit(values: tuple[float, ...], system: System, reference: GroundingReference) -> tuple[float, ...]:
    try:
        return normalise(values, system, reference.image_size)
    except ValueError as exc:
        raise VerifierError(f"the response's coordinates: {exc}, or set config coordinates") from None


def _gold(reference: GroundingReference, values: tuple[float, ...], field: str) -> tuple[float, ...]:
    try:
        return reference.unit(values)
    except ValueError as exc:
        raise VerifierError(f"reference.{field}: {exc}") from None


def _auto_task(reference: GroundingReference, shape: tuple[float, ...]) -> Task:
    if reference.point is not None:
        return "click"
    if reference.box is not None and len(shape) == 4:
        return "box_iou"
    return "point_in_region"


def _point(shape: tuple[float, ...]) -> tuple[float, float]:
    if len(shape) == 2:
        return shape[0], shape[1]
    return (shape[0] + shape[2]) / 2, (shape[1] + shape[3]) / 2


def _in_region(reference: GroundingReference, point: tuple[float, float], shape: tuple[float, ...]) -> Result:
    if reference.box is not None:
        inside = point_in_box(point, _gold(reference, reference.box, "box"))  # type: ignore[arg-type]
    elif reference.polygon is not None or reference.polygons is not None:
        polygons = [reference.polygon] if reference.polygon is not None else reference.polygons or []
        field = "polygon" if reference.polygon is not None else "polygons"
        inside = any(point_in_polygon(point, _polygon(reference, polygon, field)) for polygon in polygons)
    else:
        raise VerifierError("reference: point_in_region needs a box, polygon or polygons")
    return Result.ok(1.0 if inside else 0.0, reason="inside" if inside else "outside", **_read(point, shape))


def _polygon(
    reference: GroundingReference, polygon: list[tuple[float, float]], field: str
) -> list[tuple[float, float]]:
    flat = _gold(reference, tuple(v for vertex in polygon for v in vertex), field)
    return [(flat[i], flat[i + 1]) for i in range(0, len(flat), 2)]


def _click(reference: GroundingReference, point: tuple[float, float], shape: tuple[float, ...], config) -> Result:
    if reference.point is None:
        raise VerifierError("reference.point: the click reward needs a target point")
    target = _gold(reference, reference.point, "point")
    max_dist = reference.max_dist if reference.max_dist is not None else config.max_dist
    reward, distance = click_reward(point, (target[0], target[1]), max_dist)
    return Result.ok(reward, distance=distance, max_dist=max_dist, **_read(point, shape))


def _iou(reference: GroundingReference, shape: tuple[float, ...], config) -> Result:
    if reference.box is None:
        raise VerifierError("reference.box: box_iou needs a target box")
    if len(shape) != 4:
        return Result.ok(0.0, reason="not_a_box", error="box_iou needs a box, the response gives a point")
    iou = box_iou(shape, _gold(reference, reference.box, "box"))  # type: ignore[arg-type]
    if config.iou_threshold is None:
        return Result.ok(iou, iou=iou, box=list(shape))
    passed = iou >= config.iou_threshold
    return Result.ok(1.0 if passed else 0.0, iou=iou, threshold=config.iou_threshold, box=list(shape))


def _detection(reference: GroundingReference, text: str, config) -> Result:
    if reference.boxes is None:
        raise VerifierError("reference.boxes: detection needs the gold boxes [{bbox_2d, label}, ...]")
    unit_gold = _gold(reference, tuple(v for box in reference.boxes for v in box.bbox_2d), "boxes")
    gold = [
        Detection(box=unit_gold[4 * i : 4 * i + 4], label=box.label.strip().casefold())
        for i, box in enumerate(reference.boxes)
    ]
    found = read_detections(text)
    if found is None:
        if not gold and text.strip() in ("[]", ""):
            found = []
        else:
            return Result.ok(0.0, reason="no_answer", error="the response holds no list of labelled boxes")
    if found:
        numbers = tuple(v for d in found for v in d.box)
        unit = _unit(numbers, config.coordinates, reference)
        found = [Detection(unit[4 * i : 4 * i + 4], d.label, d.score) for i, d in enumerate(found)]
    value = coco_map(gold, found, config.map_metric)
    penalty = config.count_penalty ** abs(len(found) - len(gold)) if config.count_penalty is not None else 1.0
    return Result.ok(value * penalty, **{config.map_metric: value}, count_penalty=penalty, predicted=len(found))


def _read(point: tuple[float, float], shape: tuple[float, ...]) -> dict[str, Any]:
    details: dict[str, Any] = {"point": list(point)}
    if len(shape) == 4:
        details["from_box_centre"] = list(shape)
    return details
