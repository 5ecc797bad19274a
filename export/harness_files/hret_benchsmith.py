"""HRET (haerae-evaluation-toolkit, `llm_eval`) components for this benchsmith release
(copied in by benchsmith at build time; do not edit).

    python RELEASE/harness/hret/benchsmith_hret.py --config full --model MODEL --base-url URL

Importing this file registers in HRET's own registries:

- dataset `benchsmith_release` (subset = a config of this release): the config's rows from this
  release's parquet files, with benchsmith's prompt for each (`../prompts/CONFIG.jsonl`), every
  answer format;
- model backend `benchsmith_openai`: HRET's OpenAI backend sending benchsmith's messages (the
  system text, then the question's text and images in benchsmith's order), greedy, with
  benchsmith's token limit, each prediction kept with its own item;
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
import functools
import importlib.abc
import importlib.machinery
import importlib.util
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
# HRET 0.1.0 imports its local-model backends (torch, transformers) and its report analysis
# (spaCy) whenever `llm_eval` is imported, though the OpenAI path never calls them; installed
# lean (`pip install --no-deps haerae-evaluation-toolkit`) they are absent.
LOCAL_ONLY_MODULES = ("torch", "transformers", "spacy")
EVALUATION_METHOD = "benchsmith_checkers"
# what the checkers read of a row: its typed key (and, for a choice key, the option numbers); option texts apart
ROW_FIELDS = ("key", "answer_format", "answer", "answers", "question_format")


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


def _stand_in_for_local_only_modules() -> None:
    """Only for those not installed (last on the import path): a full install is used as it is."""
    missing = {name for name in LOCAL_ONLY_MODULES if importlib.util.find_spec(name) is None}
    if missing:
        sys.meta_path.append(_AbsentFinder(missing))


_stand_in_for_local_only_modules()
from llm_eval.datasets import DATASET_REGISTRY, BaseDataset  # noqa: E402
from llm_eval.evaluation import EVALUATION_REGISTRY, BaseEvaluator  # noqa: E402
from llm_eval.models import MODEL_REGISTRY  # noqa: E402
from llm_eval.models.openai_backend import OpenAIModel  # noqa: E402


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


class BenchsmithOpenAI(OpenAIModel):
    """HRET's OpenAI backend with benchsmith's request. HRET 0.1.0's own batch pairs each reply
    with the item at the same position in *completion* order (`zip(inputs, as_completed(...))`),
    so concurrent replies land on the wrong items; here each reply stays with its request."""

    def __init__(self, **kwargs: Any):
        kwargs.setdefault("temperature", DECODING["temperature"])
        kwargs.setdefault("max_tokens", DECODING["max_tokens"])
        kwargs.setdefault("timeout", 600.0)  # a reasoning reply of max_tokens takes longer than HRET's 30 s
        kwargs.setdefault("api_key", os.environ.get("OPENAI_API_KEY") or "none")
        super().__init__(**kwargs)

    def _create_payload(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """HRET's payload with the release's seed and stop rule, which HRET's backend does not send."""
        payload = super()._create_payload(*args, **kwargs)
        if DECODING["seed"] is not None:
            payload["seed"] = DECODING["seed"]
        if DECODING["stop"]:
            payload["stop"] = DECODING["stop"]
        return payload

    async def _generate_batch_async(self, inputs: list[dict[str, Any]], return_logits: bool = False,
                                    until: Any = None, cot: bool = False, max_retries: int | None = None,
                                    show_progress: bool = True, **kwargs: Any) -> list[dict[str, Any]]:
        limit = asyncio.Semaphore(self.batch_size)

        async def one(client: Any, item: dict[str, Any]) -> dict[str, Any]:
            meta = item["metadata"]
            request = {**item, "input": messages(meta["config"], meta["id"])}
            async with limit:
                try:
                    reply = await self._send_single_request_async(client, request, return_logits, until, cot=cot,
                                                                  max_retries=max_retries, **kwargs)
                except Exception as error:  # as HRET's backend does: the item stays, unanswered
                    reply = {"error": str(error), "prediction": None, "finish_reason": "error"}
            return {**item, **reply}

        async with self.client as client:
            return list(await asyncio.gather(*(one(client, item) for item in inputs)))


class BenchsmithCheckers(BaseEvaluator):
    """Each reply scored by benchsmith's checker for its row's format: `is_correct` exactly when
    benchsmith scores it correct; `accuracy` and the share of each outcome benchsmith reports apart."""

    name = EVALUATION_METHOD

    def evaluate_predictions(self, samples: list[dict[str, Any]]) -> dict[str, float]:
        for sample in samples:
            finish = sample.get("finish_reason")  # as the server gave it: `length` (cut off) is an error
            if finish == "error":  # the request failed (this backend's mark): no reply to score
                result = {"outcome": "error", "correct": False, "answer": None, "method": None, "checker": "",
                          "explanation": str(sample.get("error") or "the request failed")}
            else:
                result = release.score(sample.get("prediction"), sample["metadata"]["row"], finish)
            sample["evaluation"] = {"is_correct": result["correct"], "outcome": result["outcome"],
                                    "answer": result["answer"], "method": result["method"],
                                    "checker": result["checker"], "explanation": result["explanation"]}
        metrics = [release.outcome_metrics(sample["evaluation"] | {"correct": sample["evaluation"]["is_correct"]})
                   for sample in samples]
        return {("accuracy" if name == "acc" else name): sum(m[name] for m in metrics) / len(samples) if samples else 0.0
                for name in ("acc", *release.RATE_OUTCOMES)}


# registered once, whether this file is imported or run (then it is also `__main__`)
DATASET_REGISTRY.setdefault("benchsmith_release", BenchsmithRelease)
MODEL_REGISTRY.setdefault("benchsmith_openai", BenchsmithOpenAI)
EVALUATION_REGISTRY.setdefault(EVALUATION_METHOD, BenchsmithCheckers)


def evaluate(config: str, model: str, base_url: str, concurrency: int = 8) -> Any:
    """HRET's `Evaluator().run` on one config of this release; its EvaluationResult."""
    from llm_eval.evaluator import Evaluator

    result = Evaluator().run(model="benchsmith_openai", dataset="benchsmith_release", subset=config,
                             evaluation_method=EVALUATION_METHOD, language_penalize=False,
                             model_params={"model_name": model, "api_base": base_url, "batch_size": concurrency})
    if "error" in result.info:
        raise SystemExit(f"HRET failed on config {config}: {result.info['error']}")
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
