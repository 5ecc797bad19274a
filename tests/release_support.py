"""A release for the harness tests: the sample exam (images, option images), real KMMLU and
한국사 items from ../shared/realdata when present, multi-answer items and open-answer items
(numeric, set, text); plus a scripted model that answers each item in one of the forms real
models use, and each item's outcome derived from the test's own table of replies (never from
benchsmith's scorer), which every harness and `benchsmith evaluate` must agree with."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from curation.core.item import parse_item
from curation.core.workspace import Workspace
from curation.importers import import_file
from curation.sample_exam import blobs_dir_for, write_sample_exam


def add_sample_exam(workspace: Workspace, folder: Path) -> int:
    """The sample exam's choice items (the harness release's open items are `OPEN_ITEMS`, whose
    replies and outcomes the tests' own tables fix; the sample's 단답형 questions would need others)."""
    pdf, truth = write_sample_exam(folder / "sample.pdf")
    for blob in sorted(blobs_dir_for(pdf).iterdir()):
        workspace.blobs.put(blob.read_bytes(), blob.suffix.lstrip("."))
    records = [json.loads(line) for line in truth.read_text(encoding="utf-8").splitlines()]
    items = [item for item in (parse_item({**record, "status": "accepted"}) for record in records)
             if item.answer_format == "choice"]
    workspace.store.save_items(items, author="test", stage="import")
    return len(items)


def add_multi_answer(workspace: Workspace) -> None:
    """Two multi-answer items: one where any listed option is right, one that needs all (which
    also has an explicit variant and a reviewed rationale, so every config is built)."""
    base = {"source": {"exam": "기상기사", "subject": "기상학"}, "status": "accepted",
            "options": [{"text": f"선택지 {n}"} for n in range(1, 5)], "answer": [1, 3]}
    items = [parse_item({**base, "id": "multi-any", "stem": "복수 정답 문항: 옳은 것은? (1번과 3번 모두 인정)"}),
             parse_item({**base, "id": "multi-all", "stem": "우리나라에서 옳은 것을 모두 고른 것은?",
                         "taxonomy": {"question_format": "multiple_answers"}, "flags": {"korea_specific": True},
                         # the `explicit` config asks its explicit variant; the `reasoning` config has it too
                         "explicit_variant": "한국에서 옳은 것을 모두 고른 것은?",
                         "rationale": {"text": "1번과 3번이 모두 조건을 만족한다.", "status": "adopted"}})]
    workspace.store.save_items(items, author="test", stage="import")


@dataclass(frozen=True)
class OpenItem:
    """An open-answer item of the harness release, the reply the scripted model gives it and the
    outcome that reply has under the key's rules (scoring/README.md), decided here by reading."""

    id: str
    stem: str
    key: dict[str, Any]
    reply: str
    outcome: str
    options: tuple[str, ...] = ()
    image: bool = False
    points: float | None = None


