"""The `tiny` release config: a subset from `analyze subset` published as rows, with the item
parameters that estimate accuracy on the release from them in the card and in
`tiny/estimation.json`; items changed since the subset was made are left out and said so, and a
`--like` rebuild is byte-identical."""

from __future__ import annotations

import json

import pytest
import yaml

from curation.core.errors import BenchsmithError
from curation.core.item import parse_item
from evaluation.models import resolve_model
from evaluation.runner import RunRequest, run_model
from export.build import build_release
from export.integrity import verify_checksums
from export.release_config import ReleaseConfig, load_release_config
from filtering.irt.sources import from_workspace
from filtering.irt.subset import load_subset, make_subset

from .conftest import run_cli
from .helpers import make_record

MODELS = ("longest", "shortest", "similar", "position-1", "random-1", "random-2", "random-3", "random-4")


@pytest.fixture
def answered(workspace, tmp_path):
    """24 accepted items answered by eight option-only baselines, and a 6-item subset of them."""
    records = []
    for n in range(24):
        record = make_record(f"t-{n:02d}", answer=n % 4 + 1, subject="기후학" if n % 2 else "대기역학")
        record["options"] = [{"text": "가" * (1 + (n + k) % 4) + f" 선택지 {k}"} for k in range(4)]
        records.append(parse_item({**record, "status": "accepted"}))
    workspace.store.save_items(records, author="t", stage="import")
    for name in MODELS:
        run_model(workspace, RunRequest(resolve_model(f"baseline:{name}")))
    spec = make_subset(from_workspace(workspace), k=6, seed=1)
    path = tmp_path / "subset.json"
    path.write_text(spec.model_dump_json(indent=1), encoding="utf-8")
    return workspace, spec, path


def _load(path, config, tmp_path):
    import datasets

    return datasets.load_dataset(str(path), config, cache_dir=str(tmp_path / "hf-cache"))["test"]


def test_tiny_rows_are_the_subset_and_its_parameters_round_trip(answered, tmp_path):
    workspace, spec, subset_file = answered
    changed = spec.items[2]
    rev = workspace.store.get(changed).rev
    workspace.store.update_fields(changed, {"stem": "고친 문제: 다음 중 옳은 것은?"}, expect_rev=rev, author="t",
                                  stage="annotate", reason="오타")
    config = ReleaseConfig(name="t", configs=["full", "tiny"], tiny=str(subset_file))
    result = build_release(workspace, "1.0.0", config)
    kept = sorted(i for i in spec.items if i != changed)
    assert result.counts == {"full": 24, "tiny": 5}
    assert _load(result.path, "tiny", tmp_path)["id"] == kept
    assert any("1 subset item(s) changed since the subset was made" in note and changed in note
               for note in result.notes)

    estimation = load_subset(result.path / "tiny" / "estimation.json")
    assert estimation.items == [i for i in spec.items if i != changed]
    assert estimation.all_items == spec.all_items  # every release item was in the fit
    assert estimation.discrimination == spec.discrimination and estimation.difficulty == spec.difficulty
    assert estimation.content_hashes == {i: spec.content_hashes[i] for i in kept}
    assert "tiny/estimation.json" in json.loads((result.path / "checksums.json").read_text(encoding="utf-8"))
    assert verify_checksums(result.path) == []

    card = (result.path / "README.md").read_text(encoding="utf-8")
    front = yaml.safe_load(card.split("---")[1])
    assert {c["config_name"] for c in front["configs"]} == {"full", "tiny"}
    assert "tiny/estimation.json" in card and changed in card
    position = {item: j for j, item in enumerate(spec.all_items)}
    for item in kept:  # the card's table gives each tiny item's (a, b)
        j = position[item]
        assert f"| `{item}` | {spec.discrimination[j]:.4f} | {spec.difficulty[j]:.4f} |" in card

    # the release's file estimates exactly as the subset `analyze subset` wrote (whose changed item's
    # answers are left out), each estimate within what the model's tiny answers allow
    from_release, from_subset = (_estimates(path, workspace) for path in
                                 (result.path / "tiny" / "estimation.json", subset_file))
    assert from_release == from_subset and len(from_release) == len(MODELS)
    outcomes = {}
    for run in sorted(workspace.runs_dir.iterdir()):
        manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
        lines = [json.loads(line) for line in (run / "responses.jsonl").read_text(encoding="utf-8").splitlines()]
        outcomes[manifest["model"]["name"]] = {r["item_id"]: r["outcome"] for r in lines}
    total, unseen = len(estimation.all_items), len(estimation.all_items) - len(kept)
    for model, (accuracy, answered) in from_release.items():
        right = sum(outcomes[model.split("[")[0]][item] == "correct" for item in kept)
        assert answered == len(kept) and right / total <= accuracy <= (right + unseen) / total, model


def _estimates(subset_file, workspace) -> dict[str, tuple[float, int]]:
    """`analyze estimate` through the CLI: model → (estimated accuracy, subset items answered)."""
    done = run_cli("analyze", "estimate", "--subset", str(subset_file), "--json", "-w", str(workspace.root))
    assert done.returncode == 0, done.stderr
    return {row["model"]: (row["accuracy"], row["answered"]) for row in json.loads(done.stdout)["models"]}


def test_a_like_rebuild_with_tiny_is_byte_identical(answered, tmp_path):
    workspace, _, subset_file = answered
    config_file = tmp_path / "release.yaml"
    config_file.write_text(yaml.safe_dump({"name": "t", "configs": ["full", "tiny"], "tiny": str(subset_file)}),
                           encoding="utf-8")
    first = run_cli("release", "build", "--version", "1.0.0", "--config", str(config_file), "-w", str(workspace.root))
    assert first.returncode == 0, first.stderr
    again = run_cli("release", "build", "--version", "1.0.0", "--like", "1.0.0", "--out", str(tmp_path / "again"),
                    "-w", str(workspace.root))
    assert again.returncode == 0, again.stderr
    a, b = workspace.releases_dir / "v1.0.0", tmp_path / "again"
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert "tiny/estimation.json" in {f.as_posix() for f in files}
    assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert all((a / f).read_bytes() == (b / f).read_bytes() for f in files)


def test_tiny_without_its_subset_file_is_one_clear_error(tmp_path):
    bad = tmp_path / "release.yaml"
    bad.write_text("configs: [full, tiny]\n", encoding="utf-8")
    with pytest.raises(BenchsmithError, match="no `tiny:` subset file"):
        load_release_config(bad)
    assert "tiny" not in ReleaseConfig().configs  # built only when asked for
