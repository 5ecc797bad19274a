"""Exports inside a release for the harnesses researchers already run: an lm-evaluation-harness
task folder, an inspect_ai task, and a VLMEvalKit-style TSV.

The prompts are Korean and ask for the option number; the lm-eval filter reads Korean answer
forms ("정답: ③", "3번") and never picks an option the text rejects.
"""

from __future__ import annotations

import base64
import csv
import io
import json
from pathlib import Path
from typing import Any

import yaml

PROMPT = ("다음은 시험 문제입니다. 보기 중 정답의 번호 하나만 고르세요.\n\n{question}\n\n{options}\n\n"
          "정답 번호를 '정답: 번호' 형식으로 답하세요.")
CIRCLED = "①②③④⑤⑥⑦⑧⑨⑩"

LM_EVAL_UTILS = '''"""Helpers for the benchsmith lm-evaluation-harness tasks (generated with the release)."""

import re

CIRCLED = "①②③④⑤⑥⑦⑧⑨⑩"
PROMPT = __PROMPT__
_ANSWER = re.compile(r"(?:정답|답|answer)\\s*(?:은|는|:|：)?\\s*(?:\\(|\\[)?([①-⑩]|\\d{1,2})", re.I)
_NUMBERED = re.compile(r"([①-⑩]|\\b\\d{1,2})\\s*번?(?:\\s*(?:입니다|이다|이 정답|가 정답))")
_REJECTED = re.compile(r"([①-⑩]|\\d{1,2})\\s*번?\\s*(?:은|는|이|가)?\\s*(?:옳지 않|틀리|오답|정답이 아니)")


def doc_to_text(doc):
    options = "\\n".join(f"{CIRCLED[n]} {o['text']}" for n, o in enumerate(doc["options"]))
    return PROMPT.format(question=doc["question"], options=options)


def doc_to_target(doc):
    return str(doc["answer"])


def _number(token):
    return str(CIRCLED.index(token) + 1) if token in CIRCLED else str(int(token))


def extract_answer(text):
    """The option number a response commits to, or "" (never one the response rejects)."""
    rejected = {_number(m.group(1)) for m in _REJECTED.finditer(text)}
    for pattern in (_ANSWER, _NUMBERED):
        for match in pattern.finditer(text):
            number = _number(match.group(1))
            if number not in rejected:
                return number
    return ""


def korean_answer_filter(resps, docs):
    return [[extract_answer(r) for r in rs] for rs in resps]
'''


def _options_text(options: list[dict[str, Any]]) -> str:
    return "\n".join(f"{CIRCLED[n]} {option['text'] or '(그림)'}" for n, option in enumerate(options))


class _FunctionTag(str):
    """`!function utils.x` in lm-eval YAML."""


def _function_representer(dumper: yaml.Dumper, value: _FunctionTag) -> yaml.Node:
    return dumper.represent_scalar("!function", str(value))


yaml.add_representer(_FunctionTag, _function_representer)


def _dataset_source(config: str, hub_repo: str | None) -> dict[str, Any]:
    """The Hub repo when the release is published there; else its parquet files, read from the
    release folder (run lm_eval from there)."""
    if hub_repo:
        return {"dataset_path": hub_repo, "dataset_name": config}
    return {"dataset_path": "parquet", "dataset_kwargs": {"data_files": {"test": f"data/{config}/test-*.parquet"}}}


def write_lm_eval(folder: Path, name: str, configs: list[str], hub_repo: str | None) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "utils.py").write_text(LM_EVAL_UTILS.replace("__PROMPT__", repr(PROMPT)), encoding="utf-8")
    written = []
    tasks = []
    for config in configs:
        task = f"{name}_{config}".replace("-", "_").replace(".", "_")
        tasks.append(task)
        spec = {
            "task": task,
            **_dataset_source(config, hub_repo),
            "test_split": "test",
            "output_type": "generate_until",
            "doc_to_text": _FunctionTag("utils.doc_to_text"),
            "doc_to_target": _FunctionTag("utils.doc_to_target"),
            "generation_kwargs": {"until": ["\n\n"], "do_sample": False, "max_gen_toks": 64},
            "filter_list": [{"name": "korean-answer", "filter": [
                {"function": "custom", "filter_fn": _FunctionTag("utils.korean_answer_filter")},
                {"function": "take_first"}]}],
            "metric_list": [{"metric": "exact_match", "aggregation": "mean", "higher_is_better": True}],
            "metadata": {"version": 1.0},
        }
        path = folder / f"{task}.yaml"
        path.write_text(yaml.dump(spec, allow_unicode=True, sort_keys=False), encoding="utf-8")
        written.append(path)
    group = {"group": name.replace("-", "_"), "task": tasks,
             "aggregate_metric_list": [{"metric": "exact_match", "aggregation": "mean", "weight_by_size": True}],
             "metadata": {"version": 1.0}}
    group_path = folder / f"_{name.replace('-', '_')}.yaml"
    group_path.write_text(yaml.dump(group, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return [*written, group_path]


INSPECT_TASK = '''"""inspect_ai task for this benchsmith release (generated). Run: inspect eval task.py --model ..."""

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import json_dataset
from inspect_ai.scorer import choice
from inspect_ai.solver import multiple_choice

HERE = Path(__file__).parent


@task
def benchsmith_release(config: str = "full"):
    return Task(dataset=json_dataset(str(HERE / f"{config}.jsonl")), solver=multiple_choice(), scorer=choice())
'''


def write_inspect(folder: Path, rows_by_config: dict[str, list[dict[str, Any]]]) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "task.py").write_text(INSPECT_TASK, encoding="utf-8")
    written = [folder / "task.py"]
    for config, rows in rows_by_config.items():
        path = folder / f"{config}.jsonl"
        with path.open("w", encoding="utf-8") as handle:
            for row in rows:
                if row["answer"] is None:
                    continue  # inspect's choice scorer takes one target
                sample = {"id": row["id"], "input": row["question"],
                          "choices": [o["text"] or "(그림)" for o in row["options"]],
                          "target": row["answer_letter"],
                          "metadata": {"exam": row["exam"], "subject": row["subject"], "multimodal": row["multimodal"]}}
                handle.write(json.dumps(sample, ensure_ascii=False) + "\n")
        written.append(path)
    return written


def write_vlmevalkit_tsv(path: Path, rows: list[dict[str, Any]]) -> Path:
    """VLMEvalKit's MCQ TSV: index, question, A.., answer letter, image (base64 of the first image)."""
    letters = "ABCDEFGHIJ"
    width = max((len(row["options"]) for row in rows), default=4)
    buffer = io.StringIO()
    writer = csv.writer(buffer, delimiter="\t", lineterminator="\n")
    writer.writerow(["index", "id", "question", *letters[:width], "answer", "category", "image"])
    for index, row in enumerate(rows):
        images = [image["bytes"] for image in row["question_images"]]
        options = [o["text"] for o in row["options"]] + [""] * (width - len(row["options"]))
        writer.writerow([index, row["id"], row["question"], *options, row["answer_letter"] or "",
                         row["subject"] or "", base64.b64encode(images[0]).decode() if images else ""])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(buffer.getvalue(), encoding="utf-8")
    return path
