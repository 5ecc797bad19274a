"""`benchsmith runs import`, timed from the CLI's start to its exit (a subprocess, as a user runs it).
Prints figures; asserts nothing.

    python benchmarks/runs_import_bench.py [--repeats 5] [--samples 10000] [--skip-kmmmu] [--skip-lm-eval]

- KMMMU: the four judge CSVs of ../shared/realdata/kmmmu_judge (100 items × 4 models = 400 rows),
  their items in a workspace first (made from the first CSV as tests/runs_import_support.py makes
  them); imported with their checkers, no judge. Figures: the 400 rows in one command (four files,
  one --model each), each file on its own, and the sum of those four.
- lm-eval: a store of `--samples` generated items and a `samples_TASK_DATE.jsonl` of as many
  generated samples in lm-eval 0.4's `--log_samples` shape (doc with id and question, arguments,
  resps, filtered_resps, metrics), the replies in the forms real models use; imported whole.

Each repeat imports into a fresh run (`--run-id`), so nothing is skipped as already imported.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))

from curation.core.item import parse_item  # noqa: E402
from curation.core.workspace import Workspace, init_workspace  # noqa: E402

CIRCLED = "①②③④⑤"
SUBJECTS = ["기상학", "기후학", "대기물리", "일기분석", "대기관측"]


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3]) if Path("/proc/loadavg").exists() else "?"


def cli(*args: str) -> float:
    """Seconds from the CLI's start to its exit; a failure stops the bench with its stderr."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "benchsmith.cli", *args], capture_output=True, text=True, cwd=HERE,
                          env={**os.environ, "PYTHONPATH": str(HERE)})
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"benchsmith {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return elapsed


# -- generated items and an lm-eval samples file -------------------------------------------------
def generated_items(n: int) -> list[dict]:
    """n four-option items with distinct stems (the project's own text)."""
    items = []
    for i in range(1, n + 1):
        subject = SUBJECTS[i % len(SUBJECTS)]
        items.append({
            "id": f"gen-{i:06d}", "source": {"exam": "생성 문항", "subject": subject, "number": i},
            "stem": f"{i}번: 고도 {i % 13 + 1} km에서 기온이 {i % 9 + 2}도 낮아질 때 {subject}에서 옳은 설명은?",
            "options": [{"text": f"설명 {k}: 기온 감률이 {k * (i % 5 + 1)}도/km이다"} for k in range(1, 5)],
            "answer": i % 4 + 1, "status": "accepted"})
    return items