_OPEN_EXAM = {"exam": "기상기사", "subject": "기상학"}
OPEN_ITEMS: tuple[OpenItem, ...] = (
    OpenItem("open-num-right", "건조 단열 감률: 건조한 공기 덩어리가 1 km 상승할 때 기온은 몇 ℃ 낮아지는가?",
             {"format": "numeric", "value": "9.8", "unit": "℃/km"},
             "건조 공기 덩어리는 1 km 상승할 때마다 약 9.8 ℃씩 식는다.\n\n\\boxed{9.8}", "correct", points=2),
    OpenItem("open-num-wrong", "해면 기압의 표준값은 몇 hPa인가?", {"format": "numeric", "value": "1013.25", "unit": "hPa"},
             "정답: 1000 hPa", "wrong"),
    OpenItem("open-num-unit", "우량계에 한 시간 동안 모인 강수량은 몇 m인가? (관측값 0.012 m)",
             {"format": "numeric", "value": "0.012", "unit": "m"},
             "강수량을 미터로 환산하면 된다.\n정답: 12 mm", "correct"),  # 12 mm is 0.012 m
    OpenItem("open-num-image", "그림의 지상 일기도에서 A 지점의 기압은 몇 hPa인가?",
             {"format": "numeric", "value": "1004", "unit": "hPa"},
             "등압선 간격이 4 hPa이므로 A 지점은 1004 hPa이다.\n\\boxed{1004}", "correct", image=True, points=3),
    OpenItem("open-num-unparseable", "포화 수증기압이 같은 두 공기 덩어리의 기온 차는 몇 ℃인가?",
             {"format": "numeric", "value": "25"},
             "이 문제를 풀려면 먼저 온도와 기압의 관계를 정리해야 한다.\n\n상승하는 공기는 단열 팽창하며 식는다."
             "\n\n이슬점에 이르면 응결이 시작되고 잠열이 방출된다.\n\n이 과정을 차례로 따져 보아야 한다.",
             "unparseable"),  # reasoning that never states an answer
    OpenItem("open-num-cut", "이슬점 감률은 1 km당 몇 ℃인가?", {"format": "numeric", "value": "1.8"},
             "<think>이슬점 감률을 계산하면 1 km당", "error"),  # a thinking block never closed: cut off
    OpenItem("open-set-right", "<보기>에서 온난 전선의 특징으로 옳은 것만을 있는 대로 고른 것은?\n"
             "ㄱ. 전선면의 기울기가 완만하다.\nㄴ. 적란운이 발달하고 소나기가 내린다.\nㄷ. 넓은 지역에 지속적인 비가 내린다.",
             {"format": "set", "members": ["ㄱ", "ㄷ"]},
             "ㄴ은 한랭 전선의 특징이다. 따라서 옳은 것은 ㄱ과 ㄷ이다.\n\\boxed{ㄷ, ㄱ}", "correct"),
    OpenItem("open-set-wrong", "<보기>에서 한랭 전선 통과 후의 변화로 옳은 것만을 있는 대로 고른 것은?\n"
             "ㄱ. 기온이 오른다.\nㄴ. 풍향이 시계 방향으로 바뀐다.", {"format": "set", "members": ["ㄴ"]},
             "정답: ㄱ, ㄴ", "wrong"),
    OpenItem("open-set-options", "<보기>에서 대류권의 특징으로 옳은 것을 모두 고른 것은?\n"
             "ㄱ. 기상 현상이 나타난다.\nㄴ. 높이 올라갈수록 기온이 높아진다.\nㄷ. 공기의 연직 운동이 활발하다.",
             {"format": "set", "members": ["ㄱ", "ㄷ"]}, "정답: ③", "correct",
             options=("ㄱ", "ㄴ", "ㄱ, ㄷ", "ㄴ, ㄷ", "ㄱ, ㄴ, ㄷ")),  # option ③ is the set ㄱ, ㄷ
    OpenItem("open-text-right", "중위도 상공에서 서쪽에서 동쪽으로 부는 바람을 무엇이라 하는가?",
             {"format": "text", "accepted": ["편서풍", "westerlies"]},
             "중위도 상공에서는 서쪽에서 동쪽으로 바람이 분다.\n\n정답: 편서풍", "correct"),
    OpenItem("open-text-undecided", "산을 넘은 공기가 고온 건조해지는 현상을 무엇이라 하는가?",
             {"format": "text", "accepted": ["푄 현상"]}, "\\boxed{높새바람}", "undecided"),  # not strict: a judge decides
    OpenItem("open-text-strict", "소나기와 뇌우를 동반하는 수직으로 발달한 구름은?",
             {"format": "text", "accepted": ["적란운"], "strict": True}, "정답: 층운", "wrong"),
)
OPEN_REPLIES = {item.stem: item.reply for item in OPEN_ITEMS}


def _png(color: tuple[int, int, int]) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (12, 8), color).save(buffer, "PNG")
    return buffer.getvalue()


def add_open_items(workspace: Workspace) -> None:
    """The open-answer items of `OPEN_ITEMS` (one with a question image), accepted."""
    chart = workspace.blobs.put(_png((30, 90, 160)), "png")
    items = [parse_item({"id": item.id, "source": _OPEN_EXAM, "stem": item.stem, "status": "accepted",
                         "options": [{"text": text} for text in item.options], "answer": item.key,
                         "points": item.points, "images": [{"blob": chart, "kind": "raster"}] if item.image else []})
             for item in OPEN_ITEMS]
    workspace.store.save_items(items, author="test", stage="import")


