"""Code that runs *inside* the sandbox: the fork server, the Python test harness (with the
two-process whole test of ``check_process``) and their wire.

Standard library only, importable both as this package (by the trusted parent, for the shared wire
format) and as loose scripts from a read-only mount inside the sandbox.
"""
