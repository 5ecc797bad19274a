import io
import json
from pathlib import Path

import pytest
import yaml
from PIL import Image

from curation.core.errors import BenchsmithError
from curation.core.item import parse_item
from curation.importers import import_file
from export.build import build_release
from export.integrity import verify_checksums
from export.publish import publish
from export.release_config import ReleaseConfig, load_release_config

from .helpers import make_record

ALL_STATUSES = ReleaseConfig(name="t", statuses=["extracted", "in_review", "accepted"])


def _png(color: str) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (6, 4), color).save(buffer, "PNG")
    return buffer.getvalue()


@pytest.fixture
def filled(workspace):
    chart, option_image = workspace.blobs.put(_png("red"), "png"), workspace.blobs.put(_png("blue"), "png")
    records = []
    for n in range(12):
        record = make_record(f"m-{n:02d}", answer=n % 4 + 1, subject="기후학" if n % 2 else "대기역학")
        record["status"] = "accepted"
        if n == 3:
            record["images"] = [{"blob": chart, "kind": "raster"}]
        if n == 4:
            record["options"][1] = {"text": "", "image": {"blob": option_image, "kind": "vector"}}
        if n == 5:
            record["flags"] = {"korea_specific": True}
            record["stem"] = "우리나라 장마철의 특징은?"
            record["explicit_variant"] = "한국 장마철의 특징은?"
        if n == 6:
            record["rationale"] = {"text": "전선이 정체하기 때문이다.", "status": "adopted"}
        if n == 7:
            record["status"] = "excluded"
        records.append(parse_item(record))
    workspace.store.save_items(records, author="t", stage="import")
    return workspace


def _load(path, config, tmp_path):
    import datasets

    return datasets.load_dataset(str(path), config, cache_dir=str(tmp_path / "hf-cache"))["test"]


def test_every_config_loads_with_images_and_counts_matching_the_store(filled, tmp_path):
    result = build_release(filled, "1.0.0", ReleaseConfig(name="t"))
    assert result.counts == {"full": 11, "korea_specific": 1, "multimodal": 2, "reasoning": 1, "explicit": 1}
    assert any("hard" in note for note in result.notes)
    full = _load(result.path, "full", tmp_path)
    assert len(full) == filled.store.count() - 1  # the excluded item stays out
    assert sorted(full["id"]) == full["id"]
    row3 = full[full["id"].index("m-03")]
    assert row3["question_images"][0].size == (6, 4) and row3["multimodal"]
    row4 = full[full["id"].index("m-04")]
    assert row4["options"][1]["image"].size == (6, 4) and row4["answer"] == 1 and row4["answer_letter"] == "A"
    explicit = _load(result.path, "explicit", tmp_path)
    assert explicit[0]["question"] == "한국 장마철의 특징은?" and explicit[0]["question_original"] == "우리나라 장마철의 특징은?"
    assert _load(result.path, "reasoning", tmp_path)[0]["rationale"] == "전선이 정체하기 때문이다."
    assert verify_checksums(result.path) == []
    card = (result.path / "README.md").read_text(encoding="utf-8")
    front = yaml.safe_load(card.split("---")[1])
    assert {c["config_name"] for c in front["configs"]} == set(result.counts)
    assert front["license"] and front["task_categories"] and front["size_categories"] == ["n<1K"]
    assert "Canary GUID" in card and "First release: 11 items." in card


def test_a_rebuild_is_byte_identical(filled, tmp_path):
    first = build_release(filled, "1.0.0", ALL_STATUSES, tmp_path / "a")
    second = build_release(filled, "1.0.0", ALL_STATUSES, tmp_path / "b")
    files_a = sorted(p.relative_to(first.path) for p in first.path.rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(second.path) for p in second.path.rglob("*") if p.is_file())
    assert files_a == files_b
    assert all((first.path / f).read_bytes() == (second.path / f).read_bytes() for f in files_a)


