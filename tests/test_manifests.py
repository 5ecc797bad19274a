"""The run manifest, the generation log and the dedup report are read through their types: files
written by the current code and in the shapes earlier versions wrote load, and writing a loaded
file back gives its bytes again (the expected shapes are written out here by hand)."""

from __future__ import annotations

import json

import pytest

from curation.core.errors import BenchsmithError
from curation.core.item import parse_item
from curation.steps.dedup import DedupConfig
from curation.steps.dedup_report import DedupReport, latest_dedup_report
from curation.steps.dedup_stage import run_dedup
from evaluation.backends.base import BackendError, ChatRequest, Completion, Message
from evaluation.datasets import StoreDataset
from evaluation.generation import _finish
from evaluation.metrics import load_run
from evaluation.models import resolve_model
from evaluation.records import GenerationManifest, GenerationRecord, RunManifest, read_jsonl_records
from evaluation.release_records import ReleaseManifest
from evaluation.runlog import MANIFEST, manifest_json, read_answer_manifest, read_manifest
from evaluation.runner import RunRequest, run_model
from evaluation.sender import Job
from filtering.matrix import build_matrix
from tests.eval_support import seed_items
from tests.helpers import make_record

SPEC_DUMP = {"name": "old-model", "backend": "openai-compatible", "model": "m", "revision": None, "base_url": None,
             "api_key_env": None, "decoding": {"temperature": 0.0, "max_tokens": 1024, "seed": 1234}}

# An answer run's manifest as the first runner wrote it (before content identity): no `dataset`,
# the store query and limit inside `config`, no capabilities.
BEFORE_CONTENT_IDENTITY = {
    "run_id": "old-model-standard-implicit-0123456789", "kind": "answers", "created_at": "2026-11-29T10:00:00.000+00:00",
    "config_hash": "0123456789", "model": SPEC_DUMP, "prompt": {"name": "standard", "version": "standard-v1"},
    "variant": "implicit",
    "config": {"model": {"backend": "openai-compatible", "model": "m", "revision": None, "options": {}},
               "decoding": {"temperature": 0.0, "max_tokens": 1024, "seed": 1234}, "prompt_version": "standard-v1",
               "variant": "implicit", "query": {"status": ["accepted"]}, "limit": None},
    "item_ids": ["q-1", "q-2"], "skipped": {"q-3": "no answer key"}, "workspace": "/somewhere/ws",
}

# A curation model step's log manifest, the one shape it was ever written in.
GENERATION = {"run_id": "gen-paraphrase-old-model-abcdef0123", "kind": "generation", "purpose": "paraphrase",
              "created_at": "2026-11-29T10:00:00.000+00:00", "model": SPEC_DUMP}


def _write(path, data) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(data, ensure_ascii=False, indent=2)
    path.write_text(text, encoding="utf-8")
    return text


def test_a_manifest_the_runner_writes_reads_as_its_type_and_writes_back_the_same_bytes(workspace):
    ids = seed_items(workspace, n_text=5, n_image=0)
    summary = run_model(workspace, RunRequest(resolve_model("baseline:longest")))
    text = (summary.run_dir / MANIFEST).read_text(encoding="utf-8")
    manifest = read_answer_manifest(summary.run_dir)
    assert (manifest.run_id, manifest.kind, manifest.model.name) == (summary.run_dir.name, "answers", "baseline:longest")
    assert (manifest.prompt.name, manifest.prompt.version, manifest.variant) == ("standard", "standard-v1", "implicit")
    assert manifest.item_ids == ids and manifest.skipped == {} and manifest.workspace == str(workspace.root)
    assert manifest.dataset is not None and manifest.dataset.kind == "store" and manifest.dataset.limit is None
    assert manifest.config.prompt_version == "standard-v1" and manifest.config.model["model"] == "longest"
    assert manifest_json(manifest) == text
    assert json.loads(text) == manifest.model_dump(mode="json", exclude_unset=True)


