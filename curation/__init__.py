"""Items, the revisioned store, the workspace, importers, extraction and curation steps.

Rooms, lowest first: `core/` (the item model, store and workspace), `execution/` (where work runs:
this process, a process pool, Ray, a background thread), `steps/` (dedup, transforms, tagging),
`extract/` and the importers, then the commands (`cli`). Each imports only the rooms below it.

`curation` never imports the other benchsmith packages.
"""