def add_realdata(workspace: Workspace, realdata: Path, kmmlu_rows: int = 40) -> int:
    rows = json.loads((realdata / "kmmlu" / "kmmlu_criminal_law_test_200.json").read_text(encoding="utf-8"))
    subset = workspace.root / "kmmlu-subset.json"
    subset.write_text(json.dumps(rows[:kmmlu_rows], ensure_ascii=False), encoding="utf-8")
    created = import_file(subset, workspace.store, fmt="kmmlu").created
    created += import_file(realdata / "korhist77" / "questions_77.json", workspace.store, fmt="korhist",
                           blobs=workspace.blobs).created
    accept_all(workspace)
    return created


def accept_all(workspace: Workspace) -> None:
    from curation.core.store import ItemQuery

    for stored in workspace.store.iter_items(ItemQuery(status=["extracted", "in_review"])):
        if stored.item.answer_list():
            item = stored.item.model_copy(update={"status": "accepted"})
            if "한국사" in item.source.exam:  # Korean history: a Korea-specific config that overlaps `full`
                item = item.model_copy(update={"flags": item.flags.model_copy(update={"korea_specific": True})})
            workspace.store.update(item, expect_rev=stored.rev,
                                   author="test", stage="review", reason="accepted for the harness test")


# -- the scripted model -------------------------------------------------------------------------
CIRCLED = "①②③④⑤⑥⑦⑧⑨⑩"


def _h(*parts: Any) -> int:
    return int.from_bytes(hashlib.sha256("\x1f".join(map(str, parts)).encode()).digest()[:8], "big")


def scripted_reply(question: str, n_options: int) -> str:
    """A reply decided by the question alone, so every harness gets the same one: for an open
    item its reply in `OPEN_ITEMS`; else an option picked by hash, in one of the answer forms real
    models use (one unparseable)."""
    if question in OPEN_REPLIES:
        return OPEN_REPLIES[question]
    form, option = _choice_reply(question, n_options)
    letter = "ABCDEFGHIJ"[option - 1]
    forms = [
        f"정답: {CIRCLED[option - 1]}",
        f"각 선택지를 검토하면 {(option % n_options) + 1}번은 옳지 않습니다. 정답은 {option}번",
        json.dumps({"정답": option}, ensure_ascii=False),
        f"Answer: {letter}",
        str(option),
        f"먼저 조건을 정리하면, 문제에서 요구하는 것은 선택지의 성질이다.\n\n각 보기를 차례로 살펴보면 "
        f"{option}번이 조건을 모두 만족한다.\n\n따라서 정답: {option}",
        f"<think>선택지를 하나씩 본다. {option}번이 맞다.</think>\n{{\"정답\": {option}}}",
        "잘 모르겠습니다.",
    ]
    assert len(forms) == len(CHOICE_FORMS)
    return forms[form]


# what each choice reply form states: the option picked ("option"), or nothing an option can be read from
CHOICE_FORMS = ("option",) * 7 + ("nothing",)


def _choice_reply(question: str, n_options: int) -> tuple[int, int]:
    """(form, option) of a choice item's scripted reply."""
    h = _h(question)
    return h // 11 % len(CHOICE_FORMS), h % n_options + 1


def expected_outcome(row: dict[str, Any]) -> str:
    """The outcome the scripted reply to a release row has, by the test's own tables: an open item's
    from `OPEN_ITEMS`; a choice item's from the option its reply states and the row's key (any
    listed option is right, or, when the key requires all, exactly the listed set)."""
    open_item = next((item for item in OPEN_ITEMS if item.id == row["id"]), None)
    if open_item is not None:
        return open_item.outcome
    key = json.loads(row["key"])
    assert key["format"] == "choice", row["id"]
    form, option = _choice_reply(row["question"], len(row["options"]))
    if CHOICE_FORMS[form] == "nothing":
        return "unparseable"
    right = {option} == set(key["options"]) if key.get("require_all") else option in key["options"]
    return "correct" if right else "wrong"


