"""Loading spec documents: YAML with positions, strict grammar models, SQL check files."""
