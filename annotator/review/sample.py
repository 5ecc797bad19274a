"""Sample content for the annotator, written by the project (no real exam text): a small
two-page PDF drawn with PyMuPDF, Korean meteorology-style items pointing into it (one with
LaTeX, one with image options cropped from the PDF, a Korea-specific candidate with the
detector's reasons, one with a draft rationale), blind model rationales and judge scores.

Used by the tests, the screenshots and the benchmark; `load_sample(workspace)` fills a
workspace and returns the item ids.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from annotator.review.render import PdfRenderer
from annotator.review.scoring import RationaleTask
from annotator.review.tables import ensure_tables
from curation.core.item import parse_item
from curation.core.workspace import Workspace
from curation.pymupdf_light import pymupdf
from evaluation.records import JUDGE_AXES, JudgeScores, JudgeVerdict

EXAM = "기상기사 (예시)"
FONT = "korea"  # PyMuPDF's built-in CJK font


@dataclass
class PdfBox:
    page: int
    bbox: list[float]


@dataclass
class SamplePdf:
    data: bytes
    boxes: dict[str, PdfBox] = field(default_factory=dict)


def _write_lines(page: pymupdf.Page, x: float, y: float, lines: list[str], size: float = 10.5) -> list[float]:
    top = y - size
    for line in lines:
        page.insert_text((x, y), line, fontname=FONT, fontsize=size)
        y += size * 1.6
    return [x - 4, top - 4, 540.0, y - size * 0.6]


def _chart(page: pymupdf.Page, rect: pymupdf.Rect) -> None:
    """A small vector 'temperature profile' chart."""
    page.draw_rect(rect, color=(0, 0, 0), width=0.8)
    points = [pymupdf.Point(rect.x0 + 10 + i * (rect.width - 20) / 5, rect.y1 - 10 - h) for i, h in
              enumerate((5, 30, 22, 48, 40, 60))]
    page.draw_polyline(points, color=(0.8, 0.1, 0.1), width=1.5)
    page.insert_text((rect.x0 + 4, rect.y0 + 12), "기온(℃)", fontname=FONT, fontsize=8)


def make_pdf() -> SamplePdf:
    document = pymupdf.open()
    boxes: dict[str, PdfBox] = {}
    page = document.new_page(width=595, height=842)
    page.insert_text((40, 50), "2024년 기상기사 필기 예시 문제 — benchsmith 샘플", fontname=FONT, fontsize=13)
    boxes["q1"] = PdfBox(1, _write_lines(page, 44, 90, [
        "1. 건조단열감률 Γd = g / cp 에 대한 설명으로 옳은 것은?",
        "① 약 9.8 ℃/km 이다   ② 습윤단열감률보다 작다",
        "③ 기압에 비례한다     ④ 수증기량에 따라 변한다"]))
    boxes["q2"] = PdfBox(1, _write_lines(page, 44, 190, ["2. 다음 중 기온 역전층을 나타내는 연직 분포는?"]))
    for n, x in enumerate((60, 180, 300, 420), start=1):
        rect = pymupdf.Rect(x, 215, x + 100, 295)
        _chart(page, rect)
        page.insert_text((x, 310), f"({n})", fontname=FONT, fontsize=9)
        boxes[f"q2-opt{n}"] = PdfBox(1, [rect.x0, rect.y0, rect.x1, rect.y1])
    boxes["q2"].bbox[3] = 318.0
    boxes["q3"] = PdfBox(1, _write_lines(page, 44, 360, [
        "3. 우리나라 동해안에서 겨울철 북동기류에 의해 많은 눈이 내리는 주된 원인은?",
        "① 지형에 의한 강제 상승   ② 해륙풍   ③ 푄 현상   ④ 복사냉각"]))
    page2 = document.new_page(width=595, height=842)
    boxes["q4"] = PdfBox(2, _write_lines(page2, 44, 70, [
        "4. 상대습도가 100%인 공기덩이가 단열 상승할 때 기온 감률은?",
        "① 건조단열감률   ② 습윤단열감률   ③ 환경감률   ④ 0"]))
    boxes["q5"] = PdfBox(2, _write_lines(page2, 44, 150, [
        "5. 온위 θ = T (1000/p)^0.286 의 단위로 옳은 것은?",
        "① K   ② hPa   ③ m/s   ④ g/kg"]))
    data = document.tobytes()
    document.close()
    return SamplePdf(data, boxes)


def sample_records(pdf_sha: str, pdf: SamplePdf, crops: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    def source(key: str, number: int) -> dict[str, Any]:
        box = pdf.boxes[key]
        return {"exam": EXAM, "session": "2024-1", "subject": "대기열역학", "part": "P2", "number": number,
                "pdf_sha256": pdf_sha, "page": box.page, "bbox": box.bbox, "origin": "annotator sample"}

    def options(*texts: str) -> list[dict[str, Any]]:
        return [{"text": text} for text in texts]

    return [
        {"id": "sample-001", "source": source("q1", 1),
         "stem": "건조단열감률 $\\Gamma_d = g / c_p$ 에 대한 설명으로 옳은 것은?",
         "options": options("약 $9.8\\,^{\\circ}\\mathrm{C/km}$ 이다", "습윤단열감률보다 작다", "기압에 비례한다",
                            "수증기량에 따라 변한다"),
         "answer": 1, "status": "extracted"},
        {"id": "sample-002", "source": source("q2", 2), "stem": "다음 중 기온 역전층을 나타내는 연직 분포는?",
         "options": [{"text": f"그림 ({n})", "image": crops[f"q2-opt{n}"]} for n in range(1, 5)],
         "answer": 2, "status": "extracted", "taxonomy": {"visual_type": "chart"}},
        {"id": "sample-003", "source": source("q3", 3),
         "stem": "우리나라 동해안에서 겨울철 북동기류에 의해 많은 눈이 내리는 주된 원인은?",
         "options": options("지형에 의한 강제 상승", "해륙풍", "푄 현상", "복사냉각"), "answer": 1,
         "flags": {"korea_reasons": ["'우리나라' — 암시적 국가 지칭 (implicit country reference)",
                                     "'동해안' — 한국 지역명 (Korean place name)"]},
         "status": "in_review"},
        {"id": "sample-004", "source": source("q4", 4),
         "stem": "상대습도가 100%인 공기덩이가 단열 상승할 때 기온 감률은?",
         "options": options("건조단열감률", "습윤단열감률", "환경감률", "0"), "answer": 2,
         "rationale": {"text": "포화된 공기는 상승하며 응결로 잠열 $L_v$ 을 방출하므로 기온이 건조단열감률보다 "
                               "천천히 내려간다. 따라서 습윤단열감률을 따른다.", "status": "draft", "author": "draft-model"},
         "status": "accepted"},
        {"id": "sample-005", "source": source("q5", 5),
         "stem": "온위 \\(\\theta = T\\left(\\frac{1000}{p}\\right)^{0.286}\\) 의 단위로 옳은 것은? (참고: 비용 \\$5)",
         "options": options("K", "hPa", "m/s", "g/kg"), "answer": 1, "status": "extracted"},
    ]


MODEL_RATIONALES = {
    "model-alpha": "포화 공기가 상승하면 응결이 일어나 잠열이 방출된다. 이 때문에 냉각이 느려져 습윤단열감률을 따른다.",
    "model-beta": "상대습도 100%이므로 건조단열감률 $9.8\\,\\mathrm{K/km}$ 로 냉각된다.",
    "model-gamma": "습윤단열감률. 잠열 방출로 감률이 $\\Gamma_d$ 보다 작다 (약 $6\\,\\mathrm{K/km}$).",
}
JUDGE = {"model-alpha": (5, 5, 4, 5), "model-beta": (1, 2, 2, 4), "model-gamma": (5, 4, 3, 4)}


def sample_scoring() -> tuple[list[RationaleTask], list[JudgeVerdict]]:
    """Three models' rationales for sample-004 as scoring tasks, and a judge's verdicts on them,
    in the records `annotate load-rationales` and `load-judge` read from real runs."""
    tasks = [RationaleTask("sample-004", model, text, "sample-run") for model, text in MODEL_RATIONALES.items()]
    verdicts = [JudgeVerdict(item_id="sample-004", run_id="sample-run", model=model, judge="sample-judge",
                             rubric_version="judge-v1", status="ok",
                             scores=JudgeScores(**dict(zip(JUDGE_AXES, scores, strict=True))))
                for model, scores in JUDGE.items()]
    return tasks, verdicts


def load_sample(workspace: Workspace, *, author: str = "sample") -> list[str]:
    """Put the sample PDF in the blob store (`<sha256>.pdf`) and the sample items in the store."""
    ensure_tables(workspace.store.engine)
    pdf = make_pdf()
    ref = workspace.blobs.put(pdf.data, "pdf")
    pdf_sha = ref.split(".")[0]
    renderer = PdfRenderer(workspace.blobs)
    crops = {key: renderer.crop(pdf_sha, box.page, box.bbox, "vector").model_dump(mode="json", exclude_none=True)
             for key, box in pdf.boxes.items() if key.startswith("q2-opt")}
    items = [parse_item(record) for record in sample_records(pdf_sha, pdf, crops)]
    workspace.store.save_items(items, author=author, stage="import", reason="annotator sample")
    return [item.id for item in items]
