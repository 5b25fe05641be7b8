//! ARCHITECTURE.md's data against the code: its `tidy:crates` block must be the workspace's
//! dependency graph between weiqi crates (normal dependencies, both directions), and its
//! `tidy:protobuf` block the files that name `tonic`, `prost` or `weiqi_proto` (no file
//! outside it names them, and every file in it does).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The lines of ARCHITECTURE.md's fenced block opened by "```text tidy:<name>".
fn block(name: &str) -> Vec<String> {
    let text = fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let open = format!("```text tidy:{name}");
    let mut lines = text.lines().skip_while(|l| l.trim() != open);
    assert!(lines.next().is_some(), "ARCHITECTURE.md has no block {open:?}");
    lines
        .take_while(|l| l.trim() != "```")
        .map(|l| l.split('#').next().unwrap_or("").trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// The workspace's members, from the root Cargo.toml.
fn members() -> Vec<String> {
    let text = fs::read_to_string(root().join("Cargo.toml")).expect("Cargo.toml");
    let line = text.lines().find(|l| l.starts_with("members")).expect("a members line");
    line.split('"').skip(1).step_by(2).map(str::to_string).collect()
}

/// A manifest's package name and the weiqi crates among its normal dependencies
/// (`[dependencies]` and target-specific `dependencies` tables; not dev or build).
fn manifest(dir: &str) -> (String, BTreeSet<String>) {
    let text = fs::read_to_string(root().join(dir).join("Cargo.toml")).expect("member's Cargo.toml");
    let mut name = String::new();
    let mut section = String::new();
    let mut deps = BTreeSet::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line.to_string();
            continue;
        }
        let key = line.split(['=', ' ', '.']).next().unwrap_or("");
        if section == "[package]" && key == "name" {
            name = line.split('"').nth(1).unwrap_or("").to_string();
        }
        let normal =
            section == "[dependencies]" || (section.starts_with("[target.") && section.ends_with(".dependencies]"));
        if normal && key.starts_with("weiqi-") {
            deps.insert(key.to_string());
        }
    }
    (name, deps)
}

#[test]
fn the_crate_graph_is_the_one_architecture_md_draws() {
    let mut code: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for dir in members() {
        let (name, deps) = manifest(&dir);
        code.insert(name, deps);
    }
    let mut written: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in block("crates") {
        let (from, to) = line.split_once("->").unwrap_or((line.as_str(), ""));
        written.insert(
            from.trim().to_string(),
            to.split_whitespace().map(str::to_string).collect(),
        );
    }
    let mut wrong = Vec::new();
    for (name, deps) in &code {
        match written.get(name) {
            None => wrong.push(format!("{name} is a workspace crate ARCHITECTURE.md does not list")),
            Some(w) => {
                for d in deps.difference(w) {
                    wrong.push(format!("{name} -> {d} is in Cargo.toml, not in ARCHITECTURE.md"));
                }
                for d in w.difference(deps) {
                    wrong.push(format!("{name} -> {d} is in ARCHITECTURE.md, not in Cargo.toml"));
                }
            }
        }
    }
    for name in written.keys().filter(|n| !code.contains_key(*n)) {
        wrong.push(format!("ARCHITECTURE.md lists {name}, which is not a workspace crate"));
    }
    assert!(wrong.is_empty(), "the crate graph drifted:\n{}", wrong.join("\n"));
}

/// Whether `text` names protobuf or tonic as code does (a path or an import), not in a
/// comment.
fn names_protobuf(text: &str) -> bool {
    const NAMES: [&str; 4] = ["tonic", "prost", "weiqi_proto", "tonic_"];
    text.lines().map(|l| l.split("//").next().unwrap_or("")).any(|code| {
        code.split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|word| NAMES.contains(&word) || word.starts_with("tonic_") || word.starts_with("prost_"))
    })
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if p.is_dir() {
            if name != "target" && name != "node_modules" && !name.starts_with('.') {
                rust_files(&p, out);
            }
        } else if name.ends_with(".rs") {
            out.push(p);
        }
    }
}

#[test]
fn only_the_listed_edge_files_know_protobuf() {
    let allowed = block("protobuf");
    let covers = |rel: &str| {
        allowed.iter().any(|a| {
            if a.ends_with('/') {
                rel.starts_with(a.as_str())
            } else {
                rel == a
            }
        })
    };
    let root = root();
    let mut files = Vec::new();
    // (This crate names them in its checks' words.)
    for dir in members().into_iter().filter(|d| d != "crates/tidy") {
        rust_files(&root.join(&dir), &mut files);
    }
    let mut wrong = Vec::new();
    let mut naming = BTreeSet::new();
    for f in &files {
        let rel = f
            .strip_prefix(&root)
            .expect("under the root")
            .to_string_lossy()
            .replace('\\', "/");
        let text = fs::read_to_string(f).expect("a source file");
        if names_protobuf(&text) {
            if !covers(&rel) {
                wrong.push(format!(
                    "{rel} names protobuf or tonic but is not in ARCHITECTURE.md's list"
                ));
            }
            naming.insert(rel);
        }
    }
    for a in allowed.iter().filter(|a| !a.ends_with('/')) {
        if !naming.contains(a) {
            wrong.push(format!(
                "{a} is in ARCHITECTURE.md's list but names no protobuf (take it out)"
            ));
        }
    }
    assert!(wrong.is_empty(), "the protobuf edge drifted:\n{}", wrong.join("\n"));
}

#[test]
fn the_protobuf_check_sees_code_and_not_comments() {
    assert!(names_protobuf("use tonic::Status;"));
    assert!(names_protobuf("fn f() -> weiqi_proto::v1::Game {}"));
    assert!(names_protobuf("let x = prost_types::Timestamp::default();"));
    assert!(!names_protobuf("// the tonic edge converts"));
    assert!(!names_protobuf("let tonicity = 1; // prost"));
}
