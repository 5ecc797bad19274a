"""lm-eval and inspect, installed from their packages and run as their CLIs against a local
OpenAI-compatible server, score a release of choice, numeric, set and text items exactly as
`benchsmith evaluate` + `report` do on the same responses (same accuracy per config, the same
outcome item for item: correct, wrong, unparseable, error, undecided), each outcome being the one
the test derives from its own table of scripted replies; and they send the model the same
requests: the server's log shows the same messages, roles, images and decoding for every item."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from curation.core.workspace import init_workspace
from export.harness import task_name
from tests.release_support import (
    OPEN_ITEMS,
    LoggedRequest,
    benchsmith_per_item,
    expected_outcome,
    finish_inspect,
    image_pixel_hash,
    release_rows,
    run_lm_eval,
    scripted_reply,
    scripted_server,
    start_inspect,
)

pytest.importorskip("lm_eval", reason="the harness extra (lm_eval[api]) is not installed")
pytest.importorskip("inspect_ai", reason="the harness extra (inspect_ai) is not installed")
MODEL = "Qwen/Qwen2.5-7B-Instruct"  # not an OpenAI name: inspect's `openai/` provider would reshape its requests


@pytest.fixture(scope="module")
def release(harness_release):
    return harness_release


@pytest.fixture(scope="module")
def rows(release):
    _, path, counts = release
    return release_rows(path, counts)


@pytest.fixture(scope="module")
def server(rows):
    with scripted_server(rows) as running:
        yield running


@pytest.fixture(scope="module")
def benchsmith_run(release, server, tmp_path_factory):
    """Per config: row id → outcome, from `benchsmith evaluate` (its run logs); the reported
    (n, accuracy) per config; the requests it sent."""
    _, path, counts = release
    running, responder = server
    before = len(responder.requests)
    ws = init_workspace(tmp_path_factory.mktemp("eval-ws") / "ws")
    scores, reported = {}, {}
    for config in counts:
        per_item, n, accuracy = benchsmith_per_item(path, config, running.url, ws, model=MODEL)
        scores[config], reported[config] = per_item, (n, accuracy)
    return scores, reported, responder.requests[before:]


@pytest.fixture(scope="module")
def lm_eval_run(release, server, benchsmith_run, tmp_path_factory):
    """lm-eval run as `harness/README.md` says, from another folder, once per config (one task a
    command): the output folder and the requests it sent."""
    _, path, counts = release
    running, responder = server
    before = len(responder.requests)
    out = tmp_path_factory.mktemp("lm-eval")
    for config in counts:
        run_lm_eval(path, f"{running.url}/v1", out / config, model=MODEL, task=task_name("parity-exam", config))
    return out, responder.requests[before:]


@pytest.fixture(scope="module")
def inspect_run(release, server, lm_eval_run, tmp_path_factory):
    """inspect_ai run as `harness/README.md` says, one `inspect eval` per config side by side: each
    config's log and the requests they sent."""
    _, path, counts = release
    running, responder = server
    tmp = tmp_path_factory.mktemp("inspect")
    before = len(responder.requests)
    runs = {config: start_inspect(path, f"{running.url}/v1", tmp, config, model=MODEL) for config in counts}
    logs = {config: json.loads(finish_inspect(*run).read_text(encoding="utf-8")) for config, run in runs.items()}
    return logs, responder.requests[before:]


def _truth(rows) -> dict[str, dict[str, str]]:
    """Per config: row id → the outcome of its scripted reply, from the test's own tables."""
    return {config: {row["id"]: expected_outcome(row) for row in config_rows} for config, config_rows in rows.items()}


def _counts(truth: dict[str, str]) -> tuple[int, int, int]:
    """(rows, correct, undecided) of one config's truth."""
    outcomes = list(truth.values())
    return len(outcomes), outcomes.count("correct"), outcomes.count("undecided")


def test_benchsmith_scores_every_item_as_the_replies_say(rows, benchsmith_run):
    """benchsmith's report keeps an undecided answer outside n (a judge or a person decides it);
    the harnesses, which keep no verdict, count it in n as not correct (`harness/README.md`)."""
    scores, reported, _ = benchsmith_run
    truth = _truth(rows)
    for config, per_item in scores.items():
        assert per_item == truth[config], config
        n, correct, undecided = _counts(truth[config])
        assert reported[config] == (n - undecided, pytest.approx(correct / (n - undecided), abs=1e-4))


def _lm_eval_outcome(sample: dict) -> str:
    """A logged lm-eval sample's outcome: `acc`, else the one outcome metric set, else wrong."""
    if sample["acc"] == 1.0:
        return "correct"
    flagged = [name for name in ("unparseable", "error", "undecided") if sample[name] == 1.0]
    assert len(flagged) <= 1, sample["doc"]["id"]
    return flagged[0] if flagged else "wrong"


