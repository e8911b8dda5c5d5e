//! Answers: the hits of one query in the kind's order, printed as the JSON lines of
//! `genie search` (and inside a server's `results`).

use genie_core::{Hit, VerifiedHit};
use std::io::{self, Write};

/// One hit of an answer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AnswerHit {
    /// The object id.
    pub id: u32,
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
                    id: v.id,
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
                    id: h.id,
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
        write!(w, "{{\"query\":{query}")?;
        if let Some(exact) = self.exact {
            write!(w, ",\"exact\":{exact}")?;
        }
        if let Some(c) = self.candidates {
            write!(w, ",\"candidates\":{c}")?;
        }
        w.write_all(b",\"hits\":[")?;
        for (i, h) in self.hits.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            write!(w, "{sep}{{\"id\":{},\"count\":{}", h.id, h.count)?;
            match h.distance {
                Some(d) if d.is_finite() => write!(w, ",\"distance\":{d}")?,
                Some(_) => w.write_all(b",\"distance\":null")?,
                None => {}
            }
            w.write_all(b"}")?;
        }
        w.write_all(b"]}\n")
    }
}

/// Writes the JSON lines of consecutive answers, the first being query `first`.
pub fn write_answers(w: &mut dyn Write, first: u64, answers: &[Answer]) -> io::Result<()> {
    for (q, a) in (first..).zip(answers) {
        a.write_json(w, q)?;
    }
    Ok(())
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
}
