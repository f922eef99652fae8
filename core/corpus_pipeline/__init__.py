"""The corpus-building pipeline, written once as stages and run by more than one engine.

Stages (``stages.py``): sources (papers from the phrase datasets, PDFs) -> parse (PDFs, in worker
processes: ``parse.py``) -> sentences (filter, each wording once, in paper order) -> shards (the
kept papers cut into labelling batches, each with a content key) -> labels and vectors (one model
call per shard) -> pack shards on disk (``shards.py``) -> merge into one pack
(:mod:`core.library.pack`'s format, unchanged).

Engines: ``local.py`` runs the labelling in this process (the default, no Ray);
``models.corpus_ray`` runs PDF parsing as Ray tasks and the labelling on a pool of Ray actors that
each load the model once. Both go through :func:`driver.run_pipeline`, so they cut the same shards
and give byte-identical packs. A shard already on disk with the same key is kept and skipped on a
re-run (resumable). ``library add`` parses many PDFs with :func:`parse.parse_pdfs` (a bounded
process pool).

No Ray, no model here: the model comes in from the caller (``core`` never imports ``models``).
"""
