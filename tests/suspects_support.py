"""A workspace whose answers put one key in doubt, built through the CLI: items imported, one
key changed in the store, models answering from a local OpenAI-compatible server (every model
picks the item's right option on the changed one), then `analyze suspects`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tests.conftest import run_cli

ITEMS, MODELS = 16, 6
MISKEYED, RIGHT, STORED_KEY = "sq-05", 3, 1  # the item, its right option, the key the store carries


def records() -> list[dict]:
    rng = np.random.default_rng(11)
    rows = []
    for n in range(1, ITEMS + 1):
        item_id = f"sq-{n:02d}"
        answer = RIGHT if item_id == MISKEYED else int(rng.integers(1, 5))
        rows.append({"id": item_id, "source": {"exam": "의심 시험"}, "stem": f"[{item_id}] 다음 중 옳은 것은?",
                     "options": [{"text": f"{item_id} 보기 {k}"} for k in range(1, 5)], "answer": answer})
    return rows


def responder_for(rows: list[dict]):  # noqa: ANN201
    """Model mN: stronger with N; on an item, the right option with a chance that falls with the
    item's number, else another option (seeded by model and item)."""
    right = {r["id"]: r["answer"] for r in rows}

    def responder(prompt: str, body: dict) -> str:
        m = int(body["model"][1:])
        item_id = next(i for i in right if f"[{i}]" in prompt)
        draw = np.random.default_rng([m, int(item_id[3:])])
        chance = 0.98 if item_id == MISKEYED else 0.3 + 0.1 * m + 0.25 * (1 - int(item_id[3:]) / ITEMS)
        option = right[item_id] if draw.random() < chance else int((right[item_id] + draw.integers(0, 3)) % 4 + 1)
        return json.dumps({"정답": option})

    return responder


@dataclass
class Built:
    ws: Path
    specs: list[str]  # the -m arguments of the models (their URL is the server's)


def model_specs(url: str) -> list[str]:
    return [x for m in range(MODELS) for x in ("-m", f"openai-compatible:m{m}@{url}/v1")]


def build(tmp_path: Path, url: str) -> Built:
    """The workspace, answered by the server at `url`, with suspects.json written."""
    from curation.core.workspace import open_workspace

    ws = tmp_path / "ws"
    assert run_cli("init", str(ws)).returncode == 0
    pool = tmp_path / "pool.jsonl"
    pool.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records()), encoding="utf-8")
    done = run_cli("items", "import", str(pool), "-w", str(ws))
    assert done.returncode == 0, done.stderr
    rev = open_workspace(ws).store.get(MISKEYED).rev
    done = run_cli("items", "edit", MISKEYED, "--set", f"answer={STORED_KEY}", "--expect-rev", str(rev),
                   "--reason", "seeded mis-key", "-w", str(ws))
    assert done.returncode == 0, done.stderr
    specs = model_specs(url)
    done = run_cli("run", *specs, "--no-progress", "-w", str(ws))
    assert done.returncode == 0, done.stderr
    done = run_cli("analyze", "suspects", "--json", "--bootstrap", "5", "-w", str(ws))
    assert done.returncode == 0, done.stderr
    return Built(ws, specs)
