//! Where a queued query's answer goes: a channel of its own ([`Ticket`]), or a slot of the
//! answers of queries submitted together ([`Tickets`], [`Service::submit_all`]).
//!
//! A chunk of 10,000 queries with a channel each cost its caller and the runner about 0.2 us a
//! query, mostly in waits for memory: every channel lies apart, allocated by the submitting
//! thread, written by the runner and read by the waiter, a miss on each side. Slots lie in one
//! array, written by the runner in order and taken whole by the waiter, who is woken once.
//!
//! [`Service::submit_all`]: super::Service::submit_all

use super::SearchError;
use crate::kind::Answer;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::sync::oneshot;

/// An answer, or why there is none.
pub type Answered = Result<Answer, SearchError>;

/// A query's way back to its caller.
pub(super) enum Reply {
    /// A channel of its own.
    One(oneshot::Sender<Answered>),
    /// A slot of the answers of queries submitted together.
    Slot(SlotReply),
}

impl Reply {
    /// Whether nobody waits for the answer any more.
    pub(super) fn is_closed(&self) -> bool {
        match self {
            Self::One(tx) => tx.is_closed(),
            Self::Slot(s) => s.slots.abandoned.load(Ordering::Relaxed),
        }
    }

    /// Gives the answer (a caller gone meanwhile is no error).
    pub(super) fn send(self, answer: Answered) {
        match self {
            Self::One(tx) => {
                let _ = tx.send(answer);
            }
            Self::Slot(mut s) => s.answer = Some(answer),
        }
    }
}

/// The answers of queries submitted together, filled by the runners that search them.
struct Slots {
    answers: Mutex<Vec<Option<Answered>>>,
    /// Slots not filled yet; the runner that fills the last one wakes the waiter.
    left: AtomicUsize,
    done: Mutex<Option<oneshot::Sender<()>>>,
    /// Set when the waiter is gone: the runners skip what is left.
    abandoned: AtomicBool,
}

/// Slot `at` of [`Slots`]; filled when dropped, with the answer given or else
/// [`SearchError::ShutDown`] (a queue dropped with the query in it).
pub(super) struct SlotReply {
    slots: Arc<Slots>,
    at: usize,
    answer: Option<Answered>,
}

impl Drop for SlotReply {
    fn drop(&mut self) {
        let answer = self.answer.take().unwrap_or(Err(SearchError::ShutDown));
        let slots = &self.slots;
        if let Some(slot) = lock(&slots.answers).get_mut(self.at) {
            *slot = Some(answer);
        }
        if slots.left.fetch_sub(1, Ordering::AcqRel) == 1 {
            if let Some(tx) = lock(&slots.done).take() {
                let _ = tx.send(());
            }
        }
    }
}

/// The answers of queries submitted together, in their order: [`Tickets::wait`] for threads,
/// `.await` for async code. Dropped, the queries not yet searched are skipped.
pub struct Tickets {
    slots: Arc<Slots>,
    /// Told when the last slot is filled (taken by [`Tickets::wait`]).
    done: Option<oneshot::Receiver<()>>,
    len: usize,
}

impl Tickets {
    /// `n` slots and their replies, in order.
    pub(super) fn new(n: usize) -> (Self, Vec<Reply>) {
        let (tx, done) = oneshot::channel();
        let slots = Arc::new(Slots {
            answers: Mutex::new((0..n).map(|_| None).collect()),
            left: AtomicUsize::new(n),
            done: Mutex::new(Some(tx)),
            abandoned: AtomicBool::new(false),
        });
        if n == 0 {
            if let Some(tx) = lock(&slots.done).take() {
                let _ = tx.send(());
            }
        }
        let replies = (0..n)
            .map(|at| {
                Reply::Slot(SlotReply {
                    slots: Arc::clone(&slots),
                    at,
                    answer: None,
                })
            })
            .collect();
        (
            Self {
                slots,
                done: Some(done),
                len: n,
            },
            replies,
        )
    }

    /// Queries submitted.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether none was.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Blocks the thread until every query is answered (not from inside an async task).
    pub fn wait(mut self) -> Vec<Answered> {
        if let Some(done) = self.done.take() {
            let _ = done.blocking_recv();
        }
        self.take()
    }

    /// The answers once all are in (a slot never filled reads as shut down).
    fn take(&self) -> Vec<Answered> {
        std::mem::take(&mut *lock(&self.slots.answers))
            .into_iter()
            .map(|a| a.unwrap_or(Err(SearchError::ShutDown)))
            .collect()
    }
}

impl Drop for Tickets {
    fn drop(&mut self) {
        self.slots.abandoned.store(true, Ordering::Relaxed);
    }
}

impl Future for Tickets {
    type Output = Vec<Answered>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let ready = match self.done.as_mut() {
            Some(done) => Pin::new(done).poll(cx).is_ready(),
            None => true,
        };
        if ready {
            self.done = None;
            Poll::Ready(self.take())
        } else {
            Poll::Pending
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
