from benchsmith.demo import run_demo

from .extract_truth import load_truth


def test_demo_starts_from_the_sample_pdf_and_extracts_it(tmp_path):
    ctx = run_demo(tmp_path / "demo")
    line = ctx.results["extract"]
    truth = load_truth(ctx.truth_path)
    n, options = len(truth), sum(len(item.options) for item in truth)
    assert f"{n}/{n} found" in line and f"answers {n}/{n}" in line and f"options {options}/{options}" in line
    assert f"{n} new" in line
    items = [stored.item for stored in ctx.workspace.store.iter_items()]
    assert len(items) == n and all(item.id.startswith("pdf-") for item in items)
    refs = {ref for item in items for ref in item.blob_refs()}
    assert refs and all(ctx.workspace.blobs.exists(ref) for ref in refs)
