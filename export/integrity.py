"""Integrity files of a release: sha256 per file, a content hash over canonical rows, Croissant."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from curation.errors import BenchsmithError

CROISSANT_CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}

# datasets dtype → Croissant dataType
_DATA_TYPES = {"image": "sc:ImageObject", "string": "sc:Text", "int32": "sc:Integer", "int64": "sc:Integer", "bool": "sc:Boolean",
               "float32": "sc:Float", "float64": "sc:Float"}


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_checksums(root: Path, exclude: tuple[str, ...] = ("checksums.json",)) -> dict[str, str]:
    sums = {path.relative_to(root).as_posix(): sha256_file(path)
            for path in sorted(root.rglob("*")) if path.is_file() and path.name not in exclude}
    (root / "checksums.json").write_text(json.dumps(sums, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return sums


def verify_checksums(root: Path) -> list[str]:
    """Files whose bytes no longer match checksums.json (empty list = intact)."""
    sums = json.loads((root / "checksums.json").read_text(encoding="utf-8"))
    return [name for name, digest in sums.items()
            if not (root / name).is_file() or sha256_file(root / name) != digest]


def content_hash(row_hashes: dict[str, str]) -> str:
    """One hash over the canonical rows (sorted by id): independent of parquet encoding."""
    digest = hashlib.sha256()
    for item_id in sorted(row_hashes):
        digest.update(f"{item_id}\t{row_hashes[item_id]}\n".encode())
    return digest.hexdigest()


def _croissant_field(record_set: str, file_set: str, name: str, feature: dict[str, Any]) -> dict[str, Any]:
    field: dict[str, Any] = {"@type": "cr:Field", "@id": f"{record_set}/{name}", "name": name}
    if feature.get("dtype") == "image":
        field["dataType"] = "sc:ImageObject"
    elif "list" in feature:
        field["repeated"] = True
        inner = feature["list"]
        if isinstance(inner, str):
            field["dataType"] = _DATA_TYPES.get(inner, "sc:Text")
        elif isinstance(inner, list):
            field["subField"] = [_croissant_field(f"{record_set}/{name}", file_set, sub["name"], sub) for sub in inner]
        else:
            field["dataType"] = "sc:ImageObject" if inner.get("dtype") == "image" else _DATA_TYPES.get(inner.get("dtype"), "sc:Text")
    else:
        field["dataType"] = _DATA_TYPES.get(feature.get("dtype", ""), "sc:Text")
    field["source"] = {"fileSet": {"@id": file_set}, "extract": {"column": name}}
    return field


def croissant(name: str, description: str, license_id: str, version: str, url: str,
              configs: dict[str, list[str]], feature_yaml: list[dict[str, Any]],
              checksums: dict[str, str], *, cite_as: str, date_published: str | None) -> dict[str, Any]:
    distribution: list[dict[str, Any]] = []
    record_sets = []
    for config, files in configs.items():
        file_set = f"parquet-{config}"
        for path in files:
            distribution.append({"@type": "cr:FileObject", "@id": path, "name": path, "contentUrl": path,
                                 "encodingFormat": "application/x-parquet", "sha256": checksums[path]})
        distribution.append({"@type": "cr:FileSet", "@id": file_set, "name": file_set,
                             "containedIn": [{"@id": path} for path in files],
                             "encodingFormat": "application/x-parquet", "includes": f"data/{config}/*.parquet"})
        record_sets.append({"@type": "cr:RecordSet", "@id": config, "name": config,
                            "field": [_croissant_field(config, file_set, feature["name"], feature)
                                      for feature in feature_yaml if "list" not in feature or isinstance(feature["list"], str)]})
    return {
        "@context": CROISSANT_CONTEXT,
        "@type": "sc:Dataset",
        "name": name,
        "description": description,
        "conformsTo": "http://mlcommons.org/croissant/1.0",
        "license": license_id,
        "url": url,
        "version": version,
        "citeAs": cite_as,
        **({"datePublished": date_published} if date_published else {}),
        "distribution": distribution,
        "recordSet": record_sets,
    }


def validate_croissant(path: Path) -> list[str]:
    """Problems mlcroissant reports (raises when mlcroissant is not installed)."""
    try:
        import mlcroissant as mlc
    except ImportError:
        raise BenchsmithError("mlcroissant is not installed: pip install 'benchsmith[croissant]'") from None
    try:
        mlc.Dataset(jsonld=str(path))
    except mlc.ValidationError as error:
        return [line for line in str(error).splitlines() if line.strip()]
    return []
