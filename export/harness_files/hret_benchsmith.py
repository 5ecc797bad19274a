"""HRET (haerae-evaluation-toolkit, `llm_eval`) components for this benchsmith release
(copied in by benchsmith at build time; do not edit).

    python RELEASE/harness/hret/benchsmith_hret.py --config full --model MODEL --base-url URL

Importing this file registers, with HRET's own registration decorators and base classes:

- dataset `benchsmith_release` (subset = a config of this release): the config's rows from this
  release's parquet files, with benchsmith's prompt for each (`../prompts/CONFIG.jsonl`), every
  answer format;
- model backend `benchsmith_openai` (HRET's `BaseModel`): benchsmith's messages (the system text,
  then the question's text and images in benchsmith's order) with the release's decoding, sent to
  an OpenAI-compatible server, each prediction kept with its own item; a failed request stops the
  run with the item named;
- evaluation method `benchsmith_checkers`: benchsmith's own checkers for every answer format
  (`../benchsmith_release.py` with `../benchsmith_scoring/`, the files benchsmith scores with); each
  sample's `evaluation` holds `is_correct` and the outcome (correct, wrong, unparseable, error,
  undecided); a reply cut off at the token limit is an error, never correct.

so HRET's Python API runs the release, as `main()` below does:

    Evaluator().run(model="benchsmith_openai", dataset="benchsmith_release", subset="full",
                    evaluation_method="benchsmith_checkers", language_penalize=False,
                    model_params={"model_name": MODEL, "api_base": URL, "api_key": "none"})
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import functools
import importlib.abc
import importlib.machinery
import importlib.metadata
import importlib.util
import io
import json
import os
import sys
import types
from pathlib import Path
from typing import Any

# abspath, not resolve(): in a Hub cache snapshot this file is a symlink into blobs/
sys.path.insert(0, str(Path(os.path.abspath(__file__)).parent.parent))  # harness/: the shared modules
import benchsmith_release as release  # noqa: E402

DECODING = release.decoding()  # what the release is meant to be run with (release.json)
HRET_DISTRIBUTION = "haerae-evaluation-toolkit"
TESTED_HRET = ("0.1.0",)  # the HRET releases this script was tested with (its base classes and registries)
# HRET 0.1.0 imports its local-model backends (torch, transformers) and its report analysis
# (spaCy) whenever `llm_eval` is imported, though the OpenAI path never calls them; installed
# lean (`pip install --no-deps haerae-evaluation-toolkit`) they are absent.
LOCAL_ONLY_MODULES = ("torch", "transformers", "spacy")
# printed by HRET's report analysis (llm_eval/analysis.py) at import when spaCy has no Korean model:
# that analysis is HRET's optional Markdown report, which this script does not use
SPACY_NOTICE = ("Warning: spaCy Korean model ('ko_core_news_sm') not found.", "-> Please run: python -m spacy download")
EVALUATION_METHOD = "benchsmith_checkers"
# what the checkers read of a row: its typed key (and, for a choice key, the option numbers); option texts apart
ROW_FIELDS = ("key", "answer_format", "answer", "answers", "question_format")


def check_hret_version() -> str:
    """The installed HRET's version; refuses one this script was not tested with."""
    try:
        found = importlib.metadata.version(HRET_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        raise SystemExit(f"HRET가 설치되어 있지 않습니다 (HRET is not installed): pip install --no-deps "
                         f"{HRET_DISTRIBUTION}=={TESTED_HRET[-1]} (see harness/README.md)") from None
    if found not in TESTED_HRET:
        raise SystemExit(f"HRET {found}은(는) 이 릴리스로 시험되지 않았습니다 (HRET {found} is untested with this "
                         f"release; tested: {', '.join(TESTED_HRET)}): pip install --no-deps "
                         f"{HRET_DISTRIBUTION}=={TESTED_HRET[-1]}")
    return found


def _absent(self: Any, *args: Any, **kwargs: Any) -> None:
    # OSError: what HRET's report analysis catches when spaCy has no Korean model
    raise OSError(f"{type(self).__module__} is not installed (HRET's local-model backends need it)")


class _AbsentModule(types.ModuleType):
    """Stands in for a module that is not installed: every name is a class that cannot be made."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return type(name, (), {"__init__": _absent, "__module__": self.__name__})


class _AbsentFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def __init__(self, names: set[str]):
        self.names = names

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname.partition(".")[0] in self.names:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return _AbsentModule(spec.name)

    def exec_module(self, module: types.ModuleType) -> None:
        pass


@contextlib.contextmanager
def _importing_hret() -> Any:
    """While HRET imports: stand-ins for the local-only modules that are not installed (a full
    install is used as it is), and HRET's spaCy notice held back. After it, the stand-ins are gone
    from the import system (`find_spec("torch")` is None again for every other library; HRET's
    own modules keep the names they bound) and anything else HRET printed is printed."""
    missing = {name for name in LOCAL_ONLY_MODULES if importlib.util.find_spec(name) is None}
    finder = _AbsentFinder(missing)
    sys.meta_path.append(finder)
    printed = io.StringIO()
    try:
        with contextlib.redirect_stdout(printed):
            yield
    finally:
        sys.meta_path.remove(finder)
        for name in [name for name, module in sys.modules.items() if isinstance(module, _AbsentModule)]:
            del sys.modules[name]
        sys.stdout.write("".join(line for line in printed.getvalue().splitlines(keepends=True)
                                 if not line.startswith(SPACY_NOTICE)))


check_hret_version()
with _importing_hret():
    from llm_eval.datasets import DATASET_REGISTRY, BaseDataset, register_dataset
    from llm_eval.evaluation import EVALUATION_REGISTRY, BaseEvaluator, register_evaluator
    from llm_eval.evaluator import Evaluator
    from llm_eval.models import MODEL_REGISTRY, BaseModel, register_model


def _register(decorator: Any, registry: dict[str, Any], name: str) -> Any:
    """HRET's registration decorator, once: this file may be both run (`__main__`) and imported."""
    return (lambda cls: registry[name]) if name in registry else decorator(name)


@functools.cache
def _config(config: str) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """(row id → benchsmith's prompt record, row id → row), read once per config."""
    return release.prompts(config), {row["id"]: row for row in release.read_rows(config)}


def _image_url(value: dict[str, Any]) -> str:
    data = value["bytes"]
    mime = "image/jpeg" if data[:3] == b"\xff\xd8\xff" else "image/png"
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"


def messages(config: str, row_id: str) -> list[dict[str, Any]]:
    """The chat messages benchsmith sends for a row: system, then the user's text and images in order."""
    records, rows = _config(config)
    record, row = records[row_id], rows[row_id]
    images = iter(release.images(row, record))
    content = [{"type": "text", "text": part["text"]} if "text" in part
               else {"type": "image_url", "image_url": {"url": _image_url(next(images))}}
               for part in record["content"]]
    if all(part["type"] == "text" for part in content):  # a text-only row goes out as plain text
        content = release.user_text(record)
    return [{"role": "system", "content": record["system"]}, {"role": "user", "content": content}]


@_register(register_dataset, DATASET_REGISTRY, "benchsmith_release")
class BenchsmithRelease(BaseDataset):
    """A config of this release (`subset`): `input` is benchsmith's user text, `reference` the key
    (a choice row's option numbers, else its `answer_text`); `metadata` carries the row id and what
    the checkers read of the row (its typed key and option texts)."""

    def __init__(self, dataset_name: str = "benchsmith_release", split: str = "test", subset: str | None = None,
                 **kwargs: Any):
        super().__init__(dataset_name=dataset_name, split=split, subset=subset or "full", **kwargs)

    def load(self) -> list[dict[str, Any]]:
        records, rows = _config(self.subset)
        return [{"input": release.user_text(records[row_id]), "reference": release.target(row),
                 "metadata": {"id": row_id, "config": self.subset, "exam": row["exam"], "multimodal": row["multimodal"],
                              "answer_format": row.get("answer_format"),
                              "row": {**{name: row.get(name) for name in ROW_FIELDS},
                                      "options": release.option_texts(row)}}}
                for row_id, row in rows.items()]

    def info(self) -> dict[str, Any]:
        return {"name": self.dataset_name, "split": self.split, "subset": self.subset,
                "release": str(release.RELEASE), "evaluation_only": [EVALUATION_METHOD]}


@_register(register_model, MODEL_REGISTRY, "benchsmith_openai")
class BenchsmithOpenAI(BaseModel):
    """An HRET model backend (HRET's public `BaseModel`: `generate_batch`) sending benchsmith's
    request for each item to an OpenAI-compatible server with the `openai` client: its messages,
    the release's decoding (temperature, token limit, seed, stop), each reply kept with its own
    item. A request that still fails after the client's retries stops the run, naming the item: a
    failed request is never scored as a wrong answer."""

    def __init__(self, model_name: str | None = None, api_base: str | None = None, api_key: str | None = None,
                 batch_size: int = 8, max_retries: int = 3, timeout: float = 600.0, **kwargs: Any):
        super().__init__(**kwargs)
        if not model_name or not api_base:
            raise ValueError("model_name and api_base are required")
        self.model_name, self.api_base, self.batch_size = model_name, api_base, batch_size
        self.api_key = api_key or os.environ.get("OPENAI_API_KEY") or "none"
        self.max_retries, self.timeout = max_retries, timeout  # a reasoning reply of max_tokens takes minutes

    def payload(self, item: dict[str, Any]) -> dict[str, Any]:
        meta = item["metadata"]
        body: dict[str, Any] = {"model": self.model_name, "messages": messages(meta["config"], meta["id"]),
                                "temperature": DECODING["temperature"], "max_tokens": DECODING["max_tokens"]}
        if DECODING["seed"] is not None:
            body["seed"] = DECODING["seed"]
        if DECODING["stop"]:
            body["stop"] = DECODING["stop"]
        return body

    def generate_batch(self, inputs: list[dict[str, Any]], return_logits: bool = False, cot: bool = False,
                       batch_size: Any = "auto", until: Any = None, **kwargs: Any) -> list[dict[str, Any]]:
        return asyncio.run(self._generate(inputs))

    async def _generate(self, inputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        import openai

        limit = asyncio.Semaphore(self.batch_size)
        client = openai.AsyncOpenAI(api_key=self.api_key, base_url=self.api_base, timeout=self.timeout,
                                    max_retries=self.max_retries)

        async def one(item: dict[str, Any]) -> dict[str, Any]:
            async with limit:
                try:
                    response = await client.chat.completions.create(**self.payload(item))
                except Exception as error:
                    meta = item["metadata"]
                    raise RuntimeError(f"item {meta['id']} (config {meta['config']}): the request failed: "
                                       f"{type(error).__name__}: {error}") from error
            choice = response.choices[0]
            return {**item, "prediction": choice.message.content, "finish_reason": choice.finish_reason}

        async with client:
            return list(await asyncio.gather(*(one(item) for item in inputs)))


@_register(register_evaluator, EVALUATION_REGISTRY, EVALUATION_METHOD)
class BenchsmithCheckers(BaseEvaluator):
    """Each reply scored by benchsmith's checker for its row's format: `is_correct` exactly when
    benchsmith scores it correct; `accuracy` and the share of each outcome benchsmith reports apart."""

    name = EVALUATION_METHOD

    def evaluate_predictions(self, samples: list[dict[str, Any]]) -> dict[str, float]:
        for sample in samples:
            # as the server gave it: `length` (cut off) is an error, never correct
            result = release.score(sample.get("prediction"), sample["metadata"]["row"], sample.get("finish_reason"))
            sample["evaluation"] = {"is_correct": result["correct"], "outcome": result["outcome"],
                                    "answer": result["answer"], "method": result["method"],
                                    "checker": result["checker"], "explanation": result["explanation"]}
        metrics = [release.outcome_metrics(sample["evaluation"] | {"correct": sample["evaluation"]["is_correct"]})
                   for sample in samples]
        return {("accuracy" if name == "acc" else name): sum(m[name] for m in metrics) / len(samples) if samples else 0.0
                for name in ("acc", *release.RATE_OUTCOMES)}


def evaluate(config: str, model: str, base_url: str, concurrency: int = 8) -> Any:
    """HRET's `Evaluator().run` on one config of this release; its EvaluationResult. HRET returns a
    failed run as a result (status `failed`, no samples): that stops here, with HRET's message."""
    result = Evaluator().run(model="benchsmith_openai", dataset="benchsmith_release", subset=config,
                             evaluation_method=EVALUATION_METHOD, language_penalize=False,
                             model_params={"model_name": model, "api_base": base_url, "batch_size": concurrency})
    failed = result.info.get("status") == "failed" or "pipeline_error" in result.metrics or "accuracy" not in result.metrics
    if failed:
        reason = result.info.get("error_message") or result.metrics.get("pipeline_error") or "no accuracy in its result"
        raise SystemExit(f"HRET 실행 실패, 설정 {config} (HRET failed on config {config}): {reason}")
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Run this benchsmith release with HRET (haerae-evaluation-toolkit).")
    parser.add_argument("--config", default="full", help="config name, or several separated by commas")
    parser.add_argument("--model", required=True, help="the served model name")
    parser.add_argument("--base-url", required=True, help="the OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--output", type=Path, default=None,
                        help="JSON file for {config: HRET's result (metrics, samples, info)}")
    args = parser.parse_args(argv)
    results = {}
    for config in args.config.split(","):
        result = evaluate(config, args.model, args.base_url, args.concurrency)
        results[config] = result.to_dict()
        print(f"{config}: accuracy {result.metrics['accuracy']:.4f} over {len(result.samples)} items")
    if args.output is not None:
        args.output.write_text(json.dumps(results, ensure_ascii=False, indent=1, default=str), encoding="utf-8")


if __name__ == "__main__":
    main()
