"""`make bench`: the service under load with production settings (see benchmarks/run.sh)."""
