"""Model specs and YAML, and the CLI's one-line errors (each bad input has its own test)."""

from __future__ import annotations

import json

import pytest

from evaluation.models import ModelConfigError, load_models_file, parse_inline_spec, resolve_model
from evaluation.prompts import get_prompt
from tests.conftest import run_cli
from tests.eval_support import seed_items
from tests.fault_server import ServerThread


@pytest.mark.parametrize(("spec", "backend", "model", "url"), [
    ("openai-compatible:Qwen/Qwen3-8B@http://127.0.0.1:8000/v1", "openai-compatible", "Qwen/Qwen3-8B",
     "http://127.0.0.1:8000/v1"),
    ("gemini:gemini-2.5-pro", "gemini", "gemini-2.5-pro", None),
    ("vllm:Qwen/Qwen3-8B?tensor_parallel_size=2", "vllm", "Qwen/Qwen3-8B", None),
    ("hf:org/model", "hf", "org/model", None),
    ("llamacpp:gemma3-270m", "llamacpp", "gemma3-270m", None),
    ("llamacpp:/models/x.gguf", "llamacpp", "/models/x.gguf", None),
    ("baseline:longest", "baseline", "longest", None),
])
def test_inline_specs(spec, backend, model, url) -> None:
    parsed = parse_inline_spec(spec)
    assert (parsed.backend, parsed.model, parsed.base_url) == (backend, model, url)
    assert parsed.capabilities.vision is False  # capabilities come from the declaration only


def test_inline_options_land_in_the_right_place() -> None:
    spec = parse_inline_spec("vllm:Qwen/Qwen3-VL-8B?vision=true&thinking=true&temperature=0.6&seed=7&tensor_parallel_size=2")
    assert spec.capabilities.vision and spec.capabilities.thinking
    assert spec.decoding.temperature == 0.6 and spec.decoding.seed == 7
    assert spec.options == {"tensor_parallel_size": 2}


def test_a_spec_runs_with_the_release_decoding_where_it_sets_none() -> None:
    """`evaluate --release` sends what the release records for every decoding field the spec leaves unset."""
    from evaluation.decoding import DecodingContract

    release = DecodingContract(roles=("system", "user"), temperature=0.7, max_tokens=8192, seed=7, stop=("</s>",),
                               images="inline")
    plain = parse_inline_spec("openai-compatible:m@http://127.0.0.1:8000/v1").decoded_as(release).decoding
    assert (plain.temperature, plain.max_tokens, plain.seed, plain.stop) == (0.7, 8192, 7, ["</s>"])
    capped = parse_inline_spec("openai-compatible:m@http://127.0.0.1:8000/v1?max_tokens=100&seed=3").decoded_as(release)
    assert (capped.decoding.temperature, capped.decoding.max_tokens, capped.decoding.seed) == (0.7, 100, 3)


def test_unset_decoding_is_what_releases_are_run_with() -> None:
    decoding = parse_inline_spec("openai-compatible:m@http://127.0.0.1:8000/v1").decoding
    assert (decoding.temperature, decoding.max_tokens, decoding.seed, decoding.stop) == (0.0, 4096, 1234, None)


def test_yaml_declares_models_with_prompt_overrides(tmp_path) -> None:
    path = tmp_path / "models.yaml"
    path.write_text(
        "models:\n"
        "  - name: qwen-vl\n    backend: openai-compatible\n    model: Qwen/Qwen3-VL-8B\n    revision: abc123\n"
        "    base_url: http://127.0.0.1:8000/v1\n    api_key_env: MY_KEY\n"
        "    capabilities: {vision: true, thinking: true}\n    decoding: {temperature: 0.6, max_tokens: 4096}\n"
        "    prompts:\n      standard: {system: '당신은 기상 전문가입니다.'}\n"
        "  - name: flash\n    backend: gemini\n    model: gemini-2.5-flash\n"
        "    decoding: {thinking_level: low}\n", encoding="utf-8")
    models = load_models_file(path)
    assert set(models) == {"qwen-vl", "flash"}
    qwen = resolve_model(f"{path}:qwen-vl")
    assert qwen.revision == "abc123" and qwen.capabilities.vision and qwen.decoding.max_tokens == 4096
    overridden = get_prompt("standard", qwen)
    assert overridden.system == "당신은 기상 전문가입니다." and overridden.version.startswith("standard-v1+")
    assert get_prompt("standard", models["flash"]).version == "standard-v1"
    assert resolve_model("flash", models_file=path).backend == "gemini"


