"""What comes in: documents (corpus.py) and their chunks (chunks.py), files in the shapes other tools write
(formats.py), golden sets and their labels (golden.py), TREC files (trec.py), the embedding model's files (models.py),
and text as people save it (text.py). Imports only the core."""
