"""`assay report`: what the builds did, read from the warehouse (`gather`) and drawn as one
self-contained HTML page (`html`)."""
