//! The batching handle (DESIGN.md section 6, layer 4): resident indexes and one runner thread per
//! device replica, fed from one queue per index, so that queries arriving one at a time from many
//! callers are searched in batches.
//!
//! The policy follows the cohort scheduling of the HDSS paper: when every runner is **idle, one
//! launches at once** with whatever is queued (a lone query is not held back), and while runners
//! are **busy, arrivals gather** into the next batch, up to [`BatchPolicy::max_batch`] queries.
//! Across several devices ([`Dispatch::Cohort`], [`dispatch`]; `genie search` uses it), a batch
//! goes to an idle device before a busy one, and an idle runner whose fellows are busy launches
//! only once the queue holds a batch its device runs efficiently (from each replica's measured
//! batch-time line), or once the oldest query has waited one launch's fixed cost. [`BatchPolicy::max_wait`] lets an idle runner wait a little for a fuller batch (0 by
//! default), and [`BatchPolicy::queue_timeout`] is the deadline after which a query still queued
//! fails with [`SearchError::Overloaded`] instead of being searched late.
//!
//! [`Service`] is cheap to clone, `Send + Sync`, and serves async code (`search(..).await`) and
//! plain threads ([`Ticket::wait`]) alike. A caller that drops its future or ticket costs nothing
//! more: the runner skips queries nobody waits for. A failing query fails alone: when a batch
//! fails, its queries are searched one by one.
//!
//! A caller with many queries at once (Python's arrays, a chunk of a file) can hand them over
//! whole ([`Service::run_whole`]): a whole batch is searched as it is by the first runner free,
//! so the chunks of one large search spread over the replicas, and it shares the runners with
//! the queries of everyone else.
//!
//! ```
//! use genie::kind::{Options, Registry};
//! use genie::service::{BatchPolicy, Service};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! # let (objects, index) = (dir.path().join("o.txt"), dir.path().join("i.genie"));
//! # std::fs::write(&objects, "1 4 7\n2 4 8\n1 4 8\n")?;
//! # let kind = Registry::default().get("keywords")?.clone();
//! # kind.build(&genie::kind::BuildJob { input: &objects, output: &index,
//! #     options: &Options::new(), progress: &|_| {} })?;
//! let spec = genie::open::OpenSpec { device: genie::core::DeviceChoice::Cpu, ..Default::default() };
//! let service = Service::open(&Registry::default(), &[("demo", index.as_path())], &spec,
//!                             BatchPolicy::default())?;
//! let query = service.parse("demo", &serde_json::json!("1 4 8"), &Options::new())?;
//! let answer = service.submit_one("demo", query, 1, None)?.wait()?;
//! assert_eq!((answer.hits[0].id, answer.hits[0].count), (2, 3));
//! # Ok(()) }
//! ```

pub mod dispatch;

pub use dispatch::Dispatch;
use dispatch::{wait_for_more, BatchModel};

use crate::data_error::DataError;
use crate::kind::{Answer, Filter, KindIndex, Options, Prepared, Registry, Request};
use crate::open::{load, place, OpenSpec};
use std::collections::{BTreeMap, VecDeque};
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tokio::sync::oneshot;

/// How queries are gathered into batches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchPolicy {
    /// The most queries one launch takes.
    pub max_batch: usize,
    /// How long an idle runner waits for the batch to fill before it launches (0: at once).
    pub max_wait: Duration,
    /// A query still queued after this long fails with [`SearchError::Overloaded`].
    pub queue_timeout: Duration,
    /// Batches in flight per GPU replica: the next batch's host work (preparing and planning
    /// its queries, then answering them) overlaps the current batch's device work, while the
    /// device itself still runs one batch at a time. A CPU replica runs one.
    pub gpu_pipeline: usize,
    /// When an idle runner launches while others are busy ([`dispatch`]).
    pub dispatch: Dispatch,
    /// With several GPU replicas, each runner searches on threads of its own ([`gpu_pool`])
    /// rather than on the process's shared pool. `genie search` asks for it: its search stage
    /// of 65,536 queries on four H200s took 268.8 against 435.1 ms (chunks of 16,384). The
    /// server does not: under 4,096 clients on four H100s it served 39,143 queries a second with
    /// them against 64,849 without (its small batches wake many more threads than cores).
    pub own_threads: bool,
}

