"""Croissant metadata (mlcroissant 1.x) that loads into records for every config.

Each config is a FileSet of its parquet shards found by `includes` relative to the release
folder (no `containedIn`: the files are not inside another file), and a RecordSet whose
fields follow the `datasets` features: images are `sc:ImageObject` read from the `bytes` of
the stored image, lists are `repeated`, and `options` is a repeated record of text and image.
"""

from __future__ import annotations

from typing import Any

CROISSANT_CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "samplingRate": "cr:samplingRate",
    "equivalentProperty": "cr:equivalentProperty",
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
_DATA_TYPES = {"string": "sc:Text", "int32": "sc:Integer", "int64": "sc:Integer", "bool": "sc:Boolean",
               "float32": "sc:Float", "float64": "sc:Float"}


def _data_type(feature: dict[str, Any]) -> str:
    return "sc:ImageObject" if feature.get("_type") == "Image" else _DATA_TYPES.get(feature.get("dtype", ""), "sc:Text")


def _source(file_set: str, column: str, json_path: str | None) -> dict[str, Any]:
    source: dict[str, Any] = {"fileSet": {"@id": file_set}, "extract": {"column": column}}
    if json_path:
        source["transform"] = {"jsonPath": json_path}
    return source


def _leaf(field_id: str, name: str, feature: dict[str, Any], source: dict[str, Any], repeated: bool) -> dict[str, Any]:
    field = {"@type": "cr:Field", "@id": field_id, "name": name, "dataType": _data_type(feature), "source": source}
    return field | ({"repeated": True} if repeated else {})


def croissant_field(record_set: str, file_set: str, name: str, feature: dict[str, Any]) -> dict[str, Any]:
    """One field from `Features.to_dict()` (`List` spelling, as `datasets` 4+ writes it)."""
    field_id = f"{record_set}/{name}"
    image_path = "bytes"
    if feature.get("_type") != "List":
        path = image_path if feature.get("_type") == "Image" else None
        return _leaf(field_id, name, feature, _source(file_set, name, path), repeated=False)
    inner = feature["feature"]
    if "_type" in inner:  # a list of one type
        path = image_path if inner["_type"] == "Image" else None
        return _leaf(field_id, name, inner, _source(file_set, name, path), repeated=True)
    sub_fields = []
    for sub_name, sub in inner.items():  # a list of records: each sub-field is read from every element
        path = f"{sub_name}.{image_path}" if sub.get("_type") == "Image" else sub_name
        sub_fields.append(_leaf(f"{field_id}/{sub_name}", sub_name, sub, _source(file_set, name, path), repeated=True))
    return {"@type": "cr:Field", "@id": field_id, "name": name, "repeated": True, "subField": sub_fields}


def croissant(name: str, description: str, license_id: str, version: str, url: str,
              configs: dict[str, list[str]], features: dict[str, Any], checksums: dict[str, str], *,
              cite_as: str, date_published: str | None) -> dict[str, Any]:
    distribution: list[dict[str, Any]] = []
    record_sets = []
    for config, files in configs.items():
        file_set = f"parquet-{config}"
        distribution += [{"@type": "cr:FileObject", "@id": path, "name": path, "contentUrl": path,
                          "encodingFormat": "application/x-parquet", "sha256": checksums[path]} for path in files]
        distribution.append({"@type": "cr:FileSet", "@id": file_set, "name": file_set,
                             "encodingFormat": "application/x-parquet", "includes": f"data/{config}/*.parquet"})
        record_sets.append({"@type": "cr:RecordSet", "@id": config, "name": config, "key": {"@id": f"{config}/id"},
                            "field": [croissant_field(config, file_set, feature_name, feature)
                                      for feature_name, feature in features.items()]})
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
