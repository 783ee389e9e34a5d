"""`grounding`: points, boxes and detections read from text and judged by rule.

The click reward is held to NeMo-Gym's released gui_coordinate server (nemo-gym 0.7.0): its own
functions, read from the installed file, on a table of answers, and its shipped example rollouts.
IoU and detection mAP are held to ``pycocotools`` (its ``maskUtils.iou`` and ``COCOeval`` run on
COCO-format files, the way a detection team scores), and every rule to cases worked by hand.
"""

from __future__ import annotations

import ast
import json
import random
import re
from importlib.util import find_spec
from pathlib import Path
from typing import Any, Optional

import pytest

from rewardhub.audit import load_corpus
from rewardhub.errors import VerifierError
from rewardhub.types import Sample
from rewardhub.verifiers.grounding import (
    GroundingVerifier,
    box_iou,
    click_reward,
    point_in_box,
    point_in_polygon,
    read_detections,
    read_shapes,
)


def score(response: str, reference: Any, **config):
    return GroundingVerifier().score(Sample(response=response, reference=reference), GroundingVerifier.Config(**config))


# ---- the rules, by hand -------------------------------------------------------------------------

L_SHAPE = [(0, 0), (2, 0), (2, 1), (1, 1), (1, 2), (0, 2)]  # concave: (1.5, 1.5) is in its notch


@pytest.mark.parametrize(
    ("point", "inside"),
    [((0.5, 0.5), True), ((1.5, 0.5), True), ((0.5, 1.5), True), ((1.5, 1.5), False), ((2, 0.5), True)]
    + [((1, 1.5), True), ((0, 0), True), ((-0.1, 1), False), ((2.1, 0.5), False), ((1.0001, 1.0001), False)],
)
def test_point_in_polygon_with_a_notch_and_its_edges(point, inside) -> None:
    assert point_in_polygon(point, L_SHAPE) is inside


def test_point_in_box_includes_its_edges_and_reads_either_corner_order() -> None:
    assert point_in_box((1, 1), (1, 1, 3, 3)) and point_in_box((3, 2), (3, 3, 1, 1))
    assert not point_in_box((3.01, 2), (1, 1, 3, 3))


@pytest.mark.parametrize(
    ("first", "second", "iou"),
    [
        ((0, 0, 2, 2), (1, 1, 3, 3), 1 / 7),  # overlap 1, union 4 + 4 - 1
        ((0, 0, 2, 2), (0, 0, 2, 2), 1.0),
        ((0, 0, 4, 4), (1, 1, 3, 3), 0.25),  # contained: 4 / 16
        ((0, 0, 1, 1), (1, 0, 2, 1), 0.0),  # touching edges
        ((0, 0, 1, 1), (2, 2, 3, 3), 0.0),
        ((0, 0, 2, 1), (1, 0, 3, 1), 1 / 3),
    ],
)
def test_box_iou_by_hand(first, second, iou) -> None:
    assert box_iou(first, second) == pytest.approx(iou)


def test_box_iou_agrees_with_pycocotools(capsys) -> None:
    mask = pytest.importorskip("pycocotools.mask")
    rng = random.Random(30)
    boxes = []
    for _ in range(300):
        x1, y1 = rng.uniform(0, 0.8), rng.uniform(0, 0.8)
        boxes.append((x1, y1, x1 + rng.uniform(0.01, 0.5), y1 + rng.uniform(0.01, 0.5)))
    pairs = list(zip(boxes[::2], boxes[1::2], strict=True))
    xywh = [[b[0], b[1], b[2] - b[0], b[3] - b[1]] for b in boxes]
    theirs = mask.iou(xywh[::2], xywh[1::2], [0] * len(pairs))
    agree = sum(abs(box_iou(a, b) - theirs[i][i]) < 1e-9 for i, (a, b) in enumerate(pairs))
    with capsys.disabled():
        print(f"\ngrounding box IoU vs pycocotools.mask.iou: {agree}/{len(pairs)} agree")
    assert agree == len(pairs)


@pytest.mark.parametrize(("distance", "reward"), [(0.0, 1.0), (0.075, 0.25), (0.03, 0.64), (0.15, 0.0), (0.2, 0.0)])
def test_click_reward_by_hand(distance: float, reward: float) -> None:
    assert click_reward((0.5 + distance, 0.5), (0.5, 0.5))[0] == pytest.approx(reward)