impl Default for BatchPolicy {
    fn default() -> Self {
        Self {
            max_batch: 512,
            max_wait: Duration::ZERO,
            queue_timeout: Duration::from_secs(30),
            gpu_pipeline: 2,
            dispatch: Dispatch::Greedy,
            own_threads: false,
        }
    }
}

/// Why a search through the service failed.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// No index of this name is served.
    #[error("no index named {0:?}")]
    UnknownIndex(String),
    /// The query (or its options) was rejected.
    #[error(transparent)]
    BadQuery(DataError),
    /// The query waited longer than the queue timeout.
    #[error("overloaded: the query waited {0:.0?} without being searched")]
    Overloaded(Duration),
    /// The search itself failed.
    #[error("search failed: {0}")]
    Failed(String),
    /// The service is shutting down.
    #[error("the service is shutting down")]
    ShutDown,
}

/// A query waiting in a queue.
struct Pending {
    query: Prepared,
    k: u32,
    min_count: Option<u32>,
    filter: Option<Arc<Filter>>,
    enqueued: Instant,
    reply: oneshot::Sender<Result<Answer, SearchError>>,
}

/// Counters of one index, read by [`Service::stats`].
#[derive(Default)]
struct Counters {
    queries: AtomicU64,
    batches: AtomicU64,
    cancelled: AtomicU64,
    overloaded: AtomicU64,
    failed: AtomicU64,
    /// Batches by size: bucket `i` counts sizes in `(2^(i-1), 2^i]`.
    sizes: [AtomicU64; SIZE_BUCKETS],
}

/// Buckets of the batch-size histogram: 1, 2, 4, ..., 2^15 and above.
pub const SIZE_BUCKETS: usize = 17;

/// The work of a whole batch, given the replica that runs it.
type WholeWork = Box<dyn FnOnce(&dyn KindIndex) + Send>;

/// A batch handed over whole ([`Service::run_whole`]): searched as it is by one replica.
struct Whole {
    queries: usize,
    work: WholeWork,
}

/// What a queue holds: single queries, gathered into batches by the runners, and whole batches.
enum Job {
    Query(Pending),
    Whole(Whole),
}

/// What a runner takes from the queue.
enum Taken {
    Queries(Vec<Pending>),
    Whole(Whole),
}

struct QueueState {
    pending: VecDeque<Job>,
    closed: bool,
    busy: usize,
    /// Batches in flight per replica.
    in_flight: Vec<usize>,
}

/// One served index: its replicas (one per device), its queue and counters.
struct Served {
    name: String,
    replicas: Vec<Arc<dyn KindIndex>>,
    /// Each replica's batch-time line, fitted from its batches.
    models: Vec<BatchModel>,
    state: Mutex<QueueState>,
    ready: Condvar,
    counters: Counters,
    policy: BatchPolicy,
}

