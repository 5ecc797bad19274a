"""The decoding a release is meant to be run with, defined once: what `benchsmith evaluate` sends
by default and what every harness export (lm-eval, inspect_ai, VLMEvalKit notes) is written to
send, recorded in the release (`release.json` → `decoding`, and its card).

A model that reasons before "정답: N" must not be cut off in one harness and scored in another,
so there is one token limit; greedy decoding with a fixed seed, no stop sequence; one system
message (the prompt's role text) and one user message; images inline where the paper puts them
(harnesses that can only send images first number them, see `export/image_numbering.py`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class DecodingContract(BaseModel):
    """Every field is required, so a manifest written with `exclude_unset` keeps all of them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    roles: tuple[Literal["system"], Literal["user"]] = Field(description="the messages, in order")
    temperature: float = Field(ge=0)
    max_tokens: int = Field(ge=1, description="new tokens at most; sent as `max_tokens`")
    seed: int | None
    stop: tuple[str, ...] = Field(description="stop sequences; none: the model ends its answer itself")
    images: Literal["inline"] = Field(description="where images stand in the user message")

    def describe(self) -> str:
        """One sentence for the card and the harness README."""
        stop = ", ".join(f"`{s}`" for s in self.stop) or "no stop sequence"
        return (f"one `{self.roles[0]}` message (the prompt's role text) and one `{self.roles[1]}` message, "
                f"temperature {self.temperature:g}, at most {self.max_tokens} new tokens (`max_tokens`), "
                f"seed {self.seed}, {stop}, images inline where the paper puts them")


RELEASE_DECODING = DecodingContract(roles=("system", "user"), temperature=0.0, max_tokens=4096, seed=1234, stop=(),
                                    images="inline")