# ---- NeMo-Gym's gui_coordinate, as released -----------------------------------------------------


def _nemo_gym_gui_coordinate() -> dict[str, Any]:
    """The scoring functions of NeMo-Gym's gui_coordinate app, taken from the installed file.

    The module itself imports NeMo-Gym's server runtime (installed without its dependencies), so
    only its pattern and its three pure functions are compiled, unchanged.
    """
    spec = find_spec("resources_servers")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("nemo-gym is not installed")
    source = Path(next(iter(spec.submodule_search_locations))) / "gui_coordinate" / "app.py"
    tree = ast.parse(source.read_text())
    wanted = {"POINT_PATTERN", "_parse_gt", "_parse_prediction", "_compute_reward"}
    body = [
        node
        for node in tree.body
        if (isinstance(node, ast.FunctionDef) and node.name in wanted)
        or (isinstance(node, ast.Assign) and {getattr(t, "id", None) for t in node.targets} & wanted)
    ]
    assert len(body) == 4, "NeMo-Gym's gui_coordinate app changed shape"
    namespace: dict[str, Any] = {"re": re, "Optional": Optional}
    exec(compile(ast.Module(body=body, type_ignores=[]), str(source), "exec"), namespace)  # noqa: S102
    return namespace


CLICKS = [
    ("<point>(630, 610)</point>", "0.6530,0.6620"),
    ("I will click <point>(500, 500)</point> now", "0.5,0.5"),
    ("<point>[(120, 980)]</point>", "0.1,0.9"),
    ("<point>( 0 , 0 )</point>", "0.05,0.05"),
    ("<point>(900, 100)</point> or <point>(100, 900)</point>", "0.1,0.9"),  # the first point counts
    ("<point>(700, 700)</point>", "0.5,0.5"),  # beyond max_dist
    ("<point>(1000, 1000)</point>", "1,1"),
    ("<point>(333, 667)</point>", "0.3,0.7"),
]


def test_click_reward_agrees_with_nemo_gyms_gui_coordinate(capsys) -> None:
    nemo = _nemo_gym_gui_coordinate()
    agree = 0
    for response, expected in CLICKS:
        theirs = nemo["_compute_reward"](nemo["_parse_gt"](expected), nemo["_parse_prediction"](response), 0.15)[0]
        ours = score(response, {"expected_answer": expected}, coordinates="thousandths", task="click").score
        agree += ours == theirs
    with capsys.disabled():
        print(f"\ngrounding click vs NeMo-Gym gui_coordinate 0.7.0: {agree}/{len(CLICKS)} rewards agree")
    assert agree == len(CLICKS)


def test_nemo_gyms_shipped_rollouts_get_their_recorded_rewards() -> None:
    spec = find_spec("resources_servers")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("nemo-gym is not installed")
    rollouts = Path(next(iter(spec.submodule_search_locations))) / "gui_coordinate" / "data" / "example_rollouts.jsonl"
    rows = [json.loads(line) for line in rollouts.read_text().splitlines() if line.strip()]
    assert rows
    for row in rows:
        text = "".join(
            part["text"]
            for item in row["response"]["output"]
            if item.get("type") == "message"
            for part in item["content"]
            if "text" in part
        )
        reference = {"expected_answer": row["expected_answer"], "max_dist": row.get("max_dist", 0.15)}
        assert score(text, reference, coordinates="thousandths").score == row["reward"]


# ---- answer formats and coordinate systems ------------------------------------------------------

TARGET = {"box": [200, 100, 400, 300], "image_size": [800, 600]}  # pixels


@pytest.mark.parametrize(
    ("response", "config", "reward"),
    [
        ("<point>(300, 200)</point>", {}, 1.0),
        ("<point>(0.375, 0.3333)</point>", {}, 1.0),  # normalised
        ("<point>(375, 333)</point>", {"coordinates": "thousandths"}, 1.0),
        ("<point>(375, 333)</point>", {}, 0.0),  # the same numbers read as pixels: below the box
        ('{"point_2d": [450, 200]}', {}, 0.0),
        ('```json\n{"point_2d": [250, 150], "label": "Submit"}\n```', {}, 1.0),
        ('{"x": 399, "y": 299}', {}, 1.0),
        ("pyautogui.click(x=210, y=110)", {}, 1.0),
        ("click(190, 110)", {}, 0.0),
        ("<think>maybe (10, 10)?</think>The button is at (300, 150).", {}, 1.0),
        ("<answer>[220, 120, 380, 280]</answer>", {"task": "point_in_region"}, 1.0),  # a box by its centre
        ('<point x="250" y="250">Submit</point>', {}, 1.0),
    ],
)
def test_points_in_the_formats_models_answer_in(response: str, config: dict, reward: float) -> None:
    result = score(response, TARGET, **config)
    assert (result.status, result.score) == ("ok", reward), result.details


