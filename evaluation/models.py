"""Model declarations: YAML files or short inline specs, validated into one `ModelSpec`.

Capabilities (vision, thinking, structured output) always come from the declaration,
never from a list of model names.

Inline specs::

    openai-compatible:MODEL@http://127.0.0.1:8000/v1
    gemini:gemini-2.5-pro      vllm:Qwen/Qwen3-8B      hf:ID
    llamacpp:/path/model.gguf  llamacpp:gemma3-270m    baseline:longest

Options may follow after `?`, e.g. `vllm:ID?vision=true&temperature=0.6&tensor_parallel_size=2`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from curation.core.errors import BenchsmithError
from curation.core.item import describe_validation_error
from evaluation.decoding import RELEASE_DECODING, DecodingContract

Backend = Literal["openai-compatible", "gemini", "vllm", "hf", "llamacpp", "baseline"]
BACKENDS: tuple[str, ...] = ("openai-compatible", "gemini", "vllm", "hf", "llamacpp", "baseline")
PACKAGED_LLAMACPP = "gemma3-270m"


class ModelConfigError(BenchsmithError):
    """A model spec or model YAML that cannot be used."""

    exit_code = 2


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Capabilities(_Strict):
    vision: bool = False
    thinking: bool = False
    structured_output: bool = Field(False, description="the backend honours a JSON schema natively")


class Decoding(_Strict):
    """What a model is sent; unset, what releases are meant to be run with (evaluation/decoding.py)."""

    temperature: float | None = Field(RELEASE_DECODING.temperature, ge=0)
    top_p: float | None = Field(None, gt=0, le=1)
    max_tokens: int | None = Field(RELEASE_DECODING.max_tokens, ge=1)
    seed: int | None = RELEASE_DECODING.seed
    thinking_level: str | None = Field(None, description="gemini: minimal|low|medium|high")
    thinking_budget: int | None = None
    stream: bool = False
    stop: list[str] | None = None


class PromptOverride(_Strict):
    system: str | None = None
    instruction: str | None = Field(None, description="replaces the answer-format instruction")


class ModelSpec(_Strict):
    name: str = Field(min_length=1)
    backend: Backend
    model: str = Field(min_length=1, description="model id, path or baseline name")
    revision: str | None = None
    base_url: str | None = None
    api_key_env: str | None = Field(None, description="environment variable holding the API key")
    capabilities: Capabilities = Field(default_factory=Capabilities)
    decoding: Decoding = Field(default_factory=Decoding)
    prompts: dict[str, PromptOverride] = Field(default_factory=dict, description="per-prompt overrides")
    timeout_s: float = Field(120.0, gt=0)
    max_retries: int = Field(4, ge=0)
    options: dict[str, Any] = Field(default_factory=dict, description="backend-specific (tensor_parallel_size, n_ctx …)")

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, url: str | None) -> str | None:
        if url is not None and not re.match(r"^https?://", url):
            raise ValueError(f"base_url {url!r} must start with http:// or https://")
        return url.rstrip("/") if url else url

    def decoded_as(self, contract: DecodingContract) -> ModelSpec:
        """This spec with the decoding it leaves unset taken from `contract` (what a release is meant to be
        run with); what the spec sets (`?max_tokens=…`, a models.yaml `decoding:`) stays."""
        wanted = {"temperature": contract.temperature, "max_tokens": contract.max_tokens, "seed": contract.seed,
                  "stop": list(contract.stop) or None}
        unset = {name: value for name, value in wanted.items() if name not in self.decoding.model_fields_set}
        return self.model_copy(update={"decoding": self.decoding.model_copy(update=unset)})

    def identity(self) -> dict[str, Any]:
        """What the cache key needs to know about the model (not its name or URL)."""
        return {"backend": self.backend, "model": self.model, "revision": self.revision,
                "options": {k: v for k, v in sorted(self.options.items()) if k in _IDENTITY_OPTIONS}}


_IDENTITY_OPTIONS = {"chat_format", "dtype", "quantization", "n_ctx"}
_CAPABILITY_KEYS = set(Capabilities.model_fields)
_DECODING_KEYS = set(Decoding.model_fields)
_TOP_KEYS = {"revision", "timeout_s", "max_retries", "api_key_env", "name", "base_url"}


def _coerce(raw: str) -> Any:
    try:
        return yaml.safe_load(raw)
    except yaml.YAMLError:
        return raw


def _split_inline(spec: str) -> tuple[str, str, dict[str, Any]]:
    backend, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise ModelConfigError(f"model spec {spec!r}: expected BACKEND:MODEL (backends: {', '.join(BACKENDS)})")
    if backend not in BACKENDS:
        raise ModelConfigError(f"model spec {spec!r}: unknown backend {backend!r} (choose one of {', '.join(BACKENDS)})")
    target, _, query = rest.partition("?")
    options = {key: _coerce(value) for key, value in parse_qsl(query, keep_blank_values=True)}
    return backend, target, options


def parse_inline_spec(spec: str) -> ModelSpec:
    backend, target, options = _split_inline(spec.strip())
    data: dict[str, Any] = {"backend": backend, "capabilities": {}, "decoding": {}, "options": {}}
    if backend == "openai-compatible":
        model, at, url = target.rpartition("@")
        if not at or not model or not url:
            raise ModelConfigError(f"model spec {spec!r}: expected openai-compatible:MODEL@http://HOST:PORT/v1")
        data.update(model=model, base_url=url)
    else:
        data["model"] = target
    for key, value in options.items():
        if key in _CAPABILITY_KEYS:
            data["capabilities"][key] = value
        elif key in _DECODING_KEYS:
            data["decoding"][key] = value
        elif key in _TOP_KEYS:
            data[key] = value
        else:
            data["options"][key] = value
    data.setdefault("name", f"{backend}:{data['model']}")
    return _validate(data, f"model spec {spec!r}")


def _validate(data: Any, where: str) -> ModelSpec:
    if not isinstance(data, dict):
        raise ModelConfigError(f"{where}: expected a mapping with name, backend and model")
    try:
        return ModelSpec.model_validate(data)
    except ValidationError as error:
        raise ModelConfigError(f"{where}: " + "; ".join(describe_validation_error(error))) from None


def load_models_file(path: Path) -> dict[str, ModelSpec]:
    """A YAML file holding one model mapping, a list of them, or `models: [...]`."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise ModelConfigError(f"{path}: cannot read model config: {error.strerror}") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise ModelConfigError(f"{path}: malformed YAML{where}: {getattr(error, 'problem', error)}") from None
    if isinstance(data, dict) and "models" in data:
        data = data["models"]
    entries = data if isinstance(data, list) else [data]
    specs: dict[str, ModelSpec] = {}
    for number, entry in enumerate(entries, start=1):
        spec = _validate(entry, f"{path}: model {number}")
        if spec.name in specs:
            raise ModelConfigError(f"{path}: model name {spec.name!r} is declared twice")
        specs[spec.name] = spec
    if not specs:
        raise ModelConfigError(f"{path}: no models declared")
    return specs


