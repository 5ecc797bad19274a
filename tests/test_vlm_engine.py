"""The vision-model transcription engine against the local fault server (OpenAI and Gemini wire
formats), with transcriptions scripted from the sample exam's ground truth: where the answers land,
what a broken, refused, timed-out or schema-breaking answer leaves behind, and the resume."""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json

import pytest

from curation.core.item import parse_item
from curation.core.workspace import init_workspace
from curation.extract.confidence import read_confidence
from curation.extract.latex_check import text_problems
from curation.extract.pipeline import LATEX_REPAIRED_REASON, ExtractOptions, extract_items, extract_pdf
from curation.extract.vlm import VLM_REASON
from curation.extract.vlm_prompt import TranscriptionError, house_delimiters, parse_transcription
from curation.llm import TextRequest
from curation.sample_exam import write_sample_exam
from evaluation.backends.base import openai_messages
from evaluation.generation import RunnerTextModel, client_factory
from tests.fault_server import Scripted, ServerConfig, ServerThread
from tests.vlm_support import TruthTranscriber, png_size, read_truth

from .conftest import run_cli

BOX_TOLERANCE = 0.6  # points: a box goes through pixels at 144 dpi and back


@pytest.fixture(scope="module")
def broken_exam(tmp_path_factory):
    pdf, truth = write_sample_exam(tmp_path_factory.mktemp("broken") / "broken.pdf", variant="broken-font")
    return pdf, read_truth(truth)


@pytest.fixture(scope="module")
def canonical_exam(tmp_path_factory):
    pdf, truth = write_sample_exam(tmp_path_factory.mktemp("canonical") / "sample.pdf")
    return pdf, read_truth(truth)


def _item_id(pdf, number):
    return f"pdf-{hashlib.sha256(pdf.read_bytes()).hexdigest()[:12]}-q{number:03d}"


def _close(a, b):
    return all(abs(x - y) <= BOX_TOLERANCE for x, y in zip(a, b, strict=True))


def _openai(server):
    return f"openai-compatible:fake-vlm@{server.url}/v1?vision=true&timeout_s=1&max_retries=1"


def _assert_read_by_the_model(item):
    assert item.status == "in_review"
    assert any(reason.startswith(VLM_REASON.split("{", 1)[0]) for reason in item.flags.review_reasons)
    confidence = read_confidence(item.extra)
    assert confidence is not None and "vlm" in confidence.signals and confidence.score < 1
    for text in [item.stem, *(option.text for option in item.options)]:
        assert text_problems(text) == [], text
    assert LATEX_REPAIRED_REASON not in item.flags.review_reasons


def _assert_lands_on_truth(stored, pdf, truth):
    """Every question of the truth is an item with the truth's text, options, page and boxes."""
    assert set(stored) == {_item_id(pdf, r["source"]["number"]) for r in truth}
    for record in truth:
        item = stored[_item_id(pdf, record["source"]["number"])]
        assert item.stem == record["stem"]
        assert [o.text for o in item.options] == [o.get("text", "") for o in record["options"]]
        assert len(item.options) == len(record["options"]) == 4
        assert item.source.page == record["source"]["page"]
        assert _close(item.source.bbox, record["source"]["bbox"]), (item.source.bbox, record["source"]["bbox"])
        assert len(item.images) == len(record.get("images", []))
        for image, true_image in zip(item.images, record.get("images", []), strict=True):
            assert image.provenance.page == record["source"]["page"]
            assert _close(image.provenance.bbox, true_image["provenance"]["bbox"])
        for option, true_option in zip(item.options, record["options"], strict=True):
            assert (option.image is None) == (true_option.get("image") is None)
            if option.image is not None:
                assert _close(option.image.provenance.bbox, true_option["image"]["provenance"]["bbox"])
        _assert_read_by_the_model(item)


