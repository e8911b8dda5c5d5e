//! Answers: the hits of one query in the kind's order, printed as the JSON lines of
//! `genie search` (and inside a server's `results`).

use genie_core::{Hit, VerifiedHit};
use std::io::{self, Write};

/// One hit of an answer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AnswerHit {
    /// The object id (the user's id in a live index).
    pub id: u64,
    /// Its match count.
    pub count: u32,
    /// The verified measure, for kinds that verify (edit distance, vector distance).
    pub distance: Option<f64>,
}

/// The result of one query.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Answer {
    /// The hits in the kind's order (count descending then id, or distance first).
    pub hits: Vec<AnswerHit>,
    /// Sequences: whether the hits are proven the exact top-k.
    pub exact: Option<bool>,
    /// Sequences: candidates K of the last round.
    pub candidates: Option<u32>,
}

impl Answer {
    /// The answer of re-ranked hits (with their distances), cut to a minimum count when asked.
    pub fn verified(hits: &[VerifiedHit], min_count: Option<u32>) -> Self {
        let mut a = Self {
            hits: hits
                .iter()
                .map(|v| AnswerHit {
                    id: u64::from(v.id),
                    count: v.count,
                    distance: Some(v.distance),
                })
                .collect(),
            ..Self::default()
        };
        a.keep_min_count(min_count);
        a
    }

    /// An answer of plain count hits.
    pub fn of_hits(hits: &[Hit]) -> Self {
        Self {
            hits: hits
                .iter()
                .map(|h| AnswerHit {
                    id: u64::from(h.id),
                    count: h.count,
                    distance: None,
                })
                .collect(),
            ..Self::default()
        }
    }

    /// Keeps the hits of count `>= min_count`.
    pub fn keep_min_count(&mut self, min_count: Option<u32>) {
        if let Some(t) = min_count {
            self.hits.retain(|h| h.count >= t);
        }
    }

    /// Writes the JSON line of query `query`: `{"query":0,"hits":[{"id":12,"count":3}]}`, with
    /// `"exact"` and `"candidates"` before the hits and `"distance"` in each hit where the kind
    /// has them (a distance that is not finite is `null`).
    pub fn write_json(&self, w: &mut dyn Write, query: u64) -> io::Result<()> {
        let mut line = Vec::with_capacity(32 + 28 * self.hits.len());
        self.push_json(&mut line, query);
        w.write_all(&line)
    }

    /// Appends the JSON line of [`Answer::write_json`] to `out` (integers through `itoa`: a
    /// tenth of the time of `write!`'s formatting, which bounded the output of large searches).
    pub fn push_json(&self, out: &mut Vec<u8>, query: u64) {
        let mut n = itoa::Buffer::new();
        out.extend_from_slice(b"{\"query\":");
        out.extend_from_slice(n.format(query).as_bytes());
        if let Some(exact) = self.exact {
            out.extend_from_slice(if exact {
                b",\"exact\":true"
            } else {
                b",\"exact\":false"
            });
        }
        if let Some(c) = self.candidates {
            out.extend_from_slice(b",\"candidates\":");
            out.extend_from_slice(n.format(c).as_bytes());
        }
        out.extend_from_slice(b",\"hits\":[");
        for (i, h) in self.hits.iter().enumerate() {
            out.extend_from_slice(if i == 0 { b"{\"id\":" } else { b",{\"id\":" });
            out.extend_from_slice(n.format(h.id).as_bytes());
            out.extend_from_slice(b",\"count\":");
            out.extend_from_slice(n.format(h.count).as_bytes());
            match h.distance {
                // a Vec takes every byte: the write cannot fail
                Some(d) if d.is_finite() => drop(write!(out, ",\"distance\":{d}")),
                Some(_) => out.extend_from_slice(b",\"distance\":null"),
                None => {}
            }
            out.push(b'}');
        }
        out.extend_from_slice(b"]}\n");
    }
}

/// Answers formatted by one task of [`write_answers`].
const FORMAT_BLOCK: usize = 256;

