"""Exports inside a release for the harnesses researchers already run: lm-evaluation-harness
tasks, an inspect_ai task and VLMEvalKit TSVs, plus `harness/README.md` with one command each.

lm-eval, inspect and HRET read the release's own parquet files (from any folder) and score every
answer format through `harness/benchsmith_release.py` with `harness/benchsmith_scoring/`, the
portable scorer copied whole (see export/harness_scoring.py); VLMEvalKit's tables come with a
script that scores its predictions the same way. Which formats each harness carries, and what
it cannot, `harness/README.md` says per config (`formats_section`).
"""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from evaluation.decoding import DecodingContract
from export.hret import readme_section as hret_readme_section
from export.image_numbering import image_mark, images_first_note
from export.vlmevalkit import not_carried
from scoring.portable import FORMATS

LM_EVAL_METRICS = ("acc", "unparseable", "error", "undecided")  # harness_files/benchsmith_release.py: outcome_metrics


class _FunctionTag(str):
    """`!function utils.x` in lm-eval YAML."""


def _function_representer(dumper: yaml.Dumper, value: _FunctionTag) -> yaml.Node:
    return dumper.represent_scalar("!function", str(value))


yaml.add_representer(_FunctionTag, _function_representer)


def _copy_packaged(name: str, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    with resources.as_file(resources.files("export.harness_files").joinpath(name)) as source:
        shutil.copyfile(source, target)
    return target


def task_name(release: str, config: str) -> str:
    return f"{release}_{config}".replace("-", "_").replace(".", "_")


def has_images(rows: list[dict[str, Any]]) -> bool:
    return any(row["question_images"] or any(o["image"] for o in row["options"]) for row in rows)


def write_lm_eval(folder: Path, name: str, configs: list[str], decoding: DecodingContract) -> list[Path]:
    """One generate-until task per config and no tag or group over them: configs overlap, so a run
    of them together would send an item once per config that holds it (and a group score would
    count it twice). Each task generates with the release's decoding."""
    written = [_copy_packaged("lm_eval_utils.py", folder / "utils.py")]
    for config in configs:
        spec: dict[str, Any] = {
            "task": task_name(name, config),
            "custom_dataset": _FunctionTag("utils.load_config"),
            "dataset_kwargs": {"config": config},
            "test_split": "test",
            "output_type": "generate_until",
            "description": "{{benchsmith_system}}",
            "doc_to_text": _FunctionTag("utils.doc_to_text"),
            "doc_to_target": _FunctionTag("utils.doc_to_target"),
            # on every task, even text-only ones: lm_eval's API model decides from the first request of
            # a batch whether any request carries images, and batches mix the tasks of a run
            "doc_to_image": _FunctionTag("utils.doc_to_image"),
            "target_delimiter": "",
            # the seed is a model argument (`seed=` in the README's command), not a generation one
            "generation_kwargs": {"until": list(decoding.stop), "do_sample": decoding.temperature > 0,
                                  "temperature": decoding.temperature, "max_gen_toks": decoding.max_tokens},
            "process_results": _FunctionTag("utils.process_results"),
            # acc, and the share of each outcome benchsmith reports apart (never counted as solved or unsolved)
            "metric_list": [{"metric": name, "aggregation": "mean", "higher_is_better": name == "acc"}
                            for name in LM_EVAL_METRICS],
            "metadata": {"version": 1.0},
        }
        path = folder / f"{spec['task']}.yaml"
        path.write_text(yaml.dump(spec, allow_unicode=True, sort_keys=False), encoding="utf-8")
        written.append(path)
    return written


def write_inspect(folder: Path) -> list[Path]:
    return [_copy_packaged("inspect_task.py", folder / "task.py")]


def _decoding_section(decoding: DecodingContract) -> list[str]:
    example_mark = image_mark(3, 2)
    return [
        "## Decoding and images",
        "",
        "Every command below sends the decoding this release is meant to be run with (`release.json` →",
        f"`decoding`): {decoding.describe()}. A model may reason before its answer. A reply cut off",
        "at the token limit is an error (never correct) in benchsmith, inspect and HRET; lm-eval's API",
        "model does not pass the finish reason on, so lm-eval scores such a reply from its text.",
        "",
        "| | benchsmith, inspect_ai (`openai-api/`), HRET | lm-eval |",
        "|---|---|---|",
        f"| messages | {' + '.join(decoding.roles)} | {' + '.join(decoding.roles)} |",
        f"| temperature | {decoding.temperature:g} | {decoding.temperature:g} |",
        f"| token limit | `max_tokens` {decoding.max_tokens} | `max_tokens` {decoding.max_tokens} |",
        f"| seed | {decoding.seed} | {decoding.seed} (the `seed=` model argument below) |",
        f"| stop | {_stop_text(decoding, absent='not sent')} | {_stop_text(decoding, absent='`[]`')} |",
        "",
        "Use inspect's `openai-api/` provider as below: its `openai/` provider treats every model name",
        "as an OpenAI one (the system text goes out as role `developer`, the temperature is dropped and",
        "`max_completion_tokens` replaces `max_tokens`).",
        "",
        "| harness | where the images go |",
        "|---|---|",
        "| benchsmith, inspect_ai, HRET | inline, where the paper puts them: question images after the question "
        "text, each option's image after its option line |",
        "| lm-eval | every image before the text (its API models can do no other); the text begins with "
        f"`{images_first_note(3)}` and each place an image stood reads `{image_mark(1)}`, or for an option's "
        f"image `{example_mark}` |",
        "| VLMEvalKit | every image before the text, question images first, then option images in option "
        f"order; the `question` cell carries the same note and `{image_mark(1)}` marks, an option shown as a "
        f"picture reads `{image_mark(3)}` |",
        "",
    ]


def _format_counts(rows: list[dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in rows:
        name = row.get("answer_format") or "(no key)"
        counts[name] = counts.get(name, 0) + 1
    return counts


def formats_section(rows_by_config: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Which answer formats each harness carries, the rows of each format per config, and what a
    harness cannot carry (VLMEvalKit: text-only rows of formats other than choice)."""
    configs = list(rows_by_config)
    counts = {config: _format_counts(rows) for config, rows in rows_by_config.items()}
    names = [name for name in (*FORMATS, "(no key)") if any(name in by_format for by_format in counts.values())]
    missing = {config: len(not_carried(rows)) for config, rows in rows_by_config.items()}
    lines = [
        "## Answer formats",
        "",
        "Rows per answer format and config (`answer_format`; the checker's version beside it):",
        "",
        "| format | checker | " + " | ".join(f"`{c}`" for c in configs) + " |",
        "|---|---|" + "---:|" * len(configs),
        *(f"| {name} | {'`' + FORMATS[name].version + '`' if name in FORMATS else '—'} | "
          + " | ".join(str(counts[c].get(name, 0)) for c in configs) + " |" for name in names),
        "",
        "| harness | formats it carries | scored by |",
        "|---|---|---|",
        "| lm-eval (one `generate_until` task per config) | every format | `benchsmith_release.py` in `process_results`: "
        "`acc`, and the shares `unparseable`, `error`, `undecided` |",
        "| inspect_ai (one task, `-T config=NAME`) | every format | `benchsmith_release.py` in its scorer: C when "
        "correct, else I, the outcome in the score's metadata |",
        "| HRET | every format | `benchsmith_release.py` as the evaluation method `benchsmith_checkers` |",
        "| VLMEvalKit | choice (MCQ tables); other formats with images (open-ended table) | "
        "`vlmevalkit/benchsmith_vlmevalkit.py` on its prediction files |",
        "",
        "A `judged` key, and a `text` key a reply matches none of the accepted answers of (unless the key",
        "is strict), leave the reply *undecided*: a judge or a person decides (`benchsmith evaluate",
        "--judge SPEC`, or `benchsmith runs import` of a harness's log with `--judge SPEC`), and until",
        "then every harness counts it in n, never as correct; `benchsmith report` shows it apart, outside",
        "n (with both bounds in accuracy.csv), so the harnesses' accuracy is correct / rows and",
        "benchsmith's correct / (rows − undecided) until the undecided replies are decided.",
        "",
    ]
    if any(missing.values()):
        lines += ["Not carried by VLMEvalKit (text-only rows of formats other than choice): "
                  + ", ".join(f"`{c}` {n}" for c, n in missing.items() if n) + ".", ""]
    else:
        lines += ["Every row of every config is carried by every harness above.", ""]
    return lines


def _stop_text(decoding: DecodingContract, *, absent: str) -> str:
    return ", ".join(f"`{s}`" for s in decoding.stop) if decoding.stop else f"none ({absent})"


def harness_readme(name: str, version: str, rows_by_config: dict[str, list[dict[str, Any]]],
                   decoding: DecodingContract) -> str:
    image_configs = [c for c, rows in rows_by_config.items() if has_images(rows)]
    widest = max((len(row["question_images"]) + sum(bool(o["image"]) for o in row["options"])
                  for rows in rows_by_config.values() for row in rows), default=0)
    lines = [
        *_intro_section(f"{name}-v{version}", list(rows_by_config), image_configs),
        *formats_section(rows_by_config),
        *_decoding_section(decoding),
        *_lm_eval_section(name, list(rows_by_config), widest, decoding),
        *_inspect_section(),
        *_vlmevalkit_section(decoding),
        *hret_readme_section(decoding),
        *_benchsmith_section(bool(image_configs)),
    ]
    return "\n".join(lines)


def _intro_section(release: str, configs: list[str], image_configs: list[str]) -> list[str]:
    return [
        f"# Running {release} in other harnesses",
        "",
        "Every command works from any folder: replace `RELEASE` with the path of this release folder",
        "(the folder holding `release.json`), `URL` with your OpenAI-compatible server (e.g.",
        "`http://127.0.0.1:8000/v1`) and `MODEL` with the served model name. Each harness reads the",
        "parquet files under `RELEASE/data/`, sends benchsmith's own Korean prompt (`prompts/`), and",
        "scores every answer format with benchsmith's own checkers: `benchsmith_scoring/` is the",
        "scorer benchsmith itself imports (`scoring/portable`, copied whole, standard library only;",
        "`pip install math-verify` for expressions and LaTeX numbers, which are *undecided* without",
        "it), called by `benchsmith_release.py` with each row's typed key (the `key` column). So",
        "accuracy per config equals `benchsmith report` on the same responses. Configs overlap",
        "(`hard` ⊂ `full`…): report them one by one, never averaged.",
        "",
        "A release on the Hub is used the same way once downloaded:",
        "`hf download ORG/NAME --repo-type dataset --local-dir RELEASE` writes plain files. Without",
        "`--local-dir` the release lands in the Hub cache, a snapshot folder of symlinks into `blobs/`",
        "(the path `hf download ORG/NAME --repo-type dataset --quiet` prints): inspect, VLMEvalKit and",
        "benchsmith run from that folder as it is, lm-eval does not (it follows its task YAML's symlink",
        "into `blobs/` and finds no `utils.py` there), so for lm-eval copy the snapshot out first:",
        "",
        "```",
        'cp -rL "$(hf download ORG/NAME --repo-type dataset --quiet)" RELEASE',
        "```",
        "",
        f"Configs: {', '.join(f'`{c}`' for c in configs)}; with images: "
        f"{', '.join(f'`{c}`' for c in image_configs) or 'none'}.",
        "",
    ]


def _lm_eval_section(name: str, configs: list[str], widest: int, decoding: DecodingContract) -> list[str]:
    first, *others = [task_name(name, c) for c in configs]
    return [
        "## lm-evaluation-harness (`pip install 'lm_eval[api]>=0.4.13' pillow`)",
        "",
        "```",
        f"lm_eval --model local-chat-completions --model_args model=MODEL,base_url=URL/chat/completions,"
        f"max_images={max(widest, 1)},num_concurrent=8,seed={decoding.seed} --apply_chat_template "
        f"--include_path RELEASE/harness/lm_eval --tasks {first}",
        "```",
        "",
        f"One task per config, run one per command: `{first}` above"
        + (", then " + ", ".join(f"`{t}`" for t in others) + " in its place" if others else "")
        + "; metric `acc`. The configs",
        "overlap (`hard` ⊂ `full`…), so there is no tag or group that runs them together: one would",
        "send (and bill) an item once for every config that holds it. Each request carries its row's",
        "question and option images (`max_images` above is the most any row has), and none for a",
        "text-only row; the server must accept OpenAI list-form message content.",
        "",
    ]


def _inspect_section() -> list[str]:
    return [
        "## inspect_ai (`pip install inspect_ai openai pyarrow`)",
        "",
        "```",
        "LOCAL_BASE_URL=URL LOCAL_API_KEY=none inspect eval RELEASE/harness/inspect/task.py@benchsmith_release \\",
        "    -T config=full --model openai-api/local/MODEL",
        "```",
        "",
        "`openai-api/local/…` is inspect's OpenAI-compatible provider (chat completions; `local` names",
        "the `LOCAL_BASE_URL` / `LOCAL_API_KEY` variables); `-T config=NAME` picks the config. The task",
        "reads its decoding from `release.json`. Question and option images are sent as `ContentImage`",
        "where benchsmith puts them.",
        "",
    ]


def _vlmevalkit_section(decoding: DecodingContract) -> list[str]:
    return [
        "## VLMEvalKit",
        "",
        "`vlmevalkit/CONFIG.tsv` holds the text-only choice rows (VLMEvalKit's text MCQ format, no",
        "`image` column) and `vlmevalkit/CONFIG_image.tsv` the choice rows with images (`image` is a",
        "list of base64 images, numbered in the text as above, `image_path` their file names).",
        "Register each file as a custom MCQ dataset; VLMEvalKit writes its own MCQ prompt, so give the",
        "model the same decoding in its `--config` JSON",
        f"(`\"temperature\": {decoding.temperature:g}, \"max_tokens\": {decoding.max_tokens}`). `answer` is the",
        "option letter; a multi-answer row lists its letters (`A,C`) and VLMEvalKit's MCQ scorer,",
        "which expects one letter, counts it wrong: score with the script below instead.",
        "",
        "`vlmevalkit/CONFIG_openended_image.tsv` holds the rows of other formats that have images: a",
        "custom open-ended dataset for VLMEvalKit (no option columns; `openended` in its name), whose",
        "`question` is benchsmith's own prompt for the row (images numbered as above), `answer` the key",
        "as plain text and `key` the typed key. VLMEvalKit has no scorer for it: run its inference",
        "(`--mode infer`), then score the prediction files, MCQ ones too, with benchsmith's checkers",
        "(`pip install pandas pyarrow openpyxl`):",
        "",
        "```",
        "python RELEASE/harness/vlmevalkit/benchsmith_vlmevalkit.py PREDICTIONS.xlsx --output scores.json",
        "```",
        "",
        "VLMEvalKit's custom open-ended dataset is an image dataset: the text-only rows of other",
        "formats have no table it can load (the table above says how many per config); run them with",
        "lm-eval, inspect, HRET or benchsmith.",
        "",
    ]


def _benchsmith_section(images: bool) -> list[str]:
    """The command sends images as the harnesses above do where the release has any."""
    model = "'openai-compatible:MODEL@URL?vision=true'" if images else "openai-compatible:MODEL@URL"
    lines = [
        "## benchsmith",
        "",
        "```",
        f"benchsmith evaluate --release RELEASE:full --model {model}",
        "```",
        "",
        "No workspace is needed: the runs, response cache and reports go to a per-user one",
        "(`$XDG_DATA_HOME/benchsmith/evaluate`, printed first; `-w DIR` picks another), and each",
        "evaluation writes a report folder of its own (printed last). Every row is scored, as the",
    ]
    if images:
        return [*lines,
                "harnesses above score it, and `?vision=true` sends the images as they do (the model must",
                "read images); without it the model is taken as text-only and the rows with images count",
                "as not answered (in n, never correct), and the output says how many.", ""]
    return [*lines,
            "harnesses above score it. This release has no images; for one that has, add `?vision=true`",
            "to the spec of a model that reads them.", ""]


def write_readme(folder: Path, name: str, version: str, rows_by_config: dict[str, list[dict[str, Any]]],
                 decoding: DecodingContract) -> Path:
    path = folder / "README.md"
    path.write_text(harness_readme(name, version, rows_by_config, decoding), encoding="utf-8")
    return path
