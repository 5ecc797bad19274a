"""Release build speed: 50,000 generated items, 10% with an image (target <= 60 s), size on disk.

Baseline, run side by side on the same rows: `datasets.Dataset.from_list(rows, features)
.to_parquet()` for the full config alone (no card, checksums, harness exports or other configs).

    python benchmarks/release_bench.py [--items 50000] [--runs 3]
"""

from __future__ import annotations

import argparse
import io
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from PIL import Image

from curation.core.item import parse_item
from curation.core.workspace import init_workspace
from export.build import build_release
from export.features import hf_features
from export.release_config import ReleaseConfig
from export.rows import item_row


def _png(rng: random.Random) -> bytes:
    buffer = io.BytesIO()
    image = Image.new("RGB", (320, 200), (rng.randrange(256), rng.randrange(256), rng.randrange(256)))
    for _ in range(40):  # some structure so the PNG is not trivially small
        x, y = rng.randrange(300), rng.randrange(180)
        image.paste((rng.randrange(256), 0, 0), (x, y, x + 20, y + 20))
    image.save(buffer, "PNG")
    return buffer.getvalue()


def make_workspace(n: int, seed: int = 5):
    rng = random.Random(seed)
    workspace = init_workspace(Path(tempfile.mkdtemp()) / "ws")
    items = []
    for i in range(n):
        record = {"id": f"r{i:06d}", "source": {"exam": "기상기사", "session": f"20{i % 20:02d}-1", "number": i % 100 + 1,
                                                  "subject": ["기상학개론", "대기역학", "기후학"][i % 3]},
                  "stem": f"문항 {i}: 대기 중 {rng.randint(1, 999)} hPa 부근의 현상으로 옳은 것은?",
                  "options": [{"text": f"보기 {k} {rng.random():.5f}"} for k in range(1, 5)],
                  "answer": rng.randint(1, 4), "status": "accepted",
                  "flags": {"korea_specific": rng.random() < 0.04}}
        if i % 10 == 0:
            record["images"] = [{"blob": workspace.blobs.put(_png(rng), "png"), "kind": "raster"}]
        items.append(parse_item(record))
    workspace.store.save_items(items, author="bench", stage="import")
    return workspace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    workspace = make_workspace(args.items)
    config = ReleaseConfig(name="bench", configs=["full", "korea_specific", "multimodal"])
    ours, base, sizes = [], [], []
    for run in range(args.runs):
        out = Path(tempfile.mkdtemp()) / f"v{run}"
        started = time.perf_counter()
        result = build_release(workspace, "1.0.0", config, out)
        ours.append(time.perf_counter() - started)
        sizes.append(sum(p.stat().st_size for p in result.path.rglob("*") if p.is_file()))
        shutil.rmtree(out)

        import datasets

        started = time.perf_counter()
        rows = [item_row(stored.item, workspace.blobs) for stored in workspace.store.iter_items()]
        target = Path(tempfile.mkdtemp()) / "baseline.parquet"
        datasets.Dataset.from_list(rows, features=hf_features()).to_parquet(str(target))
        base.append(time.perf_counter() - started)
        target.unlink()
    median, baseline = statistics.median(ours), statistics.median(base)
    print(f"release build, {args.items} items (10% with images), configs {result.counts}: median {median:.1f} s "
          f"(target <= 60 s), {statistics.median(sizes) / 2**20:.1f} MiB on disk; baseline datasets.from_list"
          f"+to_parquet (full config only) {baseline:.1f} s; ratio {median / baseline:.2f}x")


if __name__ == "__main__":
    main()
