"""A workspace for the Verdicts tests: six items of the project's own (five choice items made as
KMMMU's importer makes them, one with a judged key), one model's responses imported as a KMMMU
judge CSV (its `is_correct` kept beside our checker's verdict), and users. The model's name and
the run id are chosen so that no page would show them by chance.

What each response is, and so where it stands in the queue:
  v01  key 4, "정답: 4", the file's judge: correct       checker correct, judge agrees  → audit pool
  v02  key 2, "정답: 3", the file's judge: correct       checker wrong, judge disagrees → first
  v03  key 1, a loop and no answer, judge: incorrect     checker unparseable            → audit pool
  v04  key 3, "정답: 3", judge: correct                  checker correct                → audit pool
  v05  key 2, "정답: 1", judge: incorrect                checker wrong                  → audit pool
  v06  a judged key (no checker), judge: correct         undecided                      → second
"""

from __future__ import annotations

from pathlib import Path

from annotator.review import auth
from annotator.review.tables import ensure_tables
from curation.core.item import parse_item
from curation.core.workspace import Workspace, init_workspace
from evaluation.imported_runs import import_run

from .blind_support import PASSWORDS, ROLES  # the same users: the blind-scoring tests' page session logs in
from .runs_import_support import add_kmmmu_items, write_kmmmu_csv

MODEL = "zircon-model-q7"
RUN_ID = "run-verdict-5521"
OPTIONS = ("고기압의 발달", "저기압의 통과", "전선의 정체", "해풍의 유입")
LOOP = "다시 계산하면 기온 감률은 건조 단열 감률보다 작으므로 "
SUBJECTS = {"v01": "기상학", "v02": "기상학", "v03": "대기물리", "v04": "대기물리", "v05": "기상학", "v06": "기후학"}
KEYS = {"v01": 4, "v02": 2, "v03": 1, "v04": 3, "v05": 2}
RESPONSES = {"v01": ("풀이: 해풍은 낮에 분다.\n정답: 4", "True"),
             "v02": ("풀이: 전선이 머무르면 비가 온다.\n정답: 3", "True"),
             "v03": ("풀이를 시작한다. " + LOOP * 30, "False"),
             "v04": ("정답: 3", "True"),
             "v05": ("정답: 1", "False"),
             "v06": ("한반도의 장마는 정체 전선 때문이며, 북태평양 고기압이 확장하며 북상한다.", "True")}
JUDGED_STEM = "한반도 장마의 원인을 한 문장으로 설명하시오."


def question(item_id: str) -> str:
    if item_id == "v06":
        return JUDGED_STEM
    return (f"{item_id}: 다음 중 맑은 날 오후 해안에서 바다 쪽에서 바람이 부는 까닭으로 알맞은 것은? (문항 {item_id})"
            "\n\n선택지:\n" + "\n".join(f"({n}) {text}" for n, text in enumerate(OPTIONS, start=1)))


def build(root: Path, *, audit: int | None = None) -> Workspace:
    workspace = init_workspace(root)
    if audit is not None:
        config = root / "benchsmith.toml"
        config.write_text(config.read_text(encoding="utf-8") + f"\n[verdicts]\naudit = {audit}\n", encoding="utf-8")
    items = write_kmmmu_csv(root.parent / f"{root.name}-items.csv", [
        {"": item_id, "question": question(item_id), "answer": str(key), "question_type": "객관식(단일정답)",
         "subject_macro": SUBJECTS[item_id]} for item_id, key in KEYS.items()])
    add_kmmmu_items(workspace, items)
    judged = {"id": "v06", "source": {"exam": "KMMMU", "subject": SUBJECTS["v06"]}, "stem": JUDGED_STEM,
              "answer": {"format": "judged", "reference": "정체 전선(장마 전선)이 북태평양 고기압과 함께 북상하기 때문",
                         "rubric": "정체 전선을 말하면 정답"}}
    workspace.store.save_items([parse_item(judged)], author="test", stage="import")
    responses = write_kmmmu_csv(root.parent / f"{root.name}-{MODEL}-1-llm-judge.csv", [
        {"": item_id, "question": question(item_id), "response": text, "is_correct": said}
        for item_id, (text, said) in RESPONSES.items()])
    import_run(workspace, responses, MODEL, run_id=RUN_ID)
    ensure_tables(workspace.store.engine)
    for name, role in ROLES.items():
        auth.add_user(workspace.store.engine, name, role, PASSWORDS[name])
    return workspace


def secrets_served() -> list[str]:
    """What must never reach an expert: the model's name and the run id (and a task's key, `verdict-N`)."""
    return [MODEL, RUN_ID]