def test_changing_one_item_changes_that_row_the_hash_and_the_changelog(filled):
    first = build_release(filled, "1.0.0", ALL_STATUSES)
    filled.store.update_fields("m-02", {"stem": "고친 문제: 지균풍의 조건은?"}, expect_rev=1, author="alice",
                               stage="annotate", reason="OCR 오류 수정")
    second = build_release(filled, "1.1.0", ALL_STATUSES)
    before = json.loads((first.path / "release.json").read_text())["row_hashes"]
    after = json.loads((second.path / "release.json").read_text())["row_hashes"]
    assert [k for k in before if before[k] != after[k]] == ["m-02"]
    assert first.content_hash != second.content_hash
    log = second.changelog
    assert (log.previous, log.added, log.removed) == ("1.0.0", [], [])
    assert log.changed == [("m-02", "annotate: OCR 오류 수정 (stem)")]
    assert "changed `m-02`: annotate: OCR 오류 수정 (stem)" in (second.path / "README.md").read_text(encoding="utf-8")


def _harness_release_module(release_path):
    """`harness/benchsmith_release.py` of a built release, loaded as lm_eval loads its utils."""
    folder = release_path / "harness" / "lm_eval"
    namespace: dict = {"__file__": str(folder / "utils.py")}
    exec(compile((folder / "utils.py").read_text(encoding="utf-8"), "utils.py", "exec"), namespace)
    return namespace["release"]


def test_items_of_every_format_are_released_with_their_key_and_choice_rows_keep_their_hashes(filled, tmp_path):
    first = build_release(filled, "1.0.0", ALL_STATUSES)
    numeric = make_record("n-01", answer={"format": "numeric", "value": "9.8", "unit": "℃/km"}, n_options=0)
    numeric["points"] = 3
    text = make_record("t-01", answer={"format": "text", "accepted": ["편서풍"], "strict": True}, n_options=0)
    every = make_record("m-12", answer={"format": "choice", "options": [1, 3], "require_all": True})  # no taxonomy
    filled.store.save_items([parse_item(r | {"status": "accepted"}) for r in (numeric, text, every)], author="t",
                            stage="import")
    second = build_release(filled, "1.1.0", ALL_STATUSES)
    assert second.counts["full"] == first.counts["full"] + 3 and not any("left out" in n for n in second.notes)
    before = json.loads((first.path / "release.json").read_text())["row_hashes"]
    after = json.loads((second.path / "release.json").read_text())["row_hashes"]
    # the key columns added nothing to a choice row's content: its hash is what it was
    assert {k: v for k, v in after.items() if k not in ("m-12", "n-01", "t-01")} == before
    assert second.changelog.added == ["m-12", "n-01", "t-01"]
    import pyarrow.parquet as pq

    rows = {row["id"]: row for path in sorted((second.path / "data" / "full").glob("*.parquet"))
            for row in pq.read_table(path).to_pylist()}
    assert (rows["m-12"]["answers"], rows["m-12"]["answer"], rows["m-12"]["question_format"]) == (
        [1, 3], None, "multiple_answers")  # the option-number columns as before
    assert json.loads(rows["m-12"]["key"]) == {"format": "choice", "options": [1, 3], "require_all": True}
    assert (rows["m-12"]["answer_format"], rows["m-12"]["answer_text"], rows["m-12"]["points"]) == ("choice", "1, 3", None)
    assert (rows["n-01"]["answer_format"], rows["n-01"]["answer_text"], rows["n-01"]["points"]) == (
        "numeric", "9.8 ℃/km", 3.0)
    assert json.loads(rows["n-01"]["key"]) == {"format": "numeric", "value": "9.8", "tolerance": None,
                                               "relative_tolerance": None, "unit": "℃/km"}
    assert (rows["n-01"]["answer"], rows["n-01"]["answers"], rows["n-01"]["options"]) == (None, [], [])
    # the card counts the formats and names their checkers
    from scoring.portable import checker_versions

    card = (second.path / "README.md").read_text(encoding="utf-8")
    versions = checker_versions()
    for fmt, count in (("choice", 12), ("numeric", 1), ("text", 1)):
        assert f"| {fmt} | `{versions[fmt]}` | {count} |" in card, fmt
    # the harness scores every format with the release's copy of the checkers
    release = _harness_release_module(second.path)
    assert release.score("정답: 1, 3", rows["m-12"])["correct"] and not release.score("정답: 1", rows["m-12"])["correct"]
    assert release.score("풀이 …\n\\boxed{9.8} ℃/km", rows["n-01"])["outcome"] == "correct"
    assert release.score("정답: 9.7", rows["n-01"])["outcome"] == "wrong"
    assert release.score("\\boxed{무역풍}", rows["t-01"])["outcome"] == "wrong"  # strict
    assert release.score("\\boxed{9.8", rows["n-01"], "length")["outcome"] == "error"
    # the typed key comes back from the row: `evaluate --release` and `run --from` score what the store holds
    from evaluation.release_records import release_rows

    for item_id in ("m-12", "n-01", "t-01", "m-03"):
        stored = filled.store.get(item_id).item
        item = release_rows([rows[item_id]])[0].to_item(filled.blobs.put)
        assert (item.answer, item.points) == (stored.answer, stored.points), item_id


