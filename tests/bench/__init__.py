"""Evidence under load: the benchmark against the framework floor, and the soak."""
