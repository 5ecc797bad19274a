"""inspect_ai task for this benchsmith release (copied in at build time).

    LOCAL_BASE_URL=URL/v1 LOCAL_API_KEY=none inspect eval RELEASE/harness/inspect/task.py@benchsmith_release \
        -T config=full --model openai-api/local/MODEL

Prompts (system text, Korean question and options, images where benchsmith puts them) and
scoring come from `../benchsmith_scoring.py`: a response scores as in `benchsmith report`.
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

# harness/ holds the generated scoring module; abspath, not resolve(): in the Hub cache this file is a
# symlink into blobs/, where nothing else of the release is
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import benchsmith_scoring as scoring  # noqa: E402


def _generate_config():
    decoding = scoring.decoding()
    return GenerateConfig(temperature=decoding["temperature"], max_tokens=decoding["max_tokens"],
                          seed=decoding["seed"], stop_seqs=list(decoding["stop"]) or None)


def _image(value):
    data = value["bytes"]
    mime = "image/jpeg" if data[:3] == b"\xff\xd8\xff" else "image/png"
    return ContentImage(image=f"data:{mime};base64,{base64.b64encode(data).decode()}")


def _sample(row, record):
    images = iter(scoring.images(row, record))
    content = [ContentText(text=part["text"]) if "text" in part else _image(next(images)) for part in record["content"]]
    key = {"answers": row["answers"], "answer": row["answer"], "question_format": row["question_format"],
           "options": [{"text": option["text"]} for option in row["options"]]}
    return Sample(id=row["id"], input=[ChatMessageSystem(content=record["system"]), ChatMessageUser(content=content)],
                  target=[str(answer) for answer in row["answers"]],
                  metadata={"key": key, "exam": row["exam"], "multimodal": row["multimodal"]})


@scorer(metrics=[accuracy(), stderr()])
def benchsmith_score():
    async def score(state: TaskState, target: Target) -> Score:
        result = scoring.score(state.output.completion, state.metadata["key"])
        if state.output.stop_reason == "max_tokens":  # cut off: an error in benchsmith, never correct
            result = {**result, "correct": False, "method": "truncated"}
        return Score(value=CORRECT if result["correct"] else INCORRECT, answer=str(result["answer"]),
                     explanation=f"parsed by benchsmith ({result['method']})")

    return score


@task
def benchsmith_release(config: str = "full"):
    table = scoring.prompts(config)
    samples = [_sample(row, table[row["id"]]) for row in scoring.read_rows(config)]
    return Task(dataset=MemoryDataset(samples, name=config), solver=generate(), scorer=benchsmith_score(),
                config=_generate_config())
