from benchsmith.demo import run_demo


def test_demo_starts_from_the_sample_pdf_and_extracts_it(tmp_path):
    ctx = run_demo(tmp_path / "demo")
    line = ctx.results["extract"]
    assert "26/26 found" in line and "answers 26/26" in line and "options 104/104" in line and "26 new" in line
    items = [stored.item for stored in ctx.workspace.store.iter_items()]
    assert len(items) == 26 and all(item.id.startswith("pdf-") for item in items)
    refs = {ref for item in items for ref in item.blob_refs()}
    assert refs and all(ctx.workspace.blobs.exists(ref) for ref in refs)
