"""inspect_ai task for this benchsmith release (copied in at build time).

    LOCAL_BASE_URL=URL/v1 LOCAL_API_KEY=none inspect eval RELEASE/harness/inspect/task.py@benchsmith_release \
        -T config=full --model openai-api/local/MODEL

Prompts (system text, Korean question and options, images where benchsmith puts them) and
scoring come from `../benchsmith_release.py`, which scores every answer format with benchsmith's
own checkers (`../benchsmith_scoring/`): a response scores as in `benchsmith report`. A sample's
score is C when correct, else I; its metadata holds the outcome (wrong, unparseable, error,
undecided) and the checker.
Decoding is the release's own (`release.json` → `decoding`). Use the `openai-api/` provider:
`openai/` treats any model name as an OpenAI one (the system text goes out as `developer`, the
temperature is dropped, `max_completion_tokens` replaces `max_tokens`).
"""

import base64
import os
import sys

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, ContentImage, ContentText, GenerateConfig
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState, generate

# harness/ holds the shared modules; abspath, not resolve(): in the Hub cache this file is a
# symlink into blobs/, where nothing else of the release is
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import benchsmith_release as release  # noqa: E402


def _generate_config():
    decoding = release.decoding()
    return GenerateConfig(temperature=decoding["temperature"], max_tokens=decoding["max_tokens"],
                          seed=decoding["seed"], stop_seqs=list(decoding["stop"]) or None)


def _image(value):
    data = value["bytes"]
    mime = "image/jpeg" if data[:3] == b"\xff\xd8\xff" else "image/png"
    return ContentImage(image=f"data:{mime};base64,{base64.b64encode(data).decode()}")


# inspect's stop reasons as the OpenAI API's finish reasons (those the checkers treat as errors)
FINISH_REASONS = {"max_tokens": "length", "model_length": "length", "content_filter": "content_filter"}
# what the scorer reads of a row: its typed key (and, for a choice key, the option numbers) and option texts
ROW_FIELDS = ("key", "answer_format", "answer", "answers", "question_format")


def _sample(row, record):
    images = iter(release.images(row, record))
    content = [ContentText(text=part["text"]) if "text" in part else _image(next(images)) for part in record["content"]]
    scored = {**{name: row.get(name) for name in ROW_FIELDS}, "options": [{"text": o["text"]} for o in row["options"]]}
    return Sample(id=row["id"], input=[ChatMessageSystem(content=record["system"]), ChatMessageUser(content=content)],
                  target=release.target(row),
                  metadata={"row": scored, "exam": row["exam"], "multimodal": row["multimodal"],
                            "answer_format": row.get("answer_format")})


@scorer(metrics=[accuracy(), stderr()])
def benchsmith_score():
    async def score(state: TaskState, target: Target) -> Score:
        # cut off at the token limit, or filtered: an error in benchsmith, never correct
        finish = FINISH_REASONS.get(state.output.stop_reason)
        result = release.score(state.output.completion, state.metadata["row"], finish)
        return Score(value=CORRECT if result["correct"] else INCORRECT, answer=str(result["answer"]),
                     explanation=f"{result['outcome']} (benchsmith {result['checker']}: {result['explanation']})",
                     metadata={"outcome": result["outcome"], "checker": result["checker"],
                               "checker_version": result["checker_version"], "method": result["method"]})

    return score


@task
def benchsmith_release(config: str = "full"):
    table = release.prompts(config)
    samples = [_sample(row, table[row["id"]]) for row in release.read_rows(config)]
    return Task(dataset=MemoryDataset(samples, name=config), solver=generate(), scorer=benchsmith_score(),
                config=_generate_config())