impl Served {
    fn lock(&self) -> MutexGuard<'_, QueueState> {
        // a runner that panicked mid-batch leaves the queue itself consistent
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

struct Inner {
    /// The served indexes; more may come while serving ([`Service::add`]).
    indexes: std::sync::RwLock<BTreeMap<String, Arc<Served>>>,
    runners: Mutex<Vec<JoinHandle<()>>>,
    policy: BatchPolicy,
}

impl Inner {
    fn indexes(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<String, Arc<Served>>> {
        self.indexes.read().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        for s in self.indexes().values() {
            s.lock().closed = true;
            s.ready.notify_all();
        }
    }
}

/// The batching handle: cheap to clone, `Send + Sync`.
#[derive(Clone)]
pub struct Service {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Service {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Service")
            .field("indexes", &self.names())
            .finish()
    }
}

/// What [`Service::stats`] tells of one index.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct IndexStats {
    /// The index's name.
    pub name: String,
    /// Its kind.
    pub kind: String,
    /// Objects.
    pub objects: u64,
    /// Where its replicas search.
    pub devices: Vec<String>,
    /// The GPUs its replicas are on.
    pub gpus: Vec<usize>,
    /// Queries waiting.
    pub queued: usize,
    /// Runners searching now.
    pub busy: usize,
    /// Queries searched (answered or failed).
    pub queries: u64,
    /// Batches launched.
    pub batches: u64,
    /// Queries dropped by their callers before they were searched.
    pub cancelled: u64,
    /// Queries failed by the queue timeout.
    pub overloaded: u64,
    /// Queries whose search failed.
    pub failed: u64,
    /// Batches by size (see [`SIZE_BUCKETS`]).
    pub batch_sizes: Vec<u64>,
    /// Each replica's fitted batch time, once fitted ([`dispatch::Line`]).
    pub batch_lines: Vec<Option<dispatch::Line>>,
}

/// The result of a whole batch on its way ([`Service::run_whole`]).
pub struct WholeTicket<T>(oneshot::Receiver<Result<T, SearchError>>);

impl<T> WholeTicket<T> {
    /// Blocks the thread until the batch is searched (not from inside an async task).
    pub fn wait(self) -> Result<T, SearchError> {
        self.0.blocking_recv().unwrap_or(Err(SearchError::ShutDown))
    }
}

/// An answer on its way: a future for async code, [`Ticket::wait`] for threads.
pub struct Ticket(oneshot::Receiver<Result<Answer, SearchError>>);

impl Ticket {
    /// Blocks the thread until the answer comes (not from inside an async task).
    pub fn wait(self) -> Result<Answer, SearchError> {
        self.0.blocking_recv().unwrap_or(Err(SearchError::ShutDown))
    }
}

impl Future for Ticket {
    type Output = Result<Answer, SearchError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        Pin::new(&mut self.0)
            .poll(cx)
            .map(|r| r.unwrap_or(Err(SearchError::ShutDown)))
    }
}

impl Service {
    /// A service over named indexes, each given as its replicas (one runner thread each).
    pub fn new(
        indexes: Vec<(String, Vec<Arc<dyn KindIndex>>)>,
        policy: BatchPolicy,
    ) -> Result<Self, DataError> {
        let service = Self {
            inner: Arc::new(Inner {
                indexes: std::sync::RwLock::new(BTreeMap::new()),
                runners: Mutex::new(Vec::new()),
                policy: BatchPolicy {
                    max_batch: policy.max_batch.max(1),
                    ..policy
                },
            }),
        };
        for (name, replicas) in indexes {
            service.add(name, replicas)?;
        }
        Ok(service)
    }

    /// Serves one more index, given as its replicas (one runner thread each), under a name no
    /// other index has.
    pub fn add(&self, name: String, replicas: Vec<Arc<dyn KindIndex>>) -> Result<(), DataError> {
        if replicas.is_empty() {
            return Err(DataError::Unsupported(format!(
                "index {name:?}: no replica"
            )));
        }
        let mut indexes = self
            .inner
            .indexes
            .write()
            .unwrap_or_else(|e| e.into_inner());
        if indexes.contains_key(&name) {
            return Err(DataError::Unsupported(format!(
                "two indexes named {name:?}"
            )));
        }
        let n_replicas = replicas.len();
        let served = Arc::new(Served {
            name: name.clone(),
            models: replicas.iter().map(|_| BatchModel::default()).collect(),
            replicas,
            state: Mutex::new(QueueState {
                pending: VecDeque::new(),
                closed: false,
                busy: 0,
                in_flight: vec![0; n_replicas],
            }),
            ready: Condvar::new(),
            counters: Counters::default(),
            policy: self.inner.policy.clone(),
        });
        let mut runners = self.inner.runners.lock().unwrap_or_else(|e| e.into_inner());
        for (r, replica) in served.replicas.iter().enumerate() {
            let in_flight = match replica.gpu_ordinal() {
                Some(_) => served.policy.gpu_pipeline.max(1),
                None => 1,
            };
            for i in 0..in_flight {
                let s = Arc::clone(&served);
                let pool = match served.policy.own_threads {
                    true => gpu_pool(&served.replicas, r, i)?,
                    false => None,
                };
                let handle = std::thread::Builder::new()
                    .name(format!("genie-runner-{name}-{r}.{i}"))
                    .spawn(move || run(&s, r, pool.as_ref()))
                    .map_err(|e| DataError::Unsupported(format!("cannot start a runner: {e}")))?;
                runners.push(handle);
            }
        }
        indexes.insert(name, served);
        Ok(())
    }

