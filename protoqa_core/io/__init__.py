"""Data in and out: reading targets, predictions and dataset rows (:mod:`.readers`, :mod:`.rows`),
the one gate for question ids (:mod:`.ids`) and finding the data (:mod:`.data`). The command
lines' own code is beside this folder (:mod:`protoqa_core.cli`, :mod:`protoqa_core.cli_options`)."""