def resolve_model(spec: str, models_file: Path | None = None) -> ModelSpec:
    """An inline spec, `FILE.yaml`, `FILE.yaml:NAME`, or a NAME declared in `models_file`."""
    spec = spec.strip()
    if spec.partition(":")[0] in BACKENDS:
        return parse_inline_spec(spec)
    as_file = re.match(r"^(?P<file>.+\.ya?ml)(?::(?P<name>.+))?$", spec)
    if as_file:
        specs = load_models_file(Path(as_file["file"]))
        if as_file["name"]:
            return _pick(specs, as_file["name"], as_file["file"])
        if len(specs) > 1:
            raise ModelConfigError(f"{spec} declares {len(specs)} models: pick one with {spec}:NAME")
        return next(iter(specs.values()))
    if models_file is not None and models_file.is_file():
        return _pick(load_models_file(models_file), spec, str(models_file))
    if ":" in spec:
        return parse_inline_spec(spec)  # names the unknown backend
    raise ModelConfigError(
        f"unknown model {spec!r}: use BACKEND:MODEL ({', '.join(BACKENDS)}), a models YAML file, "
        "or a name declared in the workspace's models.yaml"
    )


def resolve_model_list(path: Path, models_file: Path | None = None) -> list[ModelSpec]:
    """Every model of a models YAML file, or one spec per line of a text file (`#` starts a comment)."""
    if path.suffix in (".yaml", ".yml"):
        return list(load_models_file(path).values())
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise ModelConfigError(f"{path}: cannot read the model list: {error.strerror}") from None
    specs = [resolve_model(line.split("#", 1)[0], models_file) for line in lines if line.split("#", 1)[0].strip()]
    if not specs:
        raise ModelConfigError(f"{path}: no models listed")
    return specs


def _pick(specs: dict[str, ModelSpec], name: str, where: str) -> ModelSpec:
    if name not in specs:
        raise ModelConfigError(f"{where}: no model named {name!r} (declared: {', '.join(specs)})")
    return specs[name]
