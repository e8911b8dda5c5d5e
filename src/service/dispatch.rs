//! When an idle runner launches: at once (the greedy rule), or, while other runners are busy,
//! once the queue holds a batch its device runs efficiently (the cohort rule of the HDSS paper,
//! across several devices).
//!
//! Each replica's batch time is fitted online as `t(b) = a + c b` (a launch's fixed cost `a`,
//! `c` per query) from its last batches ([`BatchModel`]). Under the cohort rule a batch goes to
//! an idle device before a second one goes to a busy device, and a runner that finds the queue
//! short while others are busy waits for a batch whose work is at least its fixed cost
//! (`b >= a / c`, at most the largest batch), but never longer than one fixed cost (at most
//! 1 ms) after the oldest query arrived. Measured (docs/journal/scaling.md): the server under the
//! cohort rule served 4-22% fewer queries a second than under the greedy rule on 1, 2 and 4
//! H100s (with two batches in flight a GPU hides most of a launch's cost, and a runner that
//! waits leaves it idle; at 40,000 queries a second the bound is the host's HTTP and JSON work,
//! not the batch sizes), so the server keeps the greedy rule; `genie search`, whose chunks come
//! whole, gains from the idle-device-first part and uses the cohort rule.
//! With every runner idle it launches at once, so a lone query waits for nothing. On four GPUs
//! the greedy rule split a server's queue into batches of 1 to 64 queries, far below the sizes
//! where a GPU batch is efficient (docs/journal/scaling.md).

use std::sync::Mutex;
use std::time::Duration;

/// How an idle runner chooses when to launch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Dispatch {
    /// At once, with whatever is queued: the server's default (on 1, 2 and 4 H100s it served
    /// more queries a second than the cohort rule at 1,024 and 4,096 clients).
    #[default]
    Greedy,
    /// A batch to an idle device before a second one to a busy device; at once when no other
    /// runner is busy; else once the queue holds an efficient batch for this runner's device, or
    /// the oldest query has waited one launch's fixed cost. `genie search` deals its chunks so
    /// (its search stage 1.2x faster on two and four GPUs than under the greedy rule).
    Cohort,
}

impl std::str::FromStr for Dispatch {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "greedy" => Ok(Self::Greedy),
            "cohort" => Ok(Self::Cohort),
            other => Err(format!("{other:?}: expected greedy or cohort")),
        }
    }
}

impl Dispatch {
    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Greedy => "greedy",
            Self::Cohort => "cohort",
        }
    }
}

/// Batches a fit needs before it is used.
const MIN_BATCHES: f64 = 8.0;
/// The weight of the batches before the last one (their sums decay by this at each batch).
const DECAY: f64 = 0.97;
/// The share of a batch's time its fixed cost may take in an efficient batch: a runner waits
/// only for batches whose fixed cost would be most of their time.
const FIXED_SHARE: f64 = 1.0;
/// The longest a query waits for its batch to fill, whatever the fitted fixed cost (which, with
/// two batches in flight on a GPU, also holds the wait behind the other one).
const MAX_PATIENCE: Duration = Duration::from_millis(1);

/// A replica's batch time `t(b) = a + c b`, fitted by least squares over its recent batches.
#[derive(Debug, Default)]
pub struct BatchModel(Mutex<Sums>);

#[derive(Clone, Copy, Debug, Default)]
struct Sums {
    n: f64,
    b: f64,
    t: f64,
    bb: f64,
    bt: f64,
}

/// A fitted batch time: `fixed + per_query * b` seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Line {
    /// Seconds of a launch whatever its size.
    pub fixed: f64,
    /// Seconds per query.
    pub per_query: f64,
}

impl BatchModel {
    /// Records a batch of `size` queries that took `took`.
    pub fn record(&self, size: usize, took: Duration) {
        let (b, t) = (size as f64, took.as_secs_f64());
        let mut s = self.0.lock().unwrap_or_else(|e| e.into_inner());
        *s = Sums {
            n: s.n * DECAY + 1.0,
            b: s.b * DECAY + b,
            t: s.t * DECAY + t,
            bb: s.bb * DECAY + b * b,
            bt: s.bt * DECAY + b * t,
        };
    }

    /// The fitted line, once enough batches of different sizes were seen.
    pub fn line(&self) -> Option<Line> {
        let s = *self.0.lock().unwrap_or_else(|e| e.into_inner());
        if s.n < MIN_BATCHES {
            return None;
        }
        let (mb, mt) = (s.b / s.n, s.t / s.n);
        let var = s.bb / s.n - mb * mb;
        // batches all of one size say nothing of the fixed cost
        if var <= (0.05 * mb).powi(2) {
            return None;
        }
        let per_query = (s.bt / s.n - mb * mt) / var;
        if !per_query.is_finite() || per_query <= 0.0 {
            return None;
        }
        Some(Line {
            fixed: (mt - per_query * mb).max(0.0),
            per_query,
        })
    }
}

