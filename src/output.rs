//! Search results as JSON lines: one object per query, in input order,
//! `{"query":0,"hits":[{"id":12,"count":3},...]}`, hits in the order the engine returns them.

use genie_core::Hit;
use std::io::{self, Write};

/// Writes the JSON line of query `query` (its 0-based line number) with its hits.
pub fn write_hits(w: &mut dyn Write, query: u64, hits: &[Hit]) -> io::Result<()> {
    write!(w, "{{\"query\":{query},\"hits\":[")?;
    for (i, hit) in hits.iter().enumerate() {
        let sep = if i == 0 { "" } else { "," };
        write!(w, "{sep}{{\"id\":{},\"count\":{}}}", hit.id, hit.count)?;
    }
    w.write_all(b"]}\n")
}

/// Writes the JSON lines of consecutive queries, the first being query `first`.
pub fn write_results(w: &mut dyn Write, first: u64, results: &[Vec<Hit>]) -> io::Result<()> {
    for (q, hits) in (first..).zip(results) {
        write_hits(w, q, hits)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(query: u64, hits: &[Hit]) -> String {
        let mut out = Vec::new();
        write_hits(&mut out, query, hits).expect("write to a Vec");
        String::from_utf8(out).expect("ASCII")
    }

    #[test]
    fn format() {
        assert_eq!(line(0, &[]), "{\"query\":0,\"hits\":[]}\n");
        let hits = [Hit { id: 12, count: 3 }, Hit { id: 4, count: 1 }];
        assert_eq!(
            line(7, &hits),
            "{\"query\":7,\"hits\":[{\"id\":12,\"count\":3},{\"id\":4,\"count\":1}]}\n"
        );
        let big = [Hit {
            id: u32::MAX,
            count: u32::MAX,
        }];
        let text = line(u64::MAX, &big);
        let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
        assert_eq!(v["query"], u64::MAX);
        assert_eq!(v["hits"][0]["id"], u32::MAX);
        assert_eq!(v["hits"][0]["count"], u32::MAX);
    }

    #[test]
    fn consecutive() {
        let mut out = Vec::new();
        let results = vec![vec![Hit { id: 1, count: 2 }], vec![]];
        write_results(&mut out, 5, &results).expect("write to a Vec");
        assert_eq!(
            String::from_utf8(out).expect("ASCII"),
            "{\"query\":5,\"hits\":[{\"id\":1,\"count\":2}]}\n{\"query\":6,\"hits\":[]}\n"
        );
    }
}