@pytest.mark.parametrize("wire", ["openai", "gemini"])
def test_broken_font_exam_read_column_by_column_lands_on_the_truth(broken_exam, tmp_path, wire):
    pdf, truth = broken_exam
    workspace = init_workspace(tmp_path / "ws")
    scripted = TruthTranscriber(truth)
    with ServerThread(ServerConfig(responder=scripted)) as server:
        spec = _openai(server) if wire == "openai" else f"gemini:fake-vlm?vision=true&base_url={server.url}"
        report = extract_pdf(pdf, workspace, ExtractOptions(engine="vlm", vlm_model=spec),
                             model=client_factory(spec, workspace))
        assert report.errors == [] and report.error is None
        assert report.pages_without_text == [1, 2, 3, 4] and report.ocr_pages == []  # no OCR: the model read them
        assert report.created == len(truth) and report.vlm_regions == server.stats.requests
        stored = {s.item.id: s.item for s in workspace.store.iter_items()}
        _assert_lands_on_truth(stored, pdf, truth)
        for item in stored.values():  # crops are blobs in the workspace, as for every engine
            for ref in item.blob_refs():
                assert workspace.blobs.path(ref).is_file()
        assert all(png_size(png)[0] > 100 for png in scripted.images)
        # a second run is answered from the run log: nothing is sent, nothing is written twice
        before = server.stats.requests
        again = extract_pdf(pdf, workspace, ExtractOptions(engine="vlm", vlm_model=spec),
                            model=client_factory(spec, workspace))
        assert server.stats.requests == before and again.skipped and again.created == 0


def test_faults_end_in_items_or_one_error_each_and_a_rerun_resumes(canonical_exam, tmp_path):
    pdf, truth = canonical_exam
    workspace = init_workspace(tmp_path / "ws")
    faults = {3: ["broken"], 5: ["schema"] * 3, 7: [Scripted(refusal="I can't help with that.")],
              9: [Scripted(fault="timeout")] * 2}
    scripted = TruthTranscriber(truth, faults)
    layout = {item.source.number: item.source for item in extract_items(pdf, ExtractOptions(engine="pymupdf")).items}
    with ServerThread(ServerConfig(responder=scripted, hang_s=3)) as server:
        spec = _openai(server)
        options = ExtractOptions(engine="vlm", vlm_model=spec)
        report = extract_pdf(pdf, workspace, options, model=client_factory(spec, workspace))
        errors = {int(line.split()[1]): line for line in report.errors}
        assert set(errors) == {5, 7, 9}, report.errors
        assert "breaks the schema" in errors[5] and "after 3 tries" in errors[5]
        assert "refused" in errors[7] and "I can't help with that." in errors[7]
        assert "timed out" in errors[9] or "no response within 1 s" in errors[9]  # the client's or the runner's clock
        stored = {s.item.source.number: s.item for s in workspace.store.iter_items()}
        assert set(stored) == {r["source"]["number"] for r in truth} - {5, 7, 9}  # nothing half-written
        assert scripted.faults[3] == [] and stored[3].stem == truth[2]["stem"]  # broken JSON, asked again
        for number, item in stored.items():
            assert item.id == _item_id(pdf, number)
            assert item.source.page == layout[number].page and item.source.bbox == layout[number].bbox
            assert item.answer == parse_item(truth[number - 1]).answer  # the PDF's own key, merged as always
            _assert_read_by_the_model(item)

        # the rerun sends only what failed at the backend: the others come from the run log and cache
        before = server.stats.requests
        again = extract_pdf(pdf, workspace, options, model=client_factory(spec, workspace))
        assert server.stats.requests == before + 1  # question 9, the timeout; 5 and 7 are answered as before
        assert again.created == 1 and {int(line.split()[1]) for line in again.errors} == {5, 7}
        assert workspace.store.get(_item_id(pdf, 9)).item.stem == truth[8]["stem"]