CLICK = {"expected_answer": "0.5,0.5"}  # NeMo-Gym gui_coordinate's row


@pytest.mark.parametrize(
    ("response", "reward"),
    [
        ("<point>(500, 500)</point>", 1.0),
        ("<point>[(500,500)]</point>", 1.0),
        ("<think><point>(900, 900)</point></think><point>(500, 500)</point>", 0.0),  # the first tag, in the think block
        ("<point>(500, 500)</point> or <point>(900, 900)</point>", 1.0),
        ("(500, 500)", 0.0),  # no tag
        ("<point>(500, 500)", 0.0),  # unclosed
        ("<point>(0.5, 0.5)</point>", 0.0),  # not whole numbers
        ('{"point_2d": [500, 500]}', 0.0),
    ],
)
def test_point_tag_reads_as_nemo_gyms_gui_coordinate_reads(response: str, reward: float) -> None:
    """``answer_format: point_tag``: only the server's pattern, first match, whole text."""
    result = score(response, CLICK, task="click", coordinates="thousandths", answer_format="point_tag")
    assert (result.status, result.score) == ("ok", reward), result.details
    assert score(response, CLICK, task="click", coordinates="thousandths").status == "ok"


@pytest.mark.parametrize(
    ("response", "iou"),
    [
        ('{"bbox_2d": [200, 100, 400, 300]}', 1.0),
        ("[300, 100, 500, 300]", 1 / 3),
        ("<|box_start|>(300,100),(500,300)<|box_end|>", 1 / 3),
        ("<box>[0.25, 0.1667, 0.5, 0.5]</box>", 1.0),  # normalised, rounded
    ],
)
def test_box_iou_from_the_formats_models_answer_in(response: str, iou: float) -> None:
    result = score(response, TARGET, task="box_iou")
    assert result.score == pytest.approx(iou, abs=1e-3)


def test_box_iou_thresholded_and_continuous() -> None:
    half = '{"bbox_2d": [250, 100, 400, 300]}'  # IoU 0.75
    assert score(half, TARGET).score == pytest.approx(0.75)  # auto: a box answer to a box target
    assert score(half, TARGET, iou_threshold=0.7).score == 1.0
    assert score(half, TARGET, iou_threshold=0.8).score == 0.0
    assert score("<point>(300, 200)</point>", TARGET, task="box_iou").details["reason"] == "not_a_box"


def test_the_same_answer_in_three_coordinate_systems() -> None:
    reference = {"point": [0.25, 0.5]}
    pixels = {"point": [480, 540], "image_size": [1920, 1080]}
    assert score("<point>(250, 500)</point>", reference, coordinates="thousandths").score == 1.0
    assert score("<point>(0.25, 0.5)</point>", reference).score == 1.0
    assert score("<point>(480, 540)</point>", pixels).score == 1.0
    assert score("<point>(0.25, 0.5)</point>", pixels).score == 1.0


def test_a_mask_of_several_polygons_in_cocos_flat_form() -> None:
    reference = {"polygons": [[0, 0, 10, 0, 10, 10, 0, 10], [20, 20, 30, 20, 25, 30]], "image_size": [100, 100]}
    assert score("(5, 5)", reference).score == 1.0
    assert score("(25, 24)", reference).score == 1.0
    assert score("(15, 15)", reference).score == 0.0


def test_reading_shapes_and_detections() -> None:
    assert read_shapes("<point>(1, 2)</point> and [3, 4, 5, 6]") == [(1.0, 2.0)]  # tags first
    assert read_shapes("no numbers here") == []
    found = read_detections(
        'Here: [{"bbox_2d": [1, 2, 3, 4], "label": " Cat "}, {"bbox": [5, 6, 7, 8], "label": "dog", "score": 0.5}]'
    )
    assert [(d.box, d.label, d.score) for d in found] == [((1, 2, 3, 4), "cat", 1.0), ((5, 6, 7, 8), "dog", 0.5)]
    assert read_detections("[1, 2, 3, 4]") is None