def test_a_release_built_before_the_key_columns_reads_its_choice_keys_from_the_option_numbers():
    from evaluation.release_records import ReleaseRow

    old = {"id": "m-01", "question": "q", "options": [{"text": f"o{n}"} for n in range(4)], "answer": None,
           "answers": [1, 3], "question_format": "multiple_answers", "exam": "x"}
    item = ReleaseRow.model_validate(old).to_item(lambda data, ext: "")
    assert item.answer.model_dump() == {"format": "choice", "options": [1, 3], "require_all": True}


def test_lm_eval_yaml_parses_and_names_existing_functions(filled):
    result = build_release(filled, "1.0.0", ReleaseConfig(name="t"))
    folder = result.path / "harness" / "lm_eval"

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!function", lambda loader, node: ("function", loader.construct_scalar(node)))
    tasks = [yaml.load(path.read_text(encoding="utf-8"), Loader=Loader) for path in sorted(folder.glob("t_*.yaml"))]
    assert {task["task"] for task in tasks} == {f"t_{name}" for name in result.counts}
    # no tag or group over the configs: they overlap, and one run of them all would send an item twice
    assert not any("tag" in task or "group" in task for task in tasks) and not list(folder.glob("_*.yaml"))
    utils_source = (folder / "utils.py").read_text(encoding="utf-8")
    namespace: dict = {"__file__": str(folder / "utils.py")}
    exec(compile(utils_source, "utils.py", "exec"), namespace)  # the shipped helper module, as lm_eval loads it
    assert [m["metric"] for m in tasks[0]["metric_list"]] == ["acc", "unparseable", "error", "undecided"]
    for task in tasks:
        keys = ("custom_dataset", "doc_to_text", "doc_to_target", "process_results", "doc_to_image")
        for key in (k for k in keys if k in task):
            kind, target = task[key]
            assert kind == "function" and target.split(".")[1] in namespace
        assert task["generation_kwargs"]["until"] == [] and task["generation_kwargs"]["max_gen_toks"] >= 1024
        assert task["doc_to_image"] == ("function", "utils.doc_to_image")  # every task: lm_eval batches mix tasks
    release = namespace["release"]
    multi = {"options": [{"text": "a"}] * 4, "key": json.dumps({"format": "choice", "options": [1, 3]})}
    assert release.score("정답: ③", multi)["correct"] and not release.score("정답: 2", multi)["correct"]
    every = {**multi, "key": json.dumps({"format": "choice", "options": [1, 3], "require_all": True})}
    assert release.score("정답: 1, 3", every)["correct"] and not release.score("정답: 1", every)["correct"]
    assert release.score("<think>3번", multi)["outcome"] == "error"  # cut off inside its thinking
    assert release.outcome_metrics(release.score("<think>3번", multi)) == {
        "acc": 0.0, "unparseable": 0.0, "error": 1.0, "undecided": 0.0}
    import scoring.portable

    portable = Path(scoring.portable.__file__).parent
    copied = result.path / "harness" / "benchsmith_scoring"
    sources = sorted(p.relative_to(portable) for p in portable.rglob("*.py"))
    assert sorted(p.relative_to(copied) for p in copied.rglob("*") if p.is_file()) == sources
    assert all((copied / name).read_bytes() == (portable / name).read_bytes() for name in sources)  # byte for byte
    readme = (result.path / "harness" / "README.md").read_text(encoding="utf-8")
    assert "lm_eval --model local-chat-completions" in readme and "--model openai-api/local/MODEL" in readme


