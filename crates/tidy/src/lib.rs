//! # weiqi-tidy
//!
//! Tests only (`tests/tidy.rs`), in the spirit of rust-analyzer's tidy tests: what
//! ARCHITECTURE.md states as data (the crate dependency graph, the files allowed to name
//! protobuf or tonic) is checked against the code on every `cargo test`, so the written
//! map cannot drift from the code without a test failing.