# ---- detection mAP ------------------------------------------------------------------------------


def detections(*items: tuple[list[float], str]) -> str:
    return "```json\n" + json.dumps([{"bbox_2d": box, "label": label} for box, label in items]) + "\n```"


GOLD = {"boxes": [{"bbox_2d": [10, 10, 50, 50], "label": "cat"}, {"bbox_2d": [60, 60, 90, 90], "label": "cat"}]}
GOLD_PX = {**GOLD, "image_size": [100, 100]}


@pytest.mark.parametrize(
    ("response", "reward"),
    [
        (detections(([10, 10, 50, 50], "cat"), ([60, 60, 90, 90], "cat")), 1.0),
        # one of two found: precision 1 up to recall 0.5, so 51 of COCO's 101 recall points
        (detections(([10, 10, 50, 50], "cat")), 51 / 101),
        # equal scores keep the written order: a miss first caps precision at 1/2 for every recall
        (detections(([0, 60, 5, 70], "cat"), ([10, 10, 50, 50], "cat"), ([60, 60, 90, 90], "cat")), 2 / 3),
        (detections(([10, 10, 50, 50], "dog"), ([60, 60, 90, 90], "dog")), 0.0),  # unknown labels are dropped
        ("I see two cats.", 0.0),
    ],
)
def test_detection_map_by_hand(response: str, reward: float) -> None:
    assert score(response, GOLD_PX).score == pytest.approx(reward, abs=1e-9)


def test_detection_count_penalty_and_empty_gold() -> None:
    one = detections(([10, 10, 50, 50], "cat"))
    assert score(one, GOLD_PX, count_penalty=0.6).score == pytest.approx(51 / 101 * 0.6)
    assert score("[]", {"boxes": []}).score == 1.0
    assert score(one, {"boxes": [], "image_size": [100, 100]}).score == 0.0


def _coco_files_map(tmp: Path, gold: list, predicted: list, size: tuple[int, int], stat: int) -> float:
    """pycocotools' mAP the usual way: an annotation file, a results file, COCOeval."""
    import contextlib
    import io

    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    labels = sorted({label for _, label in gold})
    ann = {
        "images": [{"id": 7, "width": size[0], "height": size[1], "file_name": "x.jpg"}],
        "categories": [{"id": 10 + i, "name": label} for i, label in enumerate(labels)],
        "annotations": [
            {"id": i + 1, "image_id": 7, "category_id": 10 + labels.index(label), "iscrowd": 0,
             "bbox": [b[0], b[1], b[2] - b[0], b[3] - b[1]], "area": (b[2] - b[0]) * (b[3] - b[1])}
            for i, (b, label) in enumerate(gold)
        ],
    }  # fmt: skip
    results = [
        {
            "image_id": 7,
            "category_id": 10 + labels.index(label),
            "bbox": [b[0], b[1], b[2] - b[0], b[3] - b[1]],
            "score": 1.0,
        }
        for b, label in predicted
        if label in labels
    ]
    if not results:
        return 0.0
    (tmp / "ann.json").write_text(json.dumps(ann))
    (tmp / "res.json").write_text(json.dumps(results))
    with contextlib.redirect_stdout(io.StringIO()):
        truth = COCO(str(tmp / "ann.json"))
        evaluation = COCOeval(truth, truth.loadRes(str(tmp / "res.json")), "bbox")
        evaluation.evaluate()
        evaluation.accumulate()
        evaluation.summarize()
    return max(0.0, float(evaluation.stats[stat]))


