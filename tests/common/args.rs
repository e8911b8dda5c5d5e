//! The argument lists of the common `genie` runs of the CLI tests, to give to `Dir::ok`,
//! `Dir::fails` or a `Command`.

#![allow(dead_code)] // each test file uses its part

/// `build --kind KIND FLAGS... --input INPUT --output OUTPUT`.
pub fn build<'a>(
    kind: &'a str,
    flags: &[&'a str],
    input: &'a str,
    output: &'a str,
) -> Vec<&'a str> {
    let head = ["build", "--kind", kind];
    [&head[..], flags, &["--input", input, "--output", output]].concat()
}

/// `search --index INDEX --queries QUERIES --k K EXTRA...` (the device left to `genie`).
pub fn search<'a>(index: &'a str, queries: &'a str, k: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    [
        &["search", "--index", index, "--queries", queries, "--k", k][..],
        extra,
    ]
    .concat()
}

/// `search --device cpu --index INDEX --queries QUERIES --k K EXTRA...`.
pub fn search_cpu<'a>(
    index: &'a str,
    queries: &'a str,
    k: &'a str,
    extra: &[&'a str],
) -> Vec<&'a str> {
    [
        &["search", "--device", "cpu"][..],
        &search(index, queries, k, extra)[1..],
    ]
    .concat()
}

/// `search --server URL --index NAME --queries QUERIES --k K EXTRA...`.
pub fn search_server<'a>(
    url: &'a str,
    name: &'a str,
    queries: &'a str,
    k: &'a str,
    extra: &[&'a str],
) -> Vec<&'a str> {
    [
        &["search", "--server", url][..],
        &search(name, queries, k, extra)[1..],
    ]
    .concat()
}