impl Line {
    /// The smallest batch whose fixed cost is at most [`FIXED_SHARE`] of its work, at most
    /// `max_batch`.
    pub fn efficient_batch(&self, max_batch: usize) -> usize {
        let b = self.fixed / (FIXED_SHARE * self.per_query);
        (b.ceil() as usize).clamp(1, max_batch.max(1))
    }

    /// How long a query may wait for its batch to fill: one launch's fixed cost, at most
    /// [`MAX_PATIENCE`].
    pub fn patience(&self) -> Duration {
        Duration::from_secs_f64(self.fixed.min(1.0)).min(MAX_PATIENCE)
    }
}

/// Whether a runner under `dispatch`, finding `queued` queries (the oldest of which waited
/// `oldest`) while `busy` other runners work, should wait for more (and how long at most).
pub fn wait_for_more(
    dispatch: Dispatch,
    line: Option<Line>,
    queued: usize,
    oldest: Duration,
    busy: usize,
    max_batch: usize,
) -> Option<Duration> {
    if dispatch == Dispatch::Greedy || busy == 0 {
        return None;
    }
    let line = line?;
    let patience = line.patience();
    (queued < line.efficient_batch(max_batch) && oldest < patience).then(|| patience - oldest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fit_finds_the_fixed_cost_and_the_cost_per_query() {
        let model = BatchModel::default();
        assert_eq!(model.line(), None);
        for i in 0..64 {
            let b = 1 + (i * 37) % 200;
            model.record(b, Duration::from_secs_f64(0.002 + 0.00001 * b as f64));
        }
        let line = model.line().expect("a line");
        assert!((line.fixed - 0.002).abs() < 1e-6, "{line:?}");
        assert!((line.per_query - 0.00001).abs() < 1e-9, "{line:?}");
        // a / c = 200 queries, capped by the largest batch
        assert_eq!(line.efficient_batch(10_000), 200);
        assert_eq!(line.efficient_batch(128), 128);
        // one size only: no line
        let flat = BatchModel::default();
        for _ in 0..64 {
            flat.record(64, Duration::from_millis(3));
        }
        assert_eq!(flat.line(), None);
    }

    #[test]
    fn a_runner_waits_only_while_others_work_and_not_past_one_launch() {
        let line = Some(Line {
            fixed: 0.002,
            per_query: 0.00001,
        });
        let ms = Duration::from_millis;
        // (dispatch, line, queued, oldest, busy): the wait, with a batch of at most 512
        let cases = [
            // alone: at once
            (Dispatch::Cohort, line, 3, ms(0), 0, None),
            // others busy, a short queue: up to one fixed cost (at most 1 ms) after the oldest
            // came
            (Dispatch::Cohort, line, 3, ms(0), 2, Some(ms(1))),
            (Dispatch::Cohort, line, 3, ms(1), 2, None),
            // a full enough queue, the greedy rule, or no fit yet: at once
            (Dispatch::Cohort, line, 512, ms(0), 2, None),
            (Dispatch::Greedy, line, 3, ms(0), 2, None),
            (Dispatch::Cohort, None, 3, ms(0), 2, None),
        ];
        for (dispatch, line, queued, oldest, busy, wait) in cases {
            assert_eq!(
                wait_for_more(dispatch, line, queued, oldest, busy, 512),
                wait,
                "{dispatch:?} queued {queued} oldest {oldest:?} busy {busy}"
            );
        }
    }

    /// A replica whose batches take `fixed + per_query * b` (asleep, so timings hold on a busy
    /// machine).
    struct Slow {
        fixed: Duration,
        per_query: Duration,
        /// A GPU of this ordinal (two batches in flight), or the CPU.
        gpu: Option<usize>,
        /// Batches searched.
        batches: std::sync::atomic::AtomicUsize,
    }

    impl crate::kind::KindIndex for Slow {
        fn kind(&self) -> &str {
            "slow"
        }
        fn num_objects(&self) -> u64 {
            1
        }
        fn backend_name(&self) -> String {
            "asleep".into()
        }
        fn parse(
            &self,
            _: &serde_json::Value,
            _: &crate::kind::Options,
        ) -> Result<crate::kind::Prepared, crate::data_error::DataError> {
            Ok(Box::new(()))
        }
        fn items(&self, _: &(dyn std::any::Any + Send + Sync)) -> usize {
            1
        }
        fn gpu_ordinal(&self) -> Option<usize> {
            self.gpu
        }
        fn search(
            &self,
            batch: &[crate::kind::Request<'_>],
        ) -> Result<Vec<crate::kind::Answer>, crate::data_error::DataError> {
            self.batches
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            std::thread::sleep(self.fixed + self.per_query * batch.len() as u32);
            Ok(vec![crate::kind::Answer::default(); batch.len()])
        }
    }

    /// Mean batch size of `clients` closed-loop clients for `secs` over 4 replicas under
    /// `dispatch`, and the mean latency of one client alone afterwards.
    fn load(dispatch: Dispatch, clients: usize, secs: f64) -> (f64, Duration) {
        use crate::service::{BatchPolicy, Service};
        use std::sync::Arc;
        let replicas: Vec<Arc<dyn crate::kind::KindIndex>> = (0..4)
            .map(|_| {
                Arc::new(Slow {
                    fixed: Duration::from_millis(2),
                    per_query: Duration::from_micros(20),
                    gpu: None,
                    batches: Default::default(),
                }) as Arc<dyn crate::kind::KindIndex>
            })
            .collect();
        let policy = BatchPolicy {
            dispatch,
            ..BatchPolicy::default()
        };
        let service = Service::new(vec![("s".into(), replicas)], policy).expect("service");
        let query = |s: &Service| {
            s.parse("s", &serde_json::json!("q"), &crate::kind::Options::new())
                .expect("parsed")
        };
        let until = std::time::Instant::now() + Duration::from_secs_f64(secs);
        std::thread::scope(|scope| {
            for _ in 0..clients {
                scope.spawn(|| {
                    while std::time::Instant::now() < until {
                        let t = service
                            .submit_one("s", query(&service), 1, None)
                            .expect("queued");
                        t.wait().expect("answer");
                    }
                });
            }
        });
        let stats = &service.stats()[0];
        let mean = stats.queries as f64 / stats.batches.max(1) as f64;
        let t = std::time::Instant::now();
        for _ in 0..20 {
            let ticket = service
                .submit_one("s", query(&service), 1, None)
                .expect("queued");
            ticket.wait().expect("answer");
        }
        (mean, t.elapsed() / 20)
    }

    #[test]
    fn under_load_the_cohort_rule_launches_fuller_batches_and_alone_waits_for_nothing() {
        let (greedy, _) = load(Dispatch::Greedy, 48, 1.0);
        let (cohort, alone) = load(Dispatch::Cohort, 48, 1.0);
        eprintln!("mean batch: cohort {cohort:.1}, greedy {greedy:.1}; alone {alone:?}");
        assert!(
            cohort > 1.3 * greedy,
            "mean batch: cohort {cohort:.1}, greedy {greedy:.1}"
        );
        // a lone query launches at once: about one batch's 2 ms, not 2 ms more of waiting
        assert!(alone < Duration::from_micros(3_500), "alone {alone:?}");
    }

    #[test]
    fn a_chunk_goes_to_the_idle_device_before_a_second_batch_on_a_busy_one() {
        use crate::service::{BatchPolicy, Service};
        use std::sync::atomic::Ordering;
        use std::sync::Arc;
        for dispatch in [Dispatch::Cohort, Dispatch::Greedy] {
            let gpus: Vec<Arc<Slow>> = (0..2)
                .map(|g| {
                    Arc::new(Slow {
                        fixed: Duration::from_millis(20),
                        per_query: Duration::ZERO,
                        gpu: Some(g),
                        batches: Default::default(),
                    })
                })
                .collect();
            let replicas: Vec<Arc<dyn crate::kind::KindIndex>> = gpus
                .iter()
                .map(|g| Arc::clone(g) as Arc<dyn crate::kind::KindIndex>)
                .collect();
            // two runners a GPU, a chunk of two batches
            let policy = BatchPolicy {
                max_batch: 4,
                dispatch,
                ..BatchPolicy::default()
            };
            let service = Service::new(vec![("s".into(), replicas)], policy).expect("service");
            let chunk: Vec<_> = (0..8)
                .map(|_| {
                    let q = service
                        .parse("s", &serde_json::json!("q"), &crate::kind::Options::new())
                        .expect("parsed");
                    (q, 1, None)
                })
                .collect();
            for t in service.submit_filtered("s", chunk, None).expect("queued") {
                t.wait().expect("answer");
            }
            let per_gpu: Vec<usize> = gpus
                .iter()
                .map(|g| g.batches.load(Ordering::Relaxed))
                .collect();
            eprintln!("{dispatch:?}: batches per GPU {per_gpu:?}");
            assert_eq!(per_gpu.iter().sum::<usize>(), 2);
            if dispatch == Dispatch::Cohort {
                assert_eq!(per_gpu, [1, 1], "one batch each");
            }
        }
    }
}