def test_a_manifest_from_before_content_identity_loads_and_keeps_its_bytes(workspace):
    for number in (1, 2):
        record = make_record(f"q-{number}")
        record["status"] = "accepted"
        workspace.store.save_items([parse_item(record)], author="t", stage="import")
    run_dir = workspace.runs_dir / BEFORE_CONTENT_IDENTITY["run_id"]
    text = _write(run_dir / MANIFEST, BEFORE_CONTENT_IDENTITY)

    manifest = read_manifest(run_dir)
    assert isinstance(manifest, RunManifest) and manifest.dataset is None
    assert manifest.config.query == {"status": ["accepted"]} and manifest.config.capabilities is None
    assert manifest_json(manifest) == text

    run = load_run(run_dir, workspace)
    assert run.model_name == "old-model" and run.label == "old-model · standard"
    assert isinstance(run.dataset, StoreDataset) and run.dataset.query.status == ["accepted"]
    assert run.skipped == {"q-3": "no answer key"}
    assert run.pending() == 2  # listed, never answered
    assert sorted(run.items) == ["q-1", "q-2"]


def test_a_generation_log_is_typed_and_never_read_as_an_answer_run(workspace):
    seed_items(workspace, n_text=3, n_image=0)
    answers = run_model(workspace, RunRequest(resolve_model("baseline:longest"))).run_dir
    run_dir = workspace.runs_dir / GENERATION["run_id"]
    text = _write(run_dir / MANIFEST, GENERATION)

    manifest = read_manifest(run_dir)
    assert isinstance(manifest, GenerationManifest) and manifest.purpose == "paraphrase"
    assert manifest.model.name == "old-model"
    assert manifest_json(manifest) == text
    with pytest.raises(BenchsmithError, match="curation model step"):
        load_run(run_dir, workspace)
    matrix = build_matrix([answers, run_dir], workspace)
    assert [description["name"] for description in matrix.models.values()] == ["baseline:longest"]


def test_a_malformed_manifest_says_which_field(tmp_path):
    broken = {key: value for key, value in BEFORE_CONTENT_IDENTITY.items() if key != "prompt"}
    _write(tmp_path / "run" / MANIFEST, broken)
    with pytest.raises(BenchsmithError, match="malformed run manifest: prompt"):
        read_manifest(tmp_path / "run")


def test_generation_log_lines_keep_their_keys_and_read_back_as_records(tmp_path):
    job = Job("paraphrase:q-1#0", ChatRequest((Message("user", ("바꿔 쓰시오",)),)), "k1", _finish)
    meta = {"attempts": 1, "latency_s": 0.25, "cached": False, "key": "k1", "resends": 0}
    answered = _finish(job, Completion("바꾼 문제", finish_reason="stop", usage={"total_tokens": 9}), None, dict(meta))
    refused = _finish(job, Completion("", finish_reason="content_filter"), None, dict(meta))
    failed = _finish(job, None, BackendError("timeout", "no response within 5 s"), dict(meta))
    for line in (answered, refused, failed):
        assert line.pop("ts")
    assert list(answered.items()) == [
        ("job", "paraphrase:q-1#0"), ("text", "바꾼 문제"), ("error", None), ("finish_reason", "stop"),
        ("usage", {"total_tokens": 9}), ("attempts", 1), ("latency_s", 0.25), ("cached", False), ("key", "k1"),
        ("resends", 0)]
    assert refused["text"] is None and refused["error"] == "the model refused (content_filter)"
    assert list(failed) == ["job", "text", "error", "attempts", "latency_s", "cached", "key", "resends"]
    assert failed["text"] is None and "no response within 5 s" in failed["error"]

    log = tmp_path / "responses.jsonl"
    log.write_text(json.dumps(failed) + "\n" + json.dumps(answered | {"job": "paraphrase:q-2#0"}) + "\n"
                   + json.dumps(answered) + "\n" + '{"job": "paraphrase:q-3#0", "te', encoding="utf-8")
    records = read_jsonl_records(log, GenerationRecord, key="job")
    assert sorted(records) == ["paraphrase:q-1#0", "paraphrase:q-2#0"]  # the torn line is skipped
    assert records["paraphrase:q-1#0"].text == "바꾼 문제" and records["paraphrase:q-1#0"].key == "k1"  # the later line


def _item(item_id, stem, options, answer=1, session="2020-1"):
    record = make_record(item_id, stem=stem, answer=answer, session=session)
    record["options"] = [{"text": text} for text in options]
    return parse_item(record)