def test_the_fallback_reads_formula_pages_and_leaves_the_rest_to_the_text_layer(canonical_exam, tmp_path):
    pdf, truth = canonical_exam
    workspace = init_workspace(tmp_path / "ws")
    with_formula_picture = {r["source"]["page"] for r in truth if any(i["kind"] == "formula" for i in r.get("images", []))}
    assert with_formula_picture == {2}
    scripted = TruthTranscriber(truth, stem_of=lambda record: record["stem"] + " (모델)")
    with ServerThread(ServerConfig(responder=scripted)) as server:
        spec = _openai(server)
        report = extract_pdf(pdf, workspace, ExtractOptions(vlm_model=spec), model=client_factory(spec, workspace))
    assert report.engine == "auto+vlm" and report.errors == []
    items = [s.item for s in workspace.store.iter_items()]
    read = [item for item in items if item.stem.endswith(" (모델)")]
    assert {item.source.page for item in read} == {2}
    assert len(read) == sum(1 for r in truth if r["source"]["page"] == 2) == report.vlm_regions
    for item in read:
        _assert_read_by_the_model(item)
    for item in items:
        if item.source.page != 2:
            assert item.status == "extracted" and "vlm" not in read_confidence(item.extra).signals


def test_the_runners_client_sends_pictures_as_each_backend_expects(tmp_path):
    png = b"\x89PNG\r\n\x1a\n" + b"\x00" * 40
    chat = RunnerTextModel.chat_request(TextRequest("k", "system", "user text", images=(png,)), tmp_path)
    system, user = openai_messages(chat)  # what OpenAI-compatible servers and vLLM's LLM.chat receive
    assert system == {"role": "system", "content": "system"}
    picture, text = user["content"]
    assert picture["type"] == "image_url" and text == {"type": "text", "text": "user text"}
    header, data = picture["image_url"]["url"].split(",", 1)
    assert header == "data:image/png;base64" and base64.b64decode(data) == png
    assert chat.key_material()["messages"][1][1][0] == {"image": hashlib.sha256(png).hexdigest()}


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vllm is installed: the GPU check runs it")
def test_vllm_without_the_extra_is_one_clear_error_and_writes_nothing(broken_exam, tmp_path):
    pdf, _ = broken_exam
    run_cli("init", str(tmp_path / "ws"))
    done = run_cli("extract", str(pdf), "--engine", "vlm", "-m", "vllm:Qwen/Qwen2.5-VL-3B-Instruct?vision=true",
                   "-w", str(tmp_path / "ws"))
    assert done.returncode == 1 and "pip install 'benchsmith[vllm]'" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    listed = run_cli("items", "stats", "--json", "-w", str(tmp_path / "ws"))
    assert json.loads(listed.stdout)["items"] == 0


def test_cli_chain_extract_vlm_then_items_see_them_in_review(broken_exam, tmp_path):
    pdf, truth = broken_exam
    ws = tmp_path / "ws"
    assert run_cli("init", str(ws)).returncode == 0
    refused = run_cli("extract", str(pdf), "--engine", "vlm", "-w", str(ws))
    assert refused.returncode == 1 and "--engine vlm needs a vision model" in refused.stderr
    scripted = TruthTranscriber(truth, {12: [Scripted(refusal="no")]})
    with ServerThread(ServerConfig(responder=scripted)) as server:
        text_only = run_cli("extract", str(pdf), "--engine", "vlm", "-m", f"openai-compatible:fake@{server.url}/v1",
                            "-w", str(ws))
        assert text_only.returncode == 1 and "not declared with vision" in text_only.stderr
        assert server.stats.requests == 0
        done = run_cli("extract", str(pdf), "--engine", "vlm", "-m", _openai(server), "-w", str(ws), "--json")
    assert done.returncode == 1, done.stderr  # the column holding question 12 was refused
    (report,) = json.loads(done.stdout)
    assert report["engine"] == "vlm" and len(report["errors"]) == 1 and "refused" in report["errors"][0]
    refused_column = {r["source"]["number"] for r in truth  # page 2, left of the gutter at the middle of the page
                      if r["source"]["page"] == 2 and (r["source"]["bbox"][0] + r["source"]["bbox"][2]) / 2 < 297.5}
    assert 12 in refused_column
    stats = json.loads(run_cli("items", "stats", "--json", "-w", str(ws)).stdout)
    assert stats["items"] == len(truth) - len(refused_column) == report["created"]
    assert stats["by_status"] == {"in_review": stats["items"]}
    exported = run_cli("items", "export", "--status", "in_review", "-w", str(ws)).stdout.splitlines()
    records = [json.loads(line) for line in exported]
    assert len(records) == stats["items"]
    for record in records:
        assert record["extra"]["extraction_confidence"]["signals"][-1] == "vlm"
        assert any("vision model" in reason for reason in record["flags"]["review_reasons"])
    shown = run_cli("items", "show", _item_id(pdf, 1), "-w", str(ws))
    assert "in_review" in shown.stdout and "대류권" in shown.stdout