def test_lm_eval_scores_every_config_as_benchsmith_does(release, rows, benchsmith_run, lm_eval_run):
    _, _, counts = release
    out, sent = lm_eval_run
    results = {task: figures for path in out.rglob("results_*.json")  # one run, one results file per config
               for task, figures in json.loads(path.read_text(encoding="utf-8"))["results"].items()}
    scores, reported, _ = benchsmith_run
    truth = _truth(rows)
    assert set(results) == {task_name("parity-exam", c) for c in counts}  # one score per config, no group average
    for config, n in counts.items():
        task = task_name("parity-exam", config)
        samples = [json.loads(line) for line in next(out.rglob(f"samples_{task}_*.jsonl"))
                   .read_text(encoding="utf-8").splitlines()]
        per_item = {sample["doc"]["id"]: _lm_eval_outcome(sample) for sample in samples}
        rows_n, correct, undecided = _counts(truth[config])
        assert len(per_item) == n == rows_n == reported[config][0] + undecided
        assert per_item == truth[config] == scores[config], config
        assert results[task]["acc,none"] == pytest.approx(correct / n)
        for outcome in ("unparseable", "error", "undecided"):  # the shares benchsmith reports apart
            share = sum(value == outcome for value in truth[config].values()) / n
            assert results[task][f"{outcome},none"] == pytest.approx(share), (config, outcome)
    # image items reached the model with every question and option image
    _assert_images_sent(sent, rows)


def _expected_images(rows) -> dict[str, int]:
    return {row["question"]: len(row["question_images"]) + sum(bool(o["image"]) for o in row["options"])
            for config_rows in rows.values() for row in config_rows}


def _assert_images_sent(sent: list[LoggedRequest], rows) -> None:
    expected = _expected_images(rows)
    assert any(expected.values())
    for request in sent:
        images = sum(kind == "image" for _, parts in request.messages for kind, _ in parts)
        assert images == expected[request.question], request.question[:40]


def test_inspect_scores_every_config_as_benchsmith_does(release, rows, benchsmith_run, inspect_run):
    _, _, counts = release
    scores, reported, _ = benchsmith_run
    logs, sent = inspect_run
    truth = _truth(rows)
    for config, n in counts.items():
        log = logs[config]
        scored = {str(s["id"]): s["scores"]["benchsmith_score"] for s in log["samples"]}
        per_item = {item_id: score["metadata"]["outcome"] for item_id, score in scored.items()}
        rows_n, correct, undecided = _counts(truth[config])
        assert len(per_item) == n == rows_n == reported[config][0] + undecided
        assert per_item == truth[config] == scores[config], config
        assert all((score["value"] == "C") == (per_item[item_id] == "correct") for item_id, score in scored.items())
        accuracy = log["results"]["scores"][0]["metrics"]["accuracy"]["value"]
        assert accuracy == pytest.approx(correct / n)
    _assert_images_sent(sent, rows)


# -- the requests themselves, from the server's log ---------------------------------------------
CIRCLED = "①②③④⑤⑥⑦⑧⑨⑩"


def _canonical(request: LoggedRequest) -> tuple:
    """What the model is given, with the two spellings that mean the same thing made one: an image
    sent without `detail` is `auto`; `stop: []` is no stop sequence."""
    parameters = tuple(pair for pair in request.parameters if pair != ("stop", "[]"))
    return (request.question, request.model, request.messages,
            tuple(detail or "auto" for detail in request.image_details), parameters)


def _image_places(rows) -> dict[str, dict[str, int | None]]:
    """Question → {pixel hash of each of its row's images: the option index it belongs to, None for a question image}."""
    places: dict[str, dict[str, int | None]] = {}
    for config_rows in rows.values():
        for row in config_rows:
            found = places.setdefault(row["question"], {})
            found.update({image_pixel_hash(image["bytes"]): None for image in row["question_images"]})
            found.update({image_pixel_hash(option["image"]["bytes"]): index
                          for index, option in enumerate(row["options"]) if option["image"]})
    return places


def _paper_order(row) -> list[str]:
    return ([image_pixel_hash(image["bytes"]) for image in row["question_images"]]
            + [image_pixel_hash(option["image"]["bytes"]) for option in row["options"] if option["image"]])


def _images_first_numbered(request: LoggedRequest, places: dict[str, int | None]) -> LoggedRequest:
    """The request a harness that sends every image first should send for benchsmith's `request`:
    the user message's images in the same order, then one text where each image stood reads
    `[그림 k]` (an option's `[그림 k = 보기 ③]`); the note lm-eval puts first is checked apart."""
    (system_role, system), (user_role, parts) = request.messages
    images = tuple(part for part in parts if part[0] == "image")
    if not images:
        return request
    lines, number = [], 0
    for kind, value in parts:
        if kind == "text":
            lines.append(value)
        else:
            number += 1
            option = places[value]
            lines.append(f"[그림 {number}]" if option is None else f"[그림 {number} = 보기 {CIRCLED[option]}]")
    messages = ((system_role, system), (user_role, (*images, ("text", "\n".join(lines)))))
    return replace(request, messages=messages, image_details=("auto",) * len(images))