    /// Opens index files by name on the devices of `spec` (see [`crate::open`]).
    pub fn open(
        registry: &Registry,
        files: &[(&str, &Path)],
        spec: &OpenSpec,
        policy: BatchPolicy,
    ) -> Result<Self, DataError> {
        let mut indexes = Vec::new();
        for (name, path) in files {
            let loaded = load(registry, path)?;
            indexes.push((name.to_string(), place(&loaded, spec)?));
        }
        Self::new(indexes, policy)
    }

    fn served(&self, index: &str) -> Result<Arc<Served>, SearchError> {
        self.inner
            .indexes()
            .get(index)
            .cloned()
            .ok_or_else(|| SearchError::UnknownIndex(index.to_string()))
    }

    /// The opened index of a name (to ask its kind, objects, backend).
    pub fn index(&self, name: &str) -> Result<Arc<dyn KindIndex>, SearchError> {
        Ok(Arc::clone(&self.served(name)?.replicas[0]))
    }

    /// The names of the served indexes.
    pub fn names(&self) -> Vec<String> {
        self.inner.indexes().keys().cloned().collect()
    }

    /// Parses a raw query for an index (see [`KindIndex::parse`]).
    pub fn parse(
        &self,
        index: &str,
        raw: &serde_json::Value,
        options: &Options,
    ) -> Result<Prepared, SearchError> {
        self.index(index)?
            .parse(raw, options)
            .map_err(SearchError::BadQuery)
    }

    /// Queues parsed queries, all at once (a runner may take them in one batch), each with its
    /// `k` and `min_count`; one ticket per query, in order.
    pub fn submit(
        &self,
        index: &str,
        queries: Vec<(Prepared, u32, Option<u32>)>,
    ) -> Result<Vec<Ticket>, SearchError> {
        self.submit_filtered(index, queries, None)
    }

    /// [`Service::submit`] of queries that share a filter (the objects they may return): they
    /// are searched together, apart from queries of other filters.
    pub fn submit_filtered(
        &self,
        index: &str,
        queries: Vec<(Prepared, u32, Option<u32>)>,
        filter: Option<Arc<Filter>>,
    ) -> Result<Vec<Ticket>, SearchError> {
        let served = self.served(index)?;
        let now = Instant::now();
        let mut tickets = Vec::with_capacity(queries.len());
        {
            let mut state = served.lock();
            if state.closed {
                return Err(SearchError::ShutDown);
            }
            // more hits than objects cannot be: a larger k costs nothing more than that
            let most = u32::try_from(served.replicas[0].num_objects()).unwrap_or(u32::MAX);
            for (query, k, min_count) in queries {
                let k = k.min(most);
                let (reply, rx) = oneshot::channel();
                state.pending.push_back(Job::Query(Pending {
                    query,
                    k,
                    min_count,
                    filter: filter.clone(),
                    enqueued: now,
                    reply,
                }));
                tickets.push(Ticket(rx));
            }
        }
        served.ready.notify_all();
        Ok(tickets)
    }

    /// Queues one parsed query.
    pub fn submit_one(
        &self,
        index: &str,
        query: Prepared,
        k: u32,
        min_count: Option<u32>,
    ) -> Result<Ticket, SearchError> {
        let mut t = self.submit(index, vec![(query, k, min_count)])?;
        t.pop().ok_or(SearchError::ShutDown)
    }

