"""WordNet 3.0 access: finding the database (:mod:`.files`), reading it (:mod:`.reader`), the
per-installation cache (:mod:`.cache`, with the file of Wu-Palmer walks :mod:`.walk_table`),
NLTK's reader for those who want it (:mod:`.nltk_reader`), the synsets of a phrase
(:mod:`.lookup`) and Wu-Palmer similarity (:mod:`.wu_palmer`)."""
