"""The item core: the item schema and its typed parts (`item`), content identity, facets, the
revisioned store with its migrations, the workspace (store, blobs, credentials), item queries and
compare-and-swap revisions. It imports nothing else of curation: extraction, importers, curation
steps and executors build on it (the import-linter contract "curation in rooms" holds it so)."""