def reply(i: int, answer: int) -> str:
    """The reply of sample i: right about two times in three, in one of the forms models use."""
    h = int.from_bytes(hashlib.sha256(str(i).encode()).digest()[:4], "big")
    option = answer if h % 3 else h % 4 + 1
    forms = [f"정답: {CIRCLED[option - 1]}", json.dumps({"정답": option}, ensure_ascii=False), f"Answer: {'ABCD'[option - 1]}",
             f"각 보기를 살펴보면 {option}번이 조건을 만족한다.\n\n따라서 정답: {option}",
             f"<think>보기를 하나씩 본다.</think>\n{{\"정답\": {option}}}", "잘 모르겠습니다."]
    return forms[h // 7 % len(forms)]


def lm_eval_sample(index: int, item: dict) -> dict:
    """One line of lm-eval 0.4's samples file for a `generate_until` task over a release's rows."""
    doc = {"id": item["id"], "question": item["stem"], "options": [{"text": o["text"], "image": None} for o in item["options"]],
           "answer": item["answer"], "answers": [item["answer"]], "exam": item["source"]["exam"],
           "subject": item["source"]["subject"]}
    prompt = f"[문제]\n{item['stem']}\n[선택지]\n" + "\n".join(f"{k}. {o['text']}" for k, o in enumerate(item["options"], 1))
    text = reply(index, item["answer"])
    return {"doc_id": index, "doc": doc, "target": str(item["answer"]),
            "arguments": {"gen_args_0": {"arg_0": prompt, "arg_1": {"until": [], "max_gen_toks": 4096, "temperature": 0.0}}},
            "resps": [[text]], "filtered_resps": [text], "filter": "none", "metrics": ["acc"],
            "doc_hash": hashlib.sha256(item["id"].encode()).hexdigest(), "prompt_hash": hashlib.sha256(prompt.encode()).hexdigest(),
            "target_hash": hashlib.sha256(str(item["answer"]).encode()).hexdigest(), "acc": 0.0}


def lm_eval_bench(root: Path, samples: int, repeats: int) -> dict:
    ws = init_workspace(root / "lm-eval-ws")
    records = generated_items(samples)
    started = time.perf_counter()
    ws.store.save_items([parse_item(record) for record in records], author="bench", stage="bench")
    stored_s = time.perf_counter() - started
    log = root / "samples_bench-full_2026-12-01T00-00-00.000000.jsonl"
    log.write_text("".join(json.dumps(lm_eval_sample(i, item), ensure_ascii=False) + "\n"
                           for i, item in enumerate(records)), encoding="utf-8")
    times = [cli("runs", "import", str(log), "--model", "lm-eval-model", "--run-id", f"lm-eval-{repeat}",
                 "-w", str(ws.root)) for repeat in range(repeats)]
    return {"samples": samples, "file_mb": round(log.stat().st_size / 2**20, 1), "store_s": round(stored_s, 1),
            "times_s": [round(t, 2) for t in times], "median_s": round(statistics.median(times), 2)}


# -- KMMMU -------------------------------------------------------------------------------------
def kmmmu_bench(root: Path, repeats: int) -> dict | None:
    from tests.conftest import realdata_dir
    from tests.runs_import_support import add_kmmmu_items

    found = realdata_dir()
    if found is None:
        return None
    files = sorted((found / "kmmmu_judge").glob("*.csv"))
    ws: Workspace = init_workspace(root / "kmmmu-ws")
    add_kmmmu_items(ws, files[0])
    medians = {}
    for path in files:
        times = [cli("runs", "import", str(path), "--model", path.stem, "--run-id", f"{path.stem}-{repeat}",
                     "-w", str(ws.root)) for repeat in range(repeats)]
        medians[path.name] = round(statistics.median(times), 2)
    together = []
    for repeat in range(repeats):  # one command; each repeat into a fresh workspace holding the same items
        again = init_workspace(root / f"kmmmu-ws-{repeat}")
        add_kmmmu_items(again, files[0])
        together.append(cli("runs", "import", *map(str, files), *(f"--model={path.stem}" for path in files),
                            "-w", str(again.root)))
    return {"files": medians, "rows": 100 * len(files), "sum_of_medians_s": round(sum(medians.values()), 2),
            "one_command_s": [round(t, 2) for t in together], "one_command_median_s": round(statistics.median(together), 2)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--skip-kmmmu", action="store_true")
    parser.add_argument("--skip-lm-eval", action="store_true")
    args = parser.parse_args()
    print(f"cores {os.cpu_count()}, load {load()}, repeats {args.repeats}")
    startup = [cli("runs", "--help") for _ in range(args.repeats)]
    print(f"CLI start (runs --help): median {statistics.median(startup):.2f} s")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if not args.skip_kmmmu:
            kmmmu = kmmmu_bench(root, args.repeats)
            if kmmmu is None:
                print("KMMMU: ../shared/realdata is absent: skipped")
            else:
                for name, median in kmmmu["files"].items():
                    print(f"KMMMU {name}: 100 rows, median {median:.2f} s")
                print(f"KMMMU all {kmmmu['rows']} rows, one command (four files): median {kmmmu['one_command_median_s']:.2f} s "
                      f"{kmmmu['one_command_s']} (target ≤ 5 s)")
                print(f"KMMMU all {kmmmu['rows']} rows, four commands: sum of medians {kmmmu['sum_of_medians_s']:.2f} s")
        if not args.skip_lm_eval:
            lm_eval = lm_eval_bench(root, args.samples, args.repeats)
            print(f"lm-eval {lm_eval['samples']} samples ({lm_eval['file_mb']} MB; store written in {lm_eval['store_s']} s): "
                  f"median {lm_eval['median_s']:.2f} s {lm_eval['times_s']} (target ≤ 10 s)")
    print(f"load after: {load()}")


if __name__ == "__main__":
    main()
