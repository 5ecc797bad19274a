"""Items, the revisioned store, the workspace, importers, extraction and curation steps.

`curation` never imports the other benchsmith packages.
"""
