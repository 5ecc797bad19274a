"""Item analysis over a solve matrix: a 2PL IRT fit (`twopl`), per-item and per-model figures
(`analysis`), suspect items (`consensus`, `suspects`) and small subsets that predict full-set
accuracy (`subset`). The responses come from a workspace's solve matrix or a wide 0/1 file
(`responses`); the core is numpy/scipy arrays, the records are `filtering.irt.records.ItemAnalysis` & co.
"""
