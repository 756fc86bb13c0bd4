//! End-to-end tests of the `tune` binary live in `tests/`.
