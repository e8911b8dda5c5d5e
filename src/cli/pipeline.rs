//! The stages of `genie search` overlapped: while the service searches one chunk of queries, the
//! calling thread reads and parses the next ([`read_chunk`]) and an output thread writes the
//! answers of the one before, in query order, to the [`Output`] (standard output, or a file put
//! in place only when the search is done).
//!
//! At most [`IN_FLIGHT`] submitted chunks wait for the output (one being written, one in the
//! channel, one the reader holds until the channel has room), besides the chunk being read, so
//! memory stays bounded by `--batch-queries`. An error of either side stops both: a failed
//! output closes the channel, so the reader's next hand-over fails and it stops; an error of
//! the reader closes the channel, so the output thread writes what was submitted before it and
//! ends.

use anyhow::{anyhow, Context, Result};
use genie_core::atomic::AtomicFile;
use indicatif::{HumanCount, ProgressBar};
use serde_json::Value;
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::mpsc::{sync_channel, Receiver};
use std::time::Instant;

use crate::kind::{write_answers, QueryReader};
use crate::service::Ticket;

/// Submitted chunks that may wait for the output at once.
pub const IN_FLIGHT: usize = 3;

/// A submitted chunk: its tickets in query order, and the bytes of queries read by then (for
/// the progress bar).
pub struct Chunk {
    /// The tickets of its queries, in order.
    pub tickets: Vec<Ticket>,
    /// The bytes of the queries file read by then.
    pub read_bytes: u64,
    /// When its queries were submitted.
    pub submitted: Instant,
}

/// What the stages did: queries written, and each stage's busy time.
#[derive(Debug, Default)]
pub struct Stages {
    /// Queries written.
    pub queries: u64,
    /// Reading, parsing and submitting chunks.
    pub read_ms: f64,
    /// Waiting for answers (the search not hidden behind the other stages).
    pub search_ms: f64,
    /// From each chunk's submission to its last answer, summed over the chunks (the searches'
    /// own time, hidden or not, with their time in the queue).
    pub answered_ms: f64,
    /// Writing the answers as JSON lines and flushing them.
    pub output_ms: f64,
}

/// Runs the pipeline: `next` reads, parses and submits the next chunk (`None` at the end) on
/// this thread while an output thread waits for the answers and writes them to `out`
/// (`out_name` names it in errors). The output thread's error comes first: it concerns
/// queries before any the reader has rejected.
pub fn search_chunks(
    mut next: impl FnMut() -> Result<Option<Chunk>>,
    out: &mut (dyn Write + Send),
    out_name: &str,
    bar: &ProgressBar,
) -> Result<Stages> {
    let (tx, rx) = sync_channel::<Chunk>(IN_FLIGHT - 2);
    std::thread::scope(|s| {
        let writer = std::thread::Builder::new()
            .name("genie-output".into())
            .spawn_scoped(s, || write_chunks(rx, out, out_name, bar))
            .context("cannot start the output thread")?;
        let mut read_ms = 0.0;
        let read = loop {
            let t = Instant::now();
            let chunk = next();
            read_ms += t.elapsed().as_secs_f64() * 1e3;
            match chunk {
                Ok(Some(chunk)) => {
                    if tx.send(chunk).is_err() {
                        // the output thread failed, and says why below
                        break Ok(());
                    }
                }
                Ok(None) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        drop(tx);
        let written = writer
            .join()
            .map_err(|_| anyhow!("the output thread panicked"))?;
        let stages = written?;
        read?;
        Ok(Stages { read_ms, ..stages })
    })
}

/// The output thread: waits for the answers of each chunk, writes them in order (formatted on
/// all cores, [`write_answers`]), then flushes.
fn write_chunks(
    chunks: Receiver<Chunk>,
    out: &mut (dyn Write + Send),
    out_name: &str,
    bar: &ProgressBar,
) -> Result<Stages> {
    let mut st = Stages::default();
    let failed = || format!("cannot write to {out_name}");
    for chunk in chunks {
        let t = Instant::now();
        log::trace!("at {:.1} ms: a chunk's answers awaited", crate::clock_ms());
        // the answers before a failed search are still written, then the failure is the error
        let mut answers = Vec::with_capacity(chunk.tickets.len());
        let mut failure = None;
        for ticket in chunk.tickets {
            match ticket.wait() {
                Ok(answer) => answers.push(answer),
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        let t2 = Instant::now();
        st.search_ms += (t2 - t).as_secs_f64() * 1e3;
        st.answered_ms += (t2 - chunk.submitted).as_secs_f64() * 1e3;
        log::debug!(
            "a chunk of {} queries answered {:.1} ms after its submission, {:.1} ms waited",
            answers.len(),
            (t2 - chunk.submitted).as_secs_f64() * 1e3,
            (t2 - t).as_secs_f64() * 1e3
        );
        write_answers(out, st.queries, &answers).with_context(failed)?;
        st.queries += answers.len() as u64;
        out.flush().with_context(failed)?;
        st.output_ms += t2.elapsed().as_secs_f64() * 1e3;
        if let Some(e) = failure {
            return Err(anyhow::Error::new(e).context("search failed"));
        }
        bar.set_position(chunk.read_bytes);
        bar.set_message(format!("{} queries", HumanCount(st.queries)));
    }
    Ok(st)
}

/// Reads up to `max` raw queries, each with where it came from (for the errors of its parse or
/// its search); the reader's errors name the place themselves.
pub fn read_chunk(reader: &mut dyn QueryReader, max: usize) -> Result<(Vec<Value>, Vec<String>)> {
    Ok(reader.next_queries(max)?)
}

/// Where the search writes: standard output, or a file that appears only when the search is
/// done ([`AtomicFile`]: a failed or killed search leaves no half-written output, and an earlier
/// file of that name as it was). Standard output is locked per write of the buffer, not for
/// the whole search: the output thread of [`search_chunks`] writes it.
pub enum Output {
    /// Standard output, buffered.
    Stdout(BufWriter<io::Stdout>),
    /// A file put in place by [`Output::finish`].
    File(AtomicFile),
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Self::Stdout(w) => w.write(buf),
            Self::File(f) => f.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Self::Stdout(w) => w.flush(),
            Self::File(f) => f.flush(),
        }
    }
}

impl Output {
    /// The search output (`--output FILE`, else standard output) and its name for errors.
    pub fn open(path: Option<&Path>) -> Result<(Self, String)> {
        let name = path.map_or_else(|| "<stdout>".to_string(), |p| p.display().to_string());
        let out = match path {
            Some(p) => Self::File(
                AtomicFile::create(p).with_context(|| format!("{}: cannot create", p.display()))?,
            ),
            None => Self::Stdout(BufWriter::with_capacity(1 << 16, io::stdout())),
        };
        Ok((out, name))
    }

    /// Finishes: flushes standard output, or puts the file in place.
    pub fn finish(self, name: &str) -> Result<()> {
        match self {
            Self::Stdout(mut w) => w.flush(),
            Self::File(f) => f.commit(),
        }
        .with_context(|| format!("cannot write to {name}"))
    }
}
