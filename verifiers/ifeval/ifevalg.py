"""IFEvalG (verifiable_instructions) rules: none registered yet; those ids are errors naming them."""
