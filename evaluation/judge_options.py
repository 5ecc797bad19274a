"""The answer judge on the command line: `--judge SPEC` and `--judge-all` (or `[judge]` in
benchsmith.toml: `model`, `all`) on `run`, `evaluate`, `runs import` and `runs judge`. After the
run, `evaluation.answer_judge.judge_answers` judges what no checker decided (every response too,
with `--judge-all`, for comparison)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from curation.core.workspace import Workspace

JudgeOption = Annotated[str | None, typer.Option(
    "--judge", help="answer judge (a model spec) for the responses no checker decides; default: [judge] model "
                    "in benchsmith.toml; `none`: no judge")]
JudgeAllOption = Annotated[bool, typer.Option(
    "--judge-all", help="the judge also judges every decided response (KMMMU's protocol), for comparison: "
                        "the checkers' verdicts stand, the judge's is written beside them")]


@dataclass(frozen=True)
class AnswerJudge:
    spec: Any  # evaluation.models.ModelSpec
    judge_all: bool = False
    concurrency: int = 8

    def judge(self, ws: Workspace, run_dir: Path, on_record: Callable[[dict[str, Any]], None] | None = None
              ) -> dict[str, Any]:
        from evaluation.answer_judge import judge_answers
        from evaluation.sender import SenderSettings

        settings = SenderSettings(concurrency=self.concurrency, timeout_s=self.spec.timeout_s,
                                  max_retries=self.spec.max_retries)
        return judge_answers(ws, run_dir, self.spec, settings, judge_all=self.judge_all, on_record=on_record)


def answer_judge(ws: Workspace, judge: str | None, judge_all: bool, models_file: Path | None = None,
                 concurrency: int = 8) -> AnswerJudge | None:
    """The judge the command line (else the workspace's config) asks for; None for none."""
    from evaluation.models import resolve_model

    chosen = judge if judge is not None else ws.judge_model
    if chosen is None or chosen.strip().lower() == "none":
        return None
    spec = resolve_model(chosen, models_file or ws.root / "models.yaml")
    return AnswerJudge(spec, judge_all or ws.judge_all, concurrency)


def judge_line(summary: dict[str, Any]) -> str:
    """One line saying what the judge did to a run."""
    verdicts = summary["verdicts"]
    line = (f"judge {summary['judge']} on {summary['run_id']}: {summary['asked']} asked ({summary['sent']} sent), "
            f"true {verdicts['true']}, false {verdicts['false']}, no verdict {verdicts['undecided']}; "
            f"{summary['decided']} decided by the judge")
    if summary.get("judge_all"):
        beside = summary["with_checker"]
        line += f"; beside the checkers' verdicts: agrees {beside['agree']}, disagrees {beside['disagree']}"
    return line + f"; log: {summary['log']}"