    /// Queues `work` on a whole batch of `queries` queries for one of the replicas of `index`:
    /// the first runner free runs it with its replica, as it is (not gathered with other
    /// queries, not split), and it never expires in the queue, since its caller waits for it.
    /// A panic of `work` is answered as [`SearchError::Failed`].
    pub fn run_whole<T: Send + 'static>(
        &self,
        index: &str,
        queries: usize,
        work: impl FnOnce(&dyn KindIndex) -> T + Send + 'static,
    ) -> Result<WholeTicket<T>, SearchError> {
        let served = self.served(index)?;
        let (reply, rx) = oneshot::channel();
        let work = Box::new(move |replica: &dyn KindIndex| {
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(replica)))
                .map_err(|_| SearchError::Failed("the search panicked".into()));
            // a caller gone meanwhile is no error
            let _ = reply.send(result);
        });
        {
            let mut state = served.lock();
            if state.closed {
                return Err(SearchError::ShutDown);
            }
            state.pending.push_back(Job::Whole(Whole { queries, work }));
        }
        served.ready.notify_one();
        Ok(WholeTicket(rx))
    }

    /// Searches one parsed query: the top `k` (with `min_count`, only hits of at least that
    /// count).
    pub async fn search(
        &self,
        index: &str,
        query: Prepared,
        k: u32,
        min_count: Option<u32>,
    ) -> Result<Answer, SearchError> {
        self.submit_one(index, query, k, min_count)?.await
    }

    /// The counters of every index.
    pub fn stats(&self) -> Vec<IndexStats> {
        self.inner
            .indexes()
            .values()
            .map(|s| {
                let (queued, busy) = {
                    let st = s.lock();
                    (st.pending.len(), st.busy)
                };
                let c = &s.counters;
                let r0 = &s.replicas[0];
                IndexStats {
                    name: s.name.clone(),
                    kind: r0.kind().to_string(),
                    objects: r0.num_objects(),
                    devices: s.replicas.iter().map(|r| r.backend_name()).collect(),
                    gpus: s.replicas.iter().filter_map(|r| r.gpu_ordinal()).collect(),
                    queued,
                    busy,
                    queries: c.queries.load(Ordering::Relaxed),
                    batches: c.batches.load(Ordering::Relaxed),
                    cancelled: c.cancelled.load(Ordering::Relaxed),
                    overloaded: c.overloaded.load(Ordering::Relaxed),
                    failed: c.failed.load(Ordering::Relaxed),
                    batch_sizes: c.sizes.iter().map(|b| b.load(Ordering::Relaxed)).collect(),
                    batch_lines: s.models.iter().map(BatchModel::line).collect(),
                }
            })
            .collect()
    }

    /// Stops taking queries, lets the runners finish every query already queued, and waits for
    /// them.
    pub fn shutdown(&self) {
        for s in self.inner.indexes().values() {
            s.lock().closed = true;
            s.ready.notify_all();
        }
        let handles: Vec<_> =
            std::mem::take(&mut *self.inner.runners.lock().unwrap_or_else(|e| e.into_inner()));
        for h in handles {
            if h.join().is_err() {
                log::error!("a runner ended in a panic");
            }
        }
    }
}

/// The bucket of a batch size.
fn size_bucket(n: usize) -> usize {
    (usize::BITS - n.saturating_sub(1).leading_zeros()).min(SIZE_BUCKETS as u32 - 1) as usize
}

