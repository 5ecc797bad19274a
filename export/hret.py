"""The release's export for HRET, the HAE-RAE Evaluation Toolkit (`haerae-evaluation-toolkit`,
package `llm_eval`): `harness/hret/benchsmith_hret.py` registers the release as an HRET dataset,
benchsmith's request as an HRET model backend and benchsmith's scoring as an HRET evaluation
method (benchsmith's checkers, every answer format), and runs them through HRET's `Evaluator().run`
(see harness_files/hret_benchsmith.py, copied as it is).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from evaluation.decoding import DecodingContract

SOURCE = "hret_benchsmith.py"
HRET_VERSION = "0.1.0"  # = TESTED_HRET[-1] in harness_files/hret_benchsmith.py
# HRET 0.1.0's own ranges (its wheel's Requires-Dist) for what its OpenAI path imports, and pyarrow, pyyaml
LEAN_REQUIREMENTS = ("'openai>=1.0,<1.100' 'httpx>=0.24' 'pandas>=1.5' pyarrow pyyaml 'tqdm>=4.64' "
                     "'datasets>=3.2' 'scikit-learn>=1.1' 'langdetect>=1.0.9' 'math-verify>=0.1'")
SCRIPT = "benchsmith_hret.py"


def write_hret(folder: Path) -> list[Path]:
    """The script, which reads the release's decoding from `release.json` when it runs."""
    source = resources.files("export.harness_files").joinpath(SOURCE).read_bytes()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / SCRIPT
    path.write_bytes(source)
    return [path]


def readme_section(decoding: DecodingContract) -> list[str]:
    """The HRET part of `harness/README.md`."""
    return [
        "## HRET, the HAE-RAE Evaluation Toolkit",
        "",
        f"The script is tested with HRET {HRET_VERSION} and refuses another version with a clear message.",
        f"Install `pip install haerae-evaluation-toolkit=={HRET_VERSION}` (with all it requires: torch, vLLM,",
        "transformers, spaCy, LiteLLM), or, for an OpenAI-compatible server only, lean: first what its",
        "OpenAI path needs, within HRET's own version ranges, then HRET without its requirements (in",
        "this order pip reports no conflict; `pip check` still lists the local-model packages left out):",
        "",
        "```",
        f"pip install {LEAN_REQUIREMENTS}",
        f"pip install --no-deps haerae-evaluation-toolkit=={HRET_VERSION}",
        "```",
        "",
        "HRET imports torch, transformers and spaCy whenever it is imported, though its OpenAI path never",
        "calls them: where they are absent the script stands in for them while HRET imports, and removes",
        "the stand-ins afterwards. HRET's notice that spaCy's Korean model `ko_core_news_sm` is missing",
        "concerns its optional Markdown report analysis, which the script does not use: it is not shown.",
        "",
        "```",
        f"python RELEASE/harness/hret/{SCRIPT} --config full --model MODEL --base-url URL --output hret.json",
        "```",
        "",
        f"`{SCRIPT}` registers the dataset `benchsmith_release` (subset = config), the model backend",
        "`benchsmith_openai` and the evaluation method `benchsmith_checkers` in HRET's registries and runs",
        "HRET's `Evaluator().run`; import it to use them from your own HRET code. `--config` takes one",
        "config or several, comma-separated; `hret.json` holds HRET's result per config (metrics: `accuracy`",
        "and the share of `unparseable`, `error` and `undecided` replies; per item `evaluation.is_correct`",
        "and `evaluation.outcome`); the API key is `OPENAI_API_KEY` when the server needs",
        "one. Every answer format is scored by benchsmith's checker for it. Requests are benchsmith's:",
        "its system text, its Korean",
        "prompt with question and option images where benchsmith puts them, and the release's decoding",
        f"(temperature {decoding.temperature:g}, up to {decoding.max_tokens} tokens, seed {decoding.seed}); a reply "
        "cut off there is an error, never correct. A request that fails (after the client's retries)",
        "stops the run with the item named; it is never scored as a wrong answer. HRET 0.1.0's own",
        "`openai` backend pairs concurrent replies with the wrong items (it zips the inputs with replies",
        "in completion order) and sends text only, so the release uses its own backend, built on HRET's",
        "public `BaseModel`.",
        "",
    ]