class Responder:
    """Finds which release question a request is about (the longest question text it contains)
    and answers with `scripted_reply`; records what each request carried."""

    def __init__(self, questions: dict[str, int]):
        self.questions = sorted(questions.items(), key=lambda pair: -len(pair[0]))
        self.seen: list[tuple[str, int]] = []  # (question, images in the request)
        self.requests: list[LoggedRequest] = []  # the same requests, as sent

    def __call__(self, prompt_text: str, body: dict[str, Any]) -> str:
        for question, n_options in self.questions:
            if question in prompt_text:
                self.seen.append((question, count_images(body)))
                self.requests.append(LoggedRequest.of(question, body))
                return scripted_reply(question, n_options)
        raise LookupError("the request names no release question")


Part = tuple[str, str]  # ("text", the text) or ("image", pixel_hash(image)) in the order sent


@dataclass(frozen=True)
class LoggedRequest:
    """One chat-completions request as the server received it: the model name, each message's role
    and parts, and every other body key (sampling, token limit, stop, seed …) as sent."""

    question: str
    model: str
    messages: tuple[tuple[str, tuple[Part, ...]], ...]
    image_details: tuple[str | None, ...]  # each image part's `detail`, None where not sent
    parameters: tuple[tuple[str, Any], ...]  # sorted (key, JSON text of the value)

    @classmethod
    def of(cls, question: str, body: dict[str, Any]) -> LoggedRequest:
        messages, details = [], []
        for message in body["messages"]:
            content = message["content"]
            parts: list[Part] = []
            for part in [{"type": "text", "text": content}] if isinstance(content, str) else content:
                if part["type"] == "text":
                    parts.append(("text", part["text"]))
                else:
                    parts.append(("image", pixel_hash(part["image_url"]["url"])))
                    details.append(part["image_url"].get("detail"))
            messages.append((message["role"], tuple(parts)))
        parameters = tuple(sorted((key, json.dumps(value, sort_keys=True)) for key, value in body.items()
                                  if key not in ("model", "messages")))
        return cls(question, body["model"], tuple(messages), tuple(details), parameters)

    @property
    def roles(self) -> tuple[str, ...]:
        return tuple(role for role, _ in self.messages)

    def parameter(self, key: str) -> Any:
        return next((json.loads(value) for name, value in self.parameters if name == key), None)


def pixel_hash(data_url: str) -> str:
    return image_pixel_hash(base64.b64decode(data_url.partition(",")[2]))


def image_pixel_hash(data: bytes) -> str:
    """The image's decoded pixels (size, RGBA bytes): the same picture whatever format it was encoded in
    (lm-eval re-encodes every image as PNG)."""
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        rgba = image.convert("RGBA")
        return hashlib.sha256(f"{rgba.size}".encode() + rgba.tobytes()).hexdigest()[:16]


def count_images(body: dict[str, Any]) -> int:
    return sum(1 for message in body.get("messages", []) if isinstance(message.get("content"), list)
               for part in message["content"] if part.get("type") == "image_url")


def readme_command(release: Path, start: str, *, url: str, model: str = "scripted") -> str:
    """The command `harness/README.md` gives for a harness (its line starting with `start`), with
    the release, server and model filled in."""
    text = (release / "harness" / "README.md").read_text(encoding="utf-8").replace("\\\n", " ")
    line = next(line for line in text.splitlines() if line.startswith(start))
    return fill_placeholders(line, release=release, url=url, model=model)


def fill_placeholders(line: str, *, release: Path, url: str, model: str = "scripted") -> str:
    """`RELEASE`, `URL` (a word: not the one in `LOCAL_BASE_URL`) and `MODEL` of a README command filled in."""
    line = line.replace("RELEASE", shlex.quote(str(release))).replace("MODEL", model)
    return re.sub(r"\bURL\b", lambda _: url, line)


@contextmanager
def scripted_server(rows: dict[str, list[dict[str, Any]]]) -> Iterator[tuple[Any, Responder]]:
    """A local OpenAI-compatible server giving the scripted replies to the release's questions:
    (the running server, its Responder with the log of what it was sent)."""
    from tests.fault_server import ServerConfig, ServerThread

    questions = {row["question"]: len(row["options"]) for config_rows in rows.values() for row in config_rows}
    responder = Responder(questions)
    with ServerThread(ServerConfig(responder=responder)) as running:
        yield running, responder


