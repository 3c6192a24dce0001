"""Data in and out: reading targets, predictions and dataset rows (:mod:`.readers`, :mod:`.rows`),
the one gate for question ids (:mod:`.ids`), finding the data (:mod:`.data`), and command-line
I/O with the options both command lines share (:mod:`.cli`, :mod:`.cli_options`)."""
