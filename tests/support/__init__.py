"""What several test files share: apps started and polled, tiny models, a misbehaving server, the SPEC reference."""