/// Writes the JSON lines of consecutive answers, the first being query `first`; many answers are
/// formatted in blocks on all cores, then written in order.
pub fn write_answers(w: &mut dyn Write, first: u64, answers: &[Answer]) -> io::Result<()> {
    use rayon::prelude::*;
    let block = |b: usize, part: &[Answer]| {
        let hits = part.first().map_or(0, |a| a.hits.len());
        let mut buf = Vec::with_capacity(part.len() * (32 + 28 * hits));
        for (i, a) in part.iter().enumerate() {
            a.push_json(&mut buf, first + (b * FORMAT_BLOCK + i) as u64);
        }
        buf
    };
    if answers.len() <= FORMAT_BLOCK {
        return w.write_all(&block(0, answers));
    }
    let blocks: Vec<Vec<u8>> = answers
        .par_chunks(FORMAT_BLOCK)
        .enumerate()
        .map(|(b, part)| block(b, part))
        .collect();
    blocks.iter().try_for_each(|b| w.write_all(b))
}

/// Sorts hits in the order of kinds that verify: distance ascending, then count descending,
/// then id ascending (a hit without a distance last).
pub fn sort_by_distance(hits: &mut [AnswerHit]) {
    let key = |h: &AnswerHit| h.distance.unwrap_or(f64::INFINITY);
    hits.sort_by(|a, b| {
        key(a)
            .total_cmp(&key(b))
            .then(b.count.cmp(&a.count))
            .then(a.id.cmp(&b.id))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_print_as_json_lines() {
        let mut out = Vec::new();
        let a = Answer {
            hits: vec![
                AnswerHit {
                    id: 3,
                    count: 7,
                    distance: Some(1.5),
                },
                AnswerHit {
                    id: 0,
                    count: 2,
                    distance: Some(f64::INFINITY),
                },
            ],
            ..Answer::default()
        };
        a.write_json(&mut out, 4).expect("to a Vec");
        let seq = Answer {
            hits: vec![AnswerHit {
                id: 7,
                count: 9,
                distance: Some(1.0),
            }],
            exact: Some(true),
            candidates: Some(32),
        };
        seq.write_json(&mut out, 5).expect("to a Vec");
        Answer::of_hits(&[Hit { id: 12, count: 3 }])
            .write_json(&mut out, 6)
            .expect("to a Vec");
        assert_eq!(
            String::from_utf8(out).expect("ASCII"),
            "{\"query\":4,\"hits\":[{\"id\":3,\"count\":7,\"distance\":1.5},{\"id\":0,\"count\":2,\"distance\":null}]}\n\
             {\"query\":5,\"exact\":true,\"candidates\":32,\"hits\":[{\"id\":7,\"count\":9,\"distance\":1}]}\n\
             {\"query\":6,\"hits\":[{\"id\":12,\"count\":3}]}\n"
        );
    }

    #[test]
    fn answers_written_in_blocks_are_the_lines_one_by_one() {
        let answers: Vec<Answer> = (0..FORMAT_BLOCK as u32 * 3 + 5)
            .map(|q| Answer {
                hits: (0..q % 4)
                    .map(|i| AnswerHit {
                        id: u64::from(q * 10 + i) << 20,
                        count: u32::MAX - i,
                        distance: (q % 3 == 0).then_some(f64::from(i) / 3.0),
                    })
                    .collect(),
                exact: (q % 5 == 0).then_some(q % 2 == 0),
                candidates: (q % 7 == 0).then_some(q),
            })
            .collect();
        let mut blocks = Vec::new();
        write_answers(&mut blocks, 40, &answers).expect("to a Vec");
        let mut one_by_one = String::new();
        for (q, a) in (40u64..).zip(&answers) {
            let mut line = Vec::new();
            a.write_json(&mut line, q).expect("to a Vec");
            let line = String::from_utf8(line).expect("ASCII");
            let parsed: serde_json::Value = serde_json::from_str(&line).expect("a JSON line");
            assert_eq!(parsed["query"], q);
            assert_eq!(parsed["hits"].as_array().map(Vec::len), Some(a.hits.len()));
            one_by_one.push_str(&line);
        }
        assert_eq!(String::from_utf8(blocks).expect("ASCII"), one_by_one);
    }
}