def test_workspace_setting_turns_the_fallback_on(broken_exam, tmp_path):
    pdf, truth = broken_exam
    ws = tmp_path / "ws"
    run_cli("init", str(ws))
    with ServerThread(ServerConfig(responder=TruthTranscriber(truth))) as server:
        config = ws / "benchsmith.toml"
        config.write_text(config.read_text() + f'\n[extract]\nvlm_model = "{_openai(server)}"\n', encoding="utf-8")
        done = run_cli("extract", str(pdf), "-w", str(ws), "--json")
    assert done.returncode == 0, done.stderr
    (report,) = json.loads(done.stdout)
    assert report["engine"] == "auto+vlm" and report["created"] == len(truth) and report["ocr_pages"] == []


def test_transcription_answers_are_checked_and_formulas_put_in_house_delimiters():
    good = '<think>보자</think>```json\n{"questions": [{"number": 2, "stem": "$x^2$ 값은?", ' \
           '"options": [{"text": "1"}, {"text": "", "figure": [0, 0, 10, 10]}]}]}\n```'
    assert parse_transcription(good).questions[0].number == 2
    for bad, says in [('{"questions": [', "broken JSON"), ("I cannot read this.", "no JSON object"),
                      ('{"questions": [{"stem": "s", "options": [{"text": "a"}, {"text": ""}]}]}', "needs its text"),
                      ('{"questions": [{"number": 4, "stem": " "}]}', "its stem or its options"),
                      ('{"questions": [{"stem": "s", "options": [{"text": "a"}, {"text": "b"}], "box": [5, 5, 1, 1]}]}',
                       "x0 < x1"),
                      ('{"questions": [], "note": 1}', "note")]:
        with pytest.raises(TranscriptionError, match=says):
            parse_transcription(bad)
    assert house_delimiters(r"둘레 $2\pi r$ 와 \[E=mc^2\] 와 $$a$$") == r"둘레 \(2\pi r\) 와 $$E=mc^2$$ 와 $$a$$"


class SplitQuestion(TruthTranscriber):
    """The truth, except that question `number`'s last two options are seen only in the next region,
    as the start of that region without a number (a question running on into the next column)."""

    def __init__(self, truth, number):
        super().__init__(truth)
        self.number = number
        self.carried = None

    def __call__(self, prompt_text, body):
        answer = json.loads(super().__call__(prompt_text, body))
        questions = answer["questions"]
        if self.carried is not None:
            questions.insert(0, {"number": None, "options": self.carried})
            self.carried = None
        for question in questions:
            if question["number"] == self.number:
                self.carried = question["options"][2:]
                question["options"] = question["options"][:2]
        return json.dumps(answer, ensure_ascii=False)