def test_release_of_real_qnet_items_builds_and_reloads(workspace, realdata, tmp_path):
    report = import_file(realdata / "qnet_csv" / "disaster-prev-2021-2.csv", workspace.store)
    result = build_release(workspace, "0.1.0", ReleaseConfig(name="qnet", statuses=["extracted"]))
    full = _load(result.path, "full", tmp_path)
    assert len(full) == report.created == 100
    assert set(full["answer"]) <= {1, 2, 3, 4}


def test_bad_release_inputs_are_clear_errors(filled, tmp_path):
    build_release(filled, "1.0.0", ReleaseConfig(name="t"))
    with pytest.raises(BenchsmithError, match="already exists"):
        build_release(filled, "1.0.0", ReleaseConfig(name="t"))
    with pytest.raises(BenchsmithError, match="expected X.Y.Z"):
        build_release(filled, "1.0", ReleaseConfig(name="t"))
    with pytest.raises(BenchsmithError, match="no items with status"):
        build_release(filled, "2.0.0", ReleaseConfig(name="t", statuses=["in_review"]))
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: t\nstatuses: [finished]\nshard_rows: 0\n", encoding="utf-8")
    with pytest.raises(BenchsmithError, match="statuses.1") as caught:
        load_release_config(bad)
    assert "shard_rows" in str(caught.value)
    assert not list(filled.releases_dir.glob(".*building*"))  # no half-written release left


def test_publish_dry_run_lists_files_and_refuses_a_tampered_release(filled):
    result = build_release(filled, "1.0.0", ReleaseConfig(name="t"))
    lines = publish(result.path, "org/name", dry_run=True)
    assert lines[0].startswith("would upload") and "tag v1.0.0" in lines[0]
    assert any("data/full/test-00000-of-00001.parquet" in line for line in lines)
    (result.path / "README.md").write_text("tampered", encoding="utf-8")
    with pytest.raises(BenchsmithError, match="differ from checksums.json: README.md"):
        publish(result.path, "org/name", dry_run=True)


def test_croissant_metadata_validates(filled):
    pytest.importorskip("mlcroissant")
    from export.integrity import validate_croissant

    result = build_release(filled, "1.0.0", ReleaseConfig(name="t"))
    assert validate_croissant(result.path / "croissant.json") == []


def test_evaluate_a_release_with_the_runners_in_a_fresh_workspace(filled, tmp_path):
    from curation.core.workspace import init_workspace

    from .conftest import run_cli

    result = build_release(filled, "1.0.0", ReleaseConfig(name="t"))
    fresh = init_workspace(tmp_path / "researcher")
    done = run_cli("evaluate", "--release", f"{result.path}:multimodal", "-m", "baseline:longest?vision=true",
                   "-m", "baseline:last", "-w", str(fresh.root))
    assert done.returncode == 0, done.stderr
    assert "n=2: 2 items asked" in done.stdout  # the vision model
    assert "n=2: 0 items asked" in done.stdout and "2 items not answered" in done.stdout  # text-only: in n, not sent
    assert "report:" in done.stdout and "workspace:" not in done.stdout  # -w given: nothing to say
    assert fresh.store.ids() == []  # the release is read from its parquet; the store stays as it was
    from evaluation.datasets import ReleaseDataset

    item = ReleaseDataset(result.path, "multimodal", fresh.blobs).lookup(["m-04"])["m-04"]
    assert item.options[1].image is not None and fresh.blobs.exists(item.options[1].image.blob)
    assert len(list((fresh.root / "reports" / "t-v1.0.0-multimodal").glob("*/report.md"))) == 1
    again = run_cli("evaluate", "--release", str(result.path), "-m", "baseline:longest", "-w", str(fresh.root))
    assert again.returncode == 0 and "n=11: 9 items asked" in again.stdout  # 11 rows, 2 with images
    assert "2 items not answered" in again.stdout
    missing = run_cli("evaluate", "--release", f"{result.path}:hard", "-m", "baseline:longest", "-w", str(fresh.root))
    assert missing.returncode == 1 and "no config 'hard'" in missing.stderr


