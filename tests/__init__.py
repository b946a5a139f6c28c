"""xrelay's tests, laid out like the source tree (plus `e2e/` for the model suites and
`filecheck/` for lit). Test modules import their helpers relatively (`from .jit_check import
check_jit`): pytest imports them as a package, with no `sys.path` entries."""
