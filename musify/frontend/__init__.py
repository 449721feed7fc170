"""Front ends: the context-aware scanner, tree-sitter structure, and launch detection."""
