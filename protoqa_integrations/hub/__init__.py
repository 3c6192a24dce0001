"""The Hugging Face Hub: the folders of the ``evaluate`` modules and their pages (:mod:`.folders`), and the
request body limit, caps and scoring budget of every page (:mod:`.serving`)."""