@pytest.mark.parametrize(("text", "message"), [
    ("models: [name: x\n", "malformed YAML at line"),
    ("name: x\nbackend: nonsense\nmodel: m\n", "backend"),
    ("name: x\nbackend: gemini\n", "model: Field required"),
    ("- just a string\n", "expected a mapping"),
    ("name: x\nbackend: gemini\nmodel: m\ndecoding: {temperature: -1}\n", "decoding.temperature"),
    ("name: x\nbackend: gemini\nmodel: m\ncolour: blue\n", "colour"),
])
def test_malformed_model_yaml_is_one_clear_error(tmp_path, text, message) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ModelConfigError, match=message) as raised:
        load_models_file(path)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(("spec", "message"), [
    ("nonsense:model", "unknown backend 'nonsense'"),
    ("openai-compatible:model-without-url", "expected openai-compatible:MODEL@http"),
    ("openai-compatible:m@ftp://x", "must start with http"),
    ("some-name", "unknown model 'some-name'"),
])
def test_unknown_or_bad_spec(spec, message) -> None:
    with pytest.raises(ModelConfigError, match=message):
        resolve_model(spec)


def test_cli_errors_are_one_line_and_lose_nothing(workspace, tmp_path) -> None:
    seed_items(workspace, n_text=3, n_image=0)
    bad_yaml = tmp_path / "m.yaml"
    bad_yaml.write_text("models: [name: x\n", encoding="utf-8")
    for args, code, message in [
        (["--model", "nonsense:x"], 2, "unknown backend"),
        (["--model", str(bad_yaml)], 2, "malformed YAML"),
        (["--model", "baseline:cleverest"], 2, "unknown baseline"),
        (["--model", "openai-compatible:m@http://127.0.0.1:9/v1", "--retries", "0"], 5, "cannot reach"),
        (["--model", "baseline:longest", "--prompt", "fancy"], 2, "unknown prompt"),
        (["--model", "baseline:longest", "--variant", "sideways"], 1, "--variant 'sideways': choose one of implicit"),
    ]:
        result = run_cli("run", "-w", str(workspace.root), "--no-progress", *args)
        assert result.returncode == code, result.stderr
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0] and "Traceback" not in result.stderr


def test_cli_run_then_report(workspace, tmp_path) -> None:
    seed_items(workspace, n_text=6, n_image=2)
    with ServerThread() as server:
        first = run_cli("run", "-w", str(workspace.root), "--model", f"openai-compatible:fake@{server.url}/v1?vision=true",
                        "--json", "-c", "4")
        second = run_cli("run", "-w", str(workspace.root), "--model", "baseline:longest", "--json")
    assert first.returncode == 0, first.stderr
    runs = [json.loads(result.stdout) for result in (first, second)]
    assert runs[0]["items"] == 8 and runs[1]["items"] == 6 and runs[1]["not_sent"] == 2
    report = run_cli("report", *(r["run_id"] for r in runs), "-w", str(workspace.root), "--out", str(tmp_path / "rep"))
    assert report.returncode == 0, report.stderr
    assert "report.md" in report.stdout and (tmp_path / "rep" / "accuracy.csv").is_file()


@pytest.mark.parametrize(("spec", "module", "extra"), [("vllm:org/model", "vllm", "vllm"), ("hf:org/model", "transformers", "hf")])
def test_missing_extra_is_one_line(workspace, spec, module, extra) -> None:
    import importlib.util

    if importlib.util.find_spec(module) is not None:
        pytest.skip(f"{module} is installed here")
    seed_items(workspace, n_text=1, n_image=0)
    result = run_cli("run", "-w", str(workspace.root), "--no-progress", "--model", spec)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [f"error: {module if extra != 'hf' else 'torch'} is not installed: "
                                                  f"pip install 'benchsmith[{extra}]'"]
