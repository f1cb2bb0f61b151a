"""Training: the table of solvers (:mod:`.solvers`), what each reads and how it runs."""
