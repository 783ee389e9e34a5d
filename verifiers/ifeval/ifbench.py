"""IFBench rules: none registered yet; those ids are errors naming them."""