def _without_note(request: LoggedRequest) -> LoggedRequest:
    """lm-eval's request with the note before its text taken out, once checked: it says how many images came first."""
    (system_role, system), (user_role, parts) = request.messages
    images = sum(kind == "image" for kind, _ in parts)
    if not images:
        return request
    *image_parts, (kind, text) = parts
    note, _, rest = text.partition("\n")
    assert kind == "text" and note.startswith("※") and f"그림 {images}장" in note, text[:200]
    return replace(request, messages=((system_role, system), (user_role, (*image_parts, ("text", rest)))))


def test_every_harness_sends_the_same_request_for_every_item(release, rows, benchsmith_run, lm_eval_run,
                                                              inspect_run):
    """From the server's own log, for every item of every config: benchsmith, inspect and lm-eval send
    the model name given, one system and one user message, the system text, the release's decoding
    (temperature, token limit as `max_tokens`, seed, no stop sequence) and nothing else; inspect the
    same user message as benchsmith, images inline where the paper puts them; lm-eval the same
    images in the same order, first, and the same text with each image's place numbered."""
    _, path, counts = release
    decoding = json.loads((path / "release.json").read_text(encoding="utf-8"))["decoding"]
    sent = {"benchsmith": benchsmith_run[2], "lm-eval": lm_eval_run[1], "inspect": inspect_run[1]}
    expected_keys = {"max_tokens", "seed", "temperature"}
    questions = {row["question"] for config_rows in rows.values() for row in config_rows}
    for harness, requests in sent.items():
        assert {request.question for request in requests} == questions, harness  # every item
        if harness != "benchsmith":  # benchsmith answers an item in a second config from its cache
            assert len(requests) == sum(counts.values()), harness  # every item of every config, once
        for request in requests:
            where = f"{harness}: {request.question[:40]}"
            assert request.model == MODEL, where
            assert request.roles == tuple(decoding["roles"]) == ("system", "user"), where
            assert request.parameter("temperature") == decoding["temperature"], where
            assert request.parameter("max_tokens") == decoding["max_tokens"] == 4096, where
            assert request.parameter("seed") == decoding["seed"], where
            assert request.parameter("stop") in (None, []) and decoding["stop"] == [], where
            assert {name for name, _ in request.parameters} - {"stop"} == expected_keys, where

    benchsmith = sorted(sent["benchsmith"], key=_canonical)
    by_question = {row["question"]: row for config_rows in rows.values() for row in config_rows}
    for request in benchsmith:  # the reference puts the images in the paper's order
        images = [value for _, parts in request.messages for kind, value in parts if kind == "image"]
        assert images == _paper_order(by_question[request.question]), request.question[:40]
    assert set(map(_canonical, sent["inspect"])) == set(map(_canonical, benchsmith))
    places = _image_places(rows)
    numbered = [_images_first_numbered(request, places[request.question]) for request in benchsmith]
    assert {_canonical(_without_note(request)) for request in sent["lm-eval"]} == set(map(_canonical, numbered))
    assert any(request.messages != numbered_request.messages
               for request, numbered_request in zip(benchsmith, numbered, strict=True))  # images were numbered


def test_the_scripted_model_exercises_every_answer_form_format_and_outcome(rows, benchsmith_run):
    """The parity above means something: the replies span every form, the items every format the
    test covers (multi-answer choice items among them), and every outcome occurs."""
    replies = [scripted_reply(row["question"], len(row["options"])) for row in rows["full"]]
    for marker in ("정답: ", "정답은", '{"정답"', "Answer: ", "<think>", "따라서 정답", "\\boxed{"):
        assert any(marker in reply for reply in replies), marker
    assert any(reply.strip().isdigit() for reply in replies)
    formats = {row["answer_format"] for row in rows["full"]}
    assert {"choice", "numeric", "set", "text"} <= formats
    truth = _truth(rows)["full"]
    assert set(truth.values()) == {"correct", "wrong", "unparseable", "error", "undecided"}
    for fmt in ("choice", "numeric", "set", "text"):  # each format both right and wrong
        outcomes = {truth[row["id"]] for row in rows["full"] if row["answer_format"] == fmt}
        assert {"correct", "wrong"} <= outcomes, fmt
    assert {"multi-any", "multi-all"} <= set(truth) and {item.id for item in OPEN_ITEMS} <= set(truth)
    assert any(row["answer_format"] != "choice" and row["question_images"] for row in rows["full"])
    scores, _, _ = benchsmith_run
    assert scores["full"] == truth
