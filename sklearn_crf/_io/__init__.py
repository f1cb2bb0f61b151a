"""Files: everything the package reads or writes; all of it untrusted on reading.

* :mod:`.conll` — CoNLL files (read, iterate, write);
* :mod:`.crfsuite` — CRFsuite model files (load and save);
* :mod:`.persistence` — this project's model files (a tagger or a whole Pipeline);
* :mod:`.corpus_store` — an encoded corpus on disk (memory-mapped .npy);
* :mod:`.safe_io` — bounded reading of untrusted files;
* :mod:`.atomic` — every writer's temporary file, renamed over the target after the last byte.
"""