# -- what the harness tests compare against ----------------------------------------------------
def release_rows(release: Path, configs: Any) -> dict[str, list[dict[str, Any]]]:
    """Per config, the release's rows as pyarrow reads them from its parquet files."""
    import pyarrow.parquet as pq

    manifest = json.loads((release / "release.json").read_text(encoding="utf-8"))
    return {config: [row for name in manifest["configs"][config]["files"] for row in pq.read_table(release / name).to_pylist()]
            for config in configs}


def benchsmith_per_item(release: Path, config: str, server_url: str, workspace: Workspace, model: str = "scripted"
                        ) -> tuple[dict[str, str], int, float]:
    """`benchsmith evaluate --release` on one config with a vision model at `server_url`:
    (row id → outcome from its run log, n and accuracy from its report)."""
    import csv

    from evaluation.runlog import RESPONSES, read_answer_manifest, read_records
    from tests.conftest import run_cli

    out = workspace.root / "reports" / config
    done = run_cli("evaluate", "--release", f"{release}:{config}", "-w", str(workspace.root), "--out", str(out),
                   "--model", f"openai-compatible:{model}@{server_url}/v1?vision=true")
    assert done.returncode == 0, done.stderr
    with (out / "accuracy.csv").open(encoding="utf-8") as handle:
        overall = next(r for r in csv.DictReader(handle) if r["subset"] == "overall")
    runs = [run_dir for run_dir in workspace.runs_dir.iterdir() if (run_dir / "manifest.json").is_file()
            and getattr(read_answer_manifest(run_dir).dataset, "config", None) == config]
    assert len(runs) == 1, runs
    per_item = {item_id: record["outcome"] for item_id, record in read_records(runs[0] / RESPONSES).items()}
    return per_item, int(overall["n"]), int(overall["correct"]) / int(overall["n"])  # the csv rounds accuracy


# -- running the harnesses as their README says ----------------------------------------------------
def harness_env(tmp: Path) -> dict[str, str]:
    """The environment a harness runs in: no OpenAI or LOCAL_ variables of the caller, Hugging Face
    offline with its cache under `tmp`, this Python's scripts first on the PATH."""
    return {**{k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LOCAL_"))},
            "HF_HOME": str(tmp / "hf"), "HF_DATASETS_OFFLINE": "1", "INSPECT_LOG_DIR": str(tmp / "inspect-logs"),
            "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}


def run_lm_eval(release: Path, url: str, tmp: Path, *, model: str = "scripted", task: str | None = None) -> Path:
    """lm-eval with `--log_samples` as `harness/README.md` says (its tag, or one `task`), from another
    folder: the output folder (results_*.json, samples_TASK_*.jsonl)."""
    elsewhere = tmp / "cwd"
    elsewhere.mkdir(parents=True, exist_ok=True)
    command = readme_command(release, "lm_eval ", url=url, model=model)
    if task is not None:
        command = re.sub(r"--tasks \S+", f"--tasks {task}", command)
    done = subprocess.run(["bash", "-c", f"{command} --output_path {tmp / 'out'} --log_samples"],
                          capture_output=True, text=True, cwd=elsewhere, env=harness_env(tmp), timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return tmp / "out"


def start_inspect(release: Path, url: str, tmp: Path, config: str, *, model: str = "scripted",
                  log_format: str = "json") -> tuple[subprocess.Popen, Path]:
    """`inspect eval` on one config as `harness/README.md` says, from another folder, started (a
    caller runs several side by side): the process and the folder its log goes to."""
    elsewhere = tmp / "cwd"
    elsewhere.mkdir(parents=True, exist_ok=True)
    command = readme_command(release, "LOCAL_BASE_URL=URL ", url=url, model=model)
    assert "config=full" in command
    logs = tmp / "logs" / config
    process = subprocess.Popen(
        ["bash", "-c", command.replace("config=full", f"config={config}")], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, cwd=elsewhere,
        env={**harness_env(tmp), "INSPECT_LOG_DIR": str(logs), "INSPECT_LOG_FORMAT": log_format,
             "INSPECT_DISPLAY": "none"})
    return process, logs


def finish_inspect(process: subprocess.Popen, logs: Path) -> Path:
    """Wait for a started `inspect eval`: its one log file."""
    _, stderr = process.communicate(timeout=600)
    assert process.returncode == 0, stderr[-3000:]
    return next(path for path in logs.iterdir() if path.suffix in (".json", ".eval"))
