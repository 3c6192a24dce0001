"""WordNet 3.0 access: finding the database (:mod:`.files`), reading it (:mod:`.reader`), the
per-installation cache (:mod:`.cache`), NLTK's reader for those who want it (:mod:`.nltk_reader`),
the synsets of a phrase (:mod:`.lookup`), and Wu-Palmer similarity (:mod:`.wu_palmer`) from
per-synset tables (:mod:`.synset_tables`), a search over two groups of synsets
(:mod:`.sense_search`) and the file of every synset's walk (:mod:`.walk_file`, read through
:mod:`.walk_table`)."""