def test_release_build_like_reuses_the_recorded_config(filled, tmp_path):
    from tests.conftest import run_cli

    config = tmp_path / "release.yaml"
    config.write_text("name: like-test\nconfigs: [full, multimodal]\nshard_rows: 5\nrow_group_rows: 2\n"
                      "license: other\nlicense_name: exam-terms\n", encoding="utf-8")
    ws = str(filled.root)
    first = run_cli("release", "build", "--version", "1.0.0", "--config", str(config), "-w", ws, "--json")
    assert first.returncode == 0, first.stderr
    second = run_cli("release", "build", "--version", "1.0.1", "--like", "v1.0.0", "-w", ws, "--json")
    assert second.returncode == 0, second.stderr
    summary = json.loads(second.stdout)
    manifests = [json.loads((filled.releases_dir / v / "release.json").read_text()) for v in ("v1.0.0", "v1.0.1")]
    assert manifests[0]["config"] == manifests[1]["config"]
    assert summary["changelog"]["previous"] == "1.0.0" and set(summary["configs"]) == {"full", "multimodal"}
    assert len(manifests[1]["configs"]["full"]["files"]) == 3  # 11 rows, 5 per shard: the recorded shard size
    card = yaml.safe_load((filled.releases_dir / "v1.0.1" / "README.md").read_text(encoding="utf-8").split("---")[1])
    assert (card["license"], card["license_name"], card["license_link"]) == ("other", "exam-terms", "LICENSE.md")
    assert "Exam content remains" in (filled.releases_dir / "v1.0.1" / "LICENSE.md").read_text(encoding="utf-8")
    missing = run_cli("release", "build", "--version", "2.0.0", "--like", "v9.9.9", "-w", ws)
    assert missing.returncode != 0 and "no release v9.9.9" in missing.stderr
    both = run_cli("release", "build", "--version", "2.0.0", "--like", "v1.0.0", "--config", str(config), "-w", ws)
    assert both.returncode != 0 and "give one" in both.stderr


def test_prompts_built_from_the_store_item_equal_those_read_back_from_the_row(filled):
    from export.harness_scoring import prompt_record
    from export.rows import item_row

    record = filled.store.get("m-04").item.to_record()
    record["paraphrase"] = {"text": "바꿔 쓴 질문", "original": record["stem"], "status": "accepted"}
    paraphrased = parse_item(record)
    for source in [s.item for s in filled.store.iter_items()] + [paraphrased]:
        for explicit in (False, True):
            row = item_row(source, filled.blobs, explicit=explicit)
            assert prompt_record(row, filled.blobs, "standard", source) == prompt_record(row, filled.blobs, "standard")


def test_a_release_build_forks_no_process_and_writes_its_harness_folder(filled):
    """A library call must not fork while the caller's connections and threads are live."""
    import os

    forks: list[int] = []
    os.register_at_fork(before=lambda: forks.append(os.getpid()))
    result = build_release(filled, "1.0.0", ReleaseConfig(name="t"))
    assert forks == []
    assert (result.path / "harness" / "README.md").is_file() and (result.path / "harness" / "lm_eval").is_dir()
    verify_checksums(result.path)
