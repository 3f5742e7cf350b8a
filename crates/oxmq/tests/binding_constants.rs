//! Python's and Ruby's socket option constants against the core's option
//! table: same numbers for the same names, and the same value kind, so a
//! binding never disagrees with the core about what an option takes.

use oxmq::option_table::{self, Kind};
use std::path::Path;

/// Names pyzmq keeps that are not libzmq socket options: HWM sets both
/// watermarks in pyzmq itself, BLOCKY is a context option.
const PYZMQ_ONLY: &[&str] = &["HWM", "BLOCKY"];

/// Older names libzmq's zmq.h still defines for the same numbers.
const ALIASES: &[(&str, &str)] = &[
    ("IDENTITY", "ROUTING_ID"),
    ("CONNECT_RID", "CONNECT_ROUTING_ID"),
    ("DELAY_ATTACH_ON_CONNECT", "IMMEDIATE"),
    ("FAIL_UNROUTABLE", "ROUTER_MANDATORY"),
    ("ROUTER_BEHAVIOR", "ROUTER_MANDATORY"),
];

fn read(rel: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The table's name and kind for `num`, built or not.
fn table_entry(num: i32) -> Option<(&'static str, Kind)> {
    option_table::lookup(num)
        .map(|s| (s.name, s.kind))
        .or_else(|| option_table::NOT_BUILT.iter().find(|n| n.num == num).map(|n| (n.name, n.kind)))
}

fn canonical(name: &str) -> &str {
    ALIASES.iter().find(|(alias, _)| *alias == name).map_or(name, |(_, real)| real)
}

/// `(name, number, pyzmq type)` of each member of `class SocketOption`.
fn python_socket_options() -> Vec<(String, i32, String)> {
    let text = read("python/oxmq/constants.py");
    let body = text.split("class SocketOption(").nth(1).expect("constants.py has class SocketOption");
    let body = body.split("\nclass ").next().unwrap();
    let mut out = Vec::new();
    for line in body.lines() {
        let line = line.trim();
        let Some((name, value)) = line.split_once(" = ") else { continue };
        if !name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_') {
            continue;
        }
        let mut parts = value.split(',').map(str::trim);
        let num: i32 = parts.next().unwrap().parse().unwrap_or_else(|_| panic!("SocketOption.{name}: {value}"));
        let ty = parts.next().map_or("int", |t| t.trim_start_matches("_OptType.")).to_string();
        out.push((name.to_string(), num, ty));
    }
    assert!(out.len() > 50, "parsed only {} SocketOption members", out.len());
    out
}

#[test]
fn python_socket_options_match_the_table() {
    let mut failures = Vec::new();
    let py = python_socket_options();
    for (name, num, ty) in &py {
        if PYZMQ_ONLY.contains(&name.as_str()) {
            continue;
        }
        let Some((table_name, kind)) = table_entry(*num) else {
            failures.push(format!("SocketOption.{name} = {num}: not in the option table"));
            continue;
        };
        if canonical(name) != table_name {
            failures.push(format!("SocketOption.{name} = {num}: the table calls {num} {table_name}"));
        }
        let want = match kind {
            Kind::Int if *num == oxmq::opt::FD => "fd",
            Kind::Int => "int",
            Kind::Int64 => "int64",
            Kind::Bytes | Kind::Str => "bytes",
        };
        if ty != want {
            failures.push(format!("SocketOption.{name}: pyzmq type {ty}, the table says {want}"));
        }
    }
    for spec in option_table::OPTIONS {
        if !py.iter().any(|(name, num, _)| name == spec.name && *num == spec.num) {
            failures.push(format!("the table's {} ({}) is missing from SocketOption", spec.name, spec.num));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn ruby_socket_options_match_the_table() {
    let text = read("ruby/lib/oxmq/constants.rb");
    let body = text.split("SOCKET_OPTIONS = {").nth(1).expect("constants.rb has SOCKET_OPTIONS");
    let body = body.split('}').next().unwrap();
    let mut failures = Vec::new();
    let mut seen = 0;
    for entry in body.split("],") {
        let Some((name, rest)) = entry.split_once(": [") else { continue };
        let (num, kind) = rest.trim_end_matches(']').trim().split_once(", :").expect("[number, :kind]");
        let name = name.trim().to_ascii_uppercase();
        let num: i32 = num.trim().parse().unwrap();
        seen += 1;
        let Some((table_name, table_kind)) = table_entry(num) else {
            failures.push(format!("{name} = {num}: not in the option table"));
            continue;
        };
        if canonical(&name) != table_name {
            failures.push(format!("{name} = {num}: the table calls {num} {table_name}"));
        }
        let ruby_bytes = kind.trim().starts_with("bytes");
        if ruby_bytes != matches!(table_kind, Kind::Bytes | Kind::Str) {
            failures.push(format!("{name}: Ruby kind :{kind}, the table says {table_kind:?}"));
        }
    }
    assert!(seen > 30, "parsed only {seen} SOCKET_OPTIONS entries");
    // The constants Ruby names outside the hash.
    for line in text.lines().map(str::trim) {
        let Some((name, value)) = line.split_once(" = ") else { continue };
        let Ok(num) = value.parse::<i32>() else { continue };
        if let Some(spec) = option_table::OPTIONS.iter().find(|s| s.name == name) {
            if spec.num != num {
                failures.push(format!("ZMQ::{name} = {num}, the table says {}", spec.num));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