def test_detection_map_agrees_with_pycocotools_on_coco_files(tmp_path: Path, capsys) -> None:
    pytest.importorskip("pycocotools")
    rng = random.Random(2025)
    size = (640, 480)
    agree, cases, differ = 0, 40, []
    for case in range(cases):
        gold = []
        for _ in range(rng.randint(1, 4)):
            x, y = rng.uniform(0, 500), rng.uniform(0, 350)
            gold.append(([x, y, x + rng.uniform(20, 140), y + rng.uniform(20, 130)], rng.choice(["cat", "dog", "car"])))
        predicted = []
        for box, label in gold:
            if rng.random() < 0.8:  # found, jittered, sometimes mislabelled
                jitter = [v + rng.uniform(-15, 15) for v in box]
                predicted.append((jitter, label if rng.random() < 0.85 else "bird"))
        for _ in range(rng.randint(0, 2)):  # false alarms
            x, y = rng.uniform(0, 550), rng.uniform(0, 400)
            predicted.append(([x, y, x + 60, y + 50], rng.choice(["cat", "dog"])))
        rng.shuffle(predicted)
        metric, stat = rng.choice([("map", 0), ("map50", 1), ("map75", 2)])
        response = detections(*[([round(v, 3) for v in b], label) for b, label in predicted])
        rounded = [([round(v, 3) for v in b], label) for b, label in predicted]
        theirs = _coco_files_map(tmp_path, gold, rounded, size, stat)
        reference = {"boxes": [{"bbox_2d": b, "label": label} for b, label in gold], "image_size": list(size)}
        ours = score(response, reference, map_metric=metric).score
        if abs(ours - theirs) < 1e-9:
            agree += 1
        else:
            differ.append((case, ours, theirs))
    with capsys.disabled():
        print(f"\ngrounding detection mAP vs pycocotools COCOeval on COCO files: {agree}/{cases} agree")
    assert differ == []


# ---- what cannot be judged ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reference", "config", "field"),
    [
        ("0.5,0.5", {}, "reference as an object"),
        ({}, {}, "give one target"),
        ({"box": [1, 2, 3, 4], "point": [1, 2]}, {}, "give one target"),
        ({"box": [1, 2, 3]}, {}, "reference.box"),
        ({"point": "a,b"}, {}, "reference.point"),
        ({"polygon": [[0, 0], [1, 1]]}, {}, "at least 3 vertices"),
        ({"box": [100, 100, 200, 200]}, {"coordinates": "normalized"}, "reference.box: pixel coordinates need"),
        ({"point": [0.5, 0.5]}, {}, "response's coordinates"),  # pixels in the answer, no image size
        ({"box": [0.1, 0.1, 0.2, 0.2], "image_size": [0, 10]}, {}, "reference.image_size"),
        ({"boxes": [{"bbox_2d": [1, 2, 3, 4]}]}, {}, "reference.boxes.0.label"),
    ],
)
def test_a_reference_that_cannot_be_read_is_an_error_naming_the_field(reference, config, field) -> None:
    with pytest.raises(VerifierError, match=re.escape(field)):
        score("<point>(150, 150)</point>", reference, **config)


def test_no_answer_scores_zero_with_a_reason() -> None:
    result = score("I cannot see the button.", TARGET)
    assert (result.status, result.score, result.details["reason"]) == ("ok", 0.0, "no_answer")


def test_no_exploit_of_the_grounding_corpus_is_paid() -> None:
    results = {e.id: score(e.response, e.reference) for e in load_corpus("grounding")}
    assert {i: r.details for i, r in results.items() if r.status != "ok" or r.score > 0} == {}


def test_over_http_a_click_is_scored_and_a_bad_reference_names_its_field(http) -> None:
    samples = [
        {"response": "<point>(630, 610)</point>", "reference": {"expected_answer": "0.6530,0.6620"}},
        {"response": "<point>(630, 610)</point>", "reference": {"box": [1, 2, 3]}},
    ]
    body = {"verifier": {"name": "grounding", "config": {"coordinates": "thousandths"}}, "samples": samples}
    reply = http.post("/v1/score", json=body)
    assert reply.status_code == 200, reply.text
    first, second = reply.json()["results"]
    assert (first["status"], first["score"]) == ("ok", pytest.approx(0.3855625435113152))
    assert second["status"] == "error" and "reference.box" in second["error"]
    audit = http.post("/v1/audit", json={"verifier": "grounding"}).json()["exploits"]
    assert audit["tried"] == len(load_corpus("grounding"))
    assert [e["id"] for e in audit["cases"] if e["rewarded"]] == []


def test_elements_finds_what_the_lazy_regex_finds_in_linear_time() -> None:
    from rewardhub.verifiers.elements import elements

    rng = random.Random(5)
    pieces = ["<answer>", "</answer>", "<ANSWER>", "a", " ", "<answer", ">", "</ans"]
    for _ in range(400):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        expected = [m.group(1) for m in re.finditer(r"<answer>(.*?)</answer>", text, re.DOTALL | re.IGNORECASE)]
        assert [body for _, _, body in elements(text, "answer")] == expected, text
    flood = "<answer>" * 20_000 + "<point>(1, 2)</point>"  # quadratic for the regex; one pass here
    assert read_shapes(flood) == [(1.0, 2.0)]