def test_a_question_running_on_into_the_next_column_is_joined(broken_exam, tmp_path):
    pdf, truth = broken_exam
    last_left = max((r for r in truth if r["source"]["page"] == 2 and r["source"]["bbox"][0] < 297.5),
                    key=lambda r: r["source"]["bbox"][1])
    workspace = init_workspace(tmp_path / "ws")
    with ServerThread(ServerConfig(responder=SplitQuestion(truth, last_left["source"]["number"]))) as server:
        spec = _openai(server)
        model = client_factory(spec, workspace)
        model.settings.concurrency = 1  # the regions in reading order, so the carried part follows its start
        report = extract_pdf(pdf, workspace, ExtractOptions(engine="vlm", vlm_model=spec), model=model)
    assert report.errors == []
    item = workspace.store.get(_item_id(pdf, last_left["source"]["number"])).item
    assert [o.text for o in item.options] == [o["text"] for o in last_left["options"]]
    assert any(reason.startswith("continued on page 2") for reason in item.flags.review_reasons)


@pytest.mark.parametrize("model_reads", ["own box", "with the passage"])
def test_passage_questions_keep_the_shared_passage(tmp_path, model_reads):
    """A question's region is its own box, so a model reads the question without the passage printed
    above it: the layout's passage text still begins the stem, once (also when a model does read it)."""
    pdf, truth_path = write_sample_exam(tmp_path / "passage.pdf", variant="passage")
    truth = read_truth(truth_path)
    shared = {r["source"]["number"]: r["stem"].rsplit("\n", 1) for r in truth if r.get("extra", {}).get("passage_group")}
    assert sorted(shared) == [27, 28]

    def own_box(record):
        number = record["source"]["number"]
        return shared[number][1] if number in shared else record["stem"]

    scripted = TruthTranscriber(truth, stem_of=own_box if model_reads == "own box" else None)
    workspace = init_workspace(tmp_path / "ws")
    with ServerThread(ServerConfig(responder=scripted)) as server:
        spec = _openai(server)
        report = extract_pdf(pdf, workspace, ExtractOptions(engine="vlm", vlm_model=spec), model=client_factory(spec, workspace))
    assert report.errors == []
    stored = {s.item.source.number: s.item for s in workspace.store.iter_items()}
    for record in truth:
        assert stored[record["source"]["number"]].stem == record["stem"]
    for number, (passage, own) in shared.items():
        assert stored[number].stem.count(passage) == 1 and stored[number].stem.endswith(own)
        assert stored[number].extra["passage_group"] == truth[number - 1]["extra"]["passage_group"]


def test_ask_again_after_a_refusal_and_answers_that_were_no_use(canonical_exam, tmp_path):
    """A refusal and three schema-breaking answers are kept like any answer, so a plain rerun repeats
    them without asking; `extract --ask-again` asks the model afresh and the two questions land."""
    pdf, truth = canonical_exam
    ws = tmp_path / "ws"
    assert run_cli("init", str(ws)).returncode == 0
    scripted = TruthTranscriber(truth, {5: ["schema"] * 3, 7: [Scripted(refusal="I can't help with that.")]})
    with ServerThread(ServerConfig(responder=scripted)) as server:
        command = ["extract", str(pdf), "--engine", "vlm", "-m", _openai(server), "-w", str(ws), "--json"]
        first = run_cli(*command)
        asked = server.stats.requests
        again = run_cli(*command)
        assert server.stats.requests == asked  # nothing was sent: the same answers again
        fresh = run_cli(*command, "--ask-again")
    for failed in (first, again):
        (report,) = json.loads(failed.stdout)
        assert failed.returncode == 1 and sorted(int(line.split()[1]) for line in report["errors"]) == [5, 7]
    (report,) = json.loads(fresh.stdout)
    assert fresh.returncode == 0, fresh.stderr
    assert report["errors"] == [] and report["created"] == 2
    stats = json.loads(run_cli("items", "stats", "--json", "-w", str(ws)).stdout)
    assert stats["items"] == len(truth)
    shown = run_cli("items", "show", _item_id(pdf, 7), "-w", str(ws))
    assert truth[6]["stem"][:10] in shown.stdout