/// Takes the next batch for replica `r`: waits for queries (and, under `max_wait` or the cohort
/// rule, for a fuller batch), drops those nobody waits for and fails those past the queue
/// timeout; a whole batch at the front is taken alone. `None` when closed and empty.
fn next_batch(served: &Served, r: usize) -> Option<Taken> {
    let policy = &served.policy;
    let mut state = served.lock();
    loop {
        if state.pending.is_empty() {
            if state.closed {
                return None;
            }
            state = served.ready.wait(state).unwrap_or_else(|e| e.into_inner());
            continue;
        }
        let oldest = match state.pending.front() {
            Some(Job::Query(p)) => p.enqueued.elapsed(),
            _ => Duration::MAX,
        };
        // a device with a batch in flight finishes a new one later than an idle device: the
        // idle device's runner (woken as this one was) takes it; this one looks again after
        let elsewhere = policy.dispatch == Dispatch::Cohort
            && !state.closed
            && state.in_flight[r] > 0
            && state.in_flight.contains(&0);
        if elsewhere {
            state = served
                .ready
                .wait_timeout(state, Duration::from_millis(1))
                .map(|(s, _)| s)
                .unwrap_or_else(|e| e.into_inner().0);
            continue;
        }
        let cohort = match state.closed || oldest == Duration::MAX {
            true => None,
            false => wait_for_more(
                policy.dispatch,
                served.models[r].line(),
                state.pending.len(),
                oldest,
                state.busy,
                policy.max_batch,
            ),
        };
        if !state.closed && state.pending.len() < policy.max_batch && oldest < policy.max_wait
            || cohort.is_some()
        {
            let wait = cohort
                .unwrap_or_default()
                .max(policy.max_wait.saturating_sub(oldest));
            state = served
                .ready
                .wait_timeout(state, wait)
                .map(|(s, _)| s)
                .unwrap_or_else(|e| e.into_inner().0);
            continue;
        }
        if matches!(state.pending.front(), Some(Job::Whole(_))) {
            if let Some(Job::Whole(whole)) = state.pending.pop_front() {
                state.busy += 1;
                state.in_flight[r] += 1;
                return Some(Taken::Whole(whole));
            }
        }
        let mut batch = Vec::with_capacity(state.pending.len().min(policy.max_batch));
        let now = Instant::now();
        while batch.len() < policy.max_batch {
            if !matches!(state.pending.front(), Some(Job::Query(_))) {
                break;
            }
            let Some(Job::Query(p)) = state.pending.pop_front() else {
                break;
            };
            let waited = now.saturating_duration_since(p.enqueued);
            if p.reply.is_closed() {
                served.counters.cancelled.fetch_add(1, Ordering::Relaxed);
            } else if waited > policy.queue_timeout {
                served.counters.overloaded.fetch_add(1, Ordering::Relaxed);
                let _ = p.reply.send(Err(SearchError::Overloaded(waited)));
            } else {
                batch.push(p);
            }
        }
        if batch.is_empty() {
            continue;
        }
        state.busy += 1;
        state.in_flight[r] += 1;
        return Some(Taken::Queries(batch));
    }
}

/// One runner: takes batches for replica `r` until the queue is closed and drained, and searches
/// them on its own `pool` when it has one ([`gpu_pool`]).
fn run(served: &Served, r: usize, pool: Option<&rayon::ThreadPool>) {
    let replica = &served.replicas[r];
    while let Some(taken) = next_batch(served, r) {
        let c = &served.counters;
        let size = match &taken {
            Taken::Queries(batch) => batch.len(),
            Taken::Whole(whole) => whole.queries,
        };
        c.batches.fetch_add(1, Ordering::Relaxed);
        c.sizes[size_bucket(size)].fetch_add(1, Ordering::Relaxed);
        c.queries.fetch_add(size as u64, Ordering::Relaxed);
        match taken {
            Taken::Whole(whole) => on_own(pool, || (whole.work)(replica.as_ref())),
            Taken::Queries(batch) => {
                let t = Instant::now();
                log::trace!(
                    "at {:.1} ms: replica {r} takes a batch of {}",
                    crate::clock_ms(),
                    batch.len()
                );
                let answers = on_own(pool, || search_batch(replica.as_ref(), &batch));
                served.models[r].record(batch.len(), t.elapsed());
                log::trace!(
                    "at {:.1} ms: replica {r}: a batch of {} queries searched in {:.1} ms",
                    crate::clock_ms(),
                    batch.len(),
                    t.elapsed().as_secs_f64() * 1e3
                );
                // the answers go out first; the queries are freed after the last one
                let mut spent = Vec::with_capacity(batch.len());
                for (p, a) in batch.into_iter().zip(answers) {
                    if a.is_err() {
                        c.failed.fetch_add(1, Ordering::Relaxed);
                    }
                    let Pending { reply, query, .. } = p;
                    // a receiver dropped meanwhile is no error
                    let _ = reply.send(a);
                    spent.push(query);
                }
                log::trace!("at {:.1} ms: replica {r}: answers sent", crate::clock_ms());
                drop(spent);
            }
        }
        let mut state = served.lock();
        state.busy -= 1;
        state.in_flight[r] -= 1;
        drop(state);
        // an idle device again: a runner that left work for it looks again
        served.ready.notify_all();
    }
}