def test_the_dedup_report_written_now_reads_back_with_its_bytes(workspace):
    stem = "대기 중에서 기온이 고도에 따라 증가하는 기층을 무엇이라 하는가?"
    options = ["역전층", "혼합층", "대류권계면", "성층권"]
    workspace.store.save_items([_item("a", stem, options), _item("b", stem, options[::-1], answer=4, session="2021-1"),
                                _item("c", stem.replace("증가", "감소"), options, session="2022-1")],
                               author="t", stage="import")
    _, _, path = run_dedup(workspace.store, DedupConfig(), author="dedup", report_dir=workspace.runs_dir)
    text = path.read_text(encoding="utf-8")
    report = latest_dedup_report(workspace.runs_dir)
    assert report is not None and report.summary.pool == 3 and report.summary.excluded == 1
    assert report.summary.pairs_merged == 1 and report.summary.pairs_inverted == 2
    assert report.summary.pairs_answer_conflict is None  # no such pair: the key is left out, as before
    assert report.clusters == [["a", "b"]] and report.config.threshold == 0.6
    assert json.dumps(report.model_dump(mode="json"), ensure_ascii=False, indent=2) == text
    assert "pairs_answer_conflict" not in json.loads(text)["summary"]


def test_a_dedup_report_from_the_first_version_loads(tmp_path):
    first_version = {
        "config": {"threshold": 0.6, "method": "difflib", "scope": "exam", "stem_gate": 0.6,
                   "require_same_answer": False, "workers": 2, "lsh_bands": 64, "lsh_rows": 2},
        "summary": {"pool": 10, "candidate_pairs": 7, "pairs_over_threshold": 3, "pairs_merged": 3, "clusters": 2,
                    "excluded": 3, "largest_cluster": 3,
                    "merged_same_answer_by_ratio": {"0.9-1.0": {"pairs": 3, "same_answer": 3}}},
        "clusters": [["a", "b", "c"], ["d", "e"]],
        "pairs": [{"first": "a", "second": "b", "ratio": 0.97, "stem_ratio": 0.99, "verdict": "merged",
                   "swaps": [], "same_answer": True}],
    }
    _write(tmp_path / "dedup-20261129T100000.json", first_version)
    _write(tmp_path / "dedup-20261128T100000.json", first_version | {"clusters": []})  # older: not the latest
    report = latest_dedup_report(tmp_path)
    assert report is not None and report.clusters == [["a", "b", "c"], ["d", "e"]]
    assert report.config.conflict_ratio == DedupConfig().conflict_ratio and report.config.same_answer_below is None
    assert report.summary.pairs_inverted is None and report.summary.exact_duplicates_excluded == 0
    assert report.summary.merged_same_answer_by_ratio["0.9-1.0"].same_answer == 3
    assert report.pairs[0].exact is False and report.pairs[0].swaps == () and report.answer_conflicts == []
    assert isinstance(DedupReport.read(tmp_path / "dedup-20261128T100000.json"), DedupReport)


def test_a_release_manifest_in_its_first_shape_loads_and_keeps_its_bytes(tmp_path):
    first_version = {  # as the first release build wrote it: no `tiny`
        "name": "kmet", "version": "1.0.0", "previous": None,
        "configs": {"full": {"rows": 2, "files": ["data/full/test-00000-of-00001.parquet"], "bytes": 5120,
                             "content_hash": "f" * 64}},
        "content_hash": "e" * 64, "row_hashes": {"q-1": "a" * 16, "q-2": "b" * 16},
        "store": {"items": 2, "revisions": 3, "last_revision_at": None},
        "builder": {"benchsmith": "0.1.0", "pyarrow": "17.0.0", "datasets": "3.6.0", "writer": {"compression": "zstd"},
                    "shard_rows": 1000, "row_group_rows": 250},
        "config": {"name": "kmet", "configs": ["full"]},
    }
    path = tmp_path / "release.json"
    path.write_text(json.dumps(first_version, ensure_ascii=False, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    manifest = ReleaseManifest.read(path)
    assert manifest.tiny is None and manifest.configs["full"].files == ["data/full/test-00000-of-00001.parquet"]
    assert manifest.store.last_revision_at is None and manifest.row_hashes["q-2"] == "b" * 16
    assert manifest.json_text() == path.read_text(encoding="utf-8")
