"""One module a case, each with run(b): b is the harness (bench.harness.Bench)."""