/// `work` run on `pool` when there is one (its parallel loops then stay on that pool), else on
/// this thread.
fn on_own<R: Send>(pool: Option<&rayon::ThreadPool>, work: impl FnOnce() -> R + Send) -> R {
    match pool {
        Some(pool) => pool.install(work),
        None => work(),
    }
}

/// With several GPU replicas ([`BatchPolicy::own_threads`]), runner `i` of GPU replica `r`
/// gets a pool of its own of the host's threads (a GPU's share, at least two), on which it
/// searches: its plans, its pinned copies and its answers then wait for no other device's
/// parallel work, nor for the reader's parse of the next queries, in one shared pool. A pool per
/// runner, not per device: a runner's search holds its device while it plans on its pool, and a
/// worker of that pool that took another runner's search from the pool's queue while it waited
/// would wait on that device itself (a deadlock seen with one pool per GPU).
/// `GENIE_GPU_POOLS=0` leaves every search on the shared pool.
fn gpu_pool(
    replicas: &[Arc<dyn KindIndex>],
    r: usize,
    i: usize,
) -> Result<Option<rayon::ThreadPool>, DataError> {
    let gpus = replicas
        .iter()
        .filter(|r| r.gpu_ordinal().is_some())
        .count();
    let off = std::env::var("GENIE_GPU_POOLS").is_ok_and(|v| v == "0");
    match replicas[r].gpu_ordinal() {
        Some(gpu) if gpus > 1 && !off => rayon::ThreadPoolBuilder::new()
            .num_threads((rayon::current_num_threads() / gpus).max(2))
            .thread_name(move |t| format!("genie-gpu{gpu}.{i}-{t}"))
            .build()
            .map(Some)
            .map_err(|e| DataError::Unsupported(format!("cannot start threads: {e}"))),
        _ => Ok(None),
    }
}

/// Searches a batch; when it fails as a whole, each query alone, so a failure stays with its
/// query. A panic of the search is caught and answered as a failure.
fn search_batch(index: &dyn KindIndex, batch: &[Pending]) -> Vec<Result<Answer, SearchError>> {
    let once = |part: &[Pending]| -> Result<Vec<Answer>, SearchError> {
        let requests: Vec<Request<'_>> = part
            .iter()
            .map(|p| Request {
                query: p.query.as_ref(),
                k: p.k,
                min_count: p.min_count,
                filter: p.filter.as_deref(),
            })
            .collect();
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| index.search(&requests))) {
            Ok(Ok(a)) if a.len() == part.len() => Ok(a),
            Ok(Ok(a)) => Err(SearchError::Failed(format!(
                "{} answers for {} queries",
                a.len(),
                part.len()
            ))),
            Ok(Err(e)) => Err(SearchError::Failed(e.to_string())),
            Err(_) => Err(SearchError::Failed("the search panicked".into())),
        }
    };
    match once(batch) {
        Ok(answers) => answers.into_iter().map(Ok).collect(),
        Err(e) if batch.len() == 1 => vec![Err(e)],
        Err(e) => {
            log::warn!(
                "a batch of {} failed ({e}); searching its queries one by one",
                batch.len()
            );
            batch
                .iter()
                .map(|p| once(std::slice::from_ref(p)).map(|mut a| a.remove(0)))
                .collect()
        }
    }
}

#[cfg(test)]
mod tests;
