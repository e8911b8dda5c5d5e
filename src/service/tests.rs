//! The service's tests: whole batches, panics, batch sizes.

use super::*;
use crate::core::DeviceChoice;
use crate::kind::keywords::build_csr;
use crate::open::in_memory;

/// A small keyword index placed on the CPU.
fn cpu_replica() -> Arc<dyn KindIndex> {
    let index = build_csr(&[0, 3, 3, 7, 9], &[1, 4, 7, 2, 4, 4, 8, 8, 1], "mem").expect("x");
    let loaded = in_memory(&Registry::default(), index, Path::new("mem")).expect("kind");
    let spec = OpenSpec {
        device: DeviceChoice::Cpu,
        ..OpenSpec::default()
    };
    place(&loaded, &spec).expect("placed").remove(0)
}

/// A service of two CPU replicas of one small keyword index, named "i".
fn two_replicas() -> Service {
    let replica = cpu_replica();
    let replicas = vec![Arc::clone(&replica), replica];
    Service::new(vec![("i".into(), replicas)], BatchPolicy::default()).expect("service")
}

#[test]
fn whole_batches_answer_as_single_queries_do() {
    let service = two_replicas();
    let raw = ["4 8", "1", "9", "1 2 4 7 8", "8"];
    let parse = |q: &str| {
        service
            .parse("i", &serde_json::json!(q), &Options::new())
            .expect("query")
    };
    let singles: Vec<Answer> = raw
        .iter()
        .map(|q| service.submit_one("i", parse(q), 3, None).expect("queued"))
        .map(|t| t.wait().expect("answer"))
        .collect();
    // the queries in wholes of two, all queued before any is waited for
    let tickets: Vec<_> = raw
        .chunks(2)
        .map(|part| {
            let queries: Vec<Prepared> = part.iter().map(|q| parse(q)).collect();
            service
                .run_whole("i", queries.len(), move |replica| {
                    let requests: Vec<Request<'_>> = queries
                        .iter()
                        .map(|q| Request {
                            query: q.as_ref(),
                            k: 3,
                            min_count: None,
                            filter: None,
                        })
                        .collect();
                    replica.search(&requests)
                })
                .expect("queued")
        })
        .collect();
    let wholes: Vec<Answer> = tickets
        .into_iter()
        .flat_map(|t| t.wait().expect("run").expect("searched"))
        .collect();
    assert_eq!(wholes.len(), singles.len());
    for (w, s) in wholes.iter().zip(&singles) {
        assert_eq!(w.hits, s.hits);
    }
    let stats = &service.stats()[0];
    assert_eq!(stats.queries, 2 * raw.len() as u64);
    assert_eq!(stats.batches as usize, raw.len() + raw.chunks(2).count());
}

#[test]
fn a_whole_batch_that_panics_fails_alone_and_a_closed_service_refuses() {
    let service = two_replicas();
    let ticket = service
        .run_whole("i", 1, |_| -> u32 { panic!("on purpose") })
        .expect("queued");
    assert!(matches!(ticket.wait(), Err(SearchError::Failed(_))));
    let fine = service
        .run_whole("i", 1, |r| r.num_objects())
        .expect("queued");
    assert_eq!(fine.wait().expect("run"), 4);
    assert!(matches!(
        service.run_whole("nope", 1, |r| r.num_objects()),
        Err(SearchError::UnknownIndex(_))
    ));
    service.shutdown();
    assert!(matches!(
        service.run_whole("i", 1, |r| r.num_objects()),
        Err(SearchError::ShutDown)
    ));
}

#[test]
fn batch_size_buckets() {
    assert_eq!(size_bucket(1), 0);
    assert_eq!(size_bucket(2), 1);
    assert_eq!(size_bucket(3), 2);
    assert_eq!(size_bucket(4), 2);
    assert_eq!(size_bucket(1024), 10);
    assert_eq!(size_bucket(1025), 11);
    assert_eq!(size_bucket(usize::MAX), SIZE_BUCKETS - 1);
}

/// A replica that says it is on a GPU and, as the GPU backend does, holds its device (a lock
/// shared by its runners) while it works on all the threads it has.
struct LockedGpu {
    inner: Arc<dyn KindIndex>,
    ordinal: usize,
    device: Arc<std::sync::Mutex<()>>,
    threads: Arc<std::sync::Mutex<Vec<String>>>,
}

impl KindIndex for LockedGpu {
    fn kind(&self) -> &str {
        self.inner.kind()
    }
    fn num_objects(&self) -> u64 {
        self.inner.num_objects()
    }
    fn backend_name(&self) -> String {
        format!("fake GPU {}", self.ordinal)
    }
    fn parse(&self, raw: &serde_json::Value, options: &Options) -> Result<Prepared, DataError> {
        self.inner.parse(raw, options)
    }
    fn items(&self, query: &(dyn std::any::Any + Send + Sync)) -> usize {
        self.inner.items(query)
    }
    fn search(&self, batch: &[Request<'_>]) -> Result<Vec<Answer>, DataError> {
        use rayon::prelude::*;
        let _device = self.device.lock().unwrap_or_else(|e| e.into_inner());
        let name = std::thread::current().name().unwrap_or("").to_string();
        self.threads
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(name);
        // a parallel loop while the device is held: a worker waiting in it may take other work
        let spin: u64 = (0..64u64)
            .into_par_iter()
            .map(|i| {
                std::thread::sleep(Duration::from_micros(200));
                i
            })
            .sum();
        assert_eq!(spin, 64 * 63 / 2);
        self.inner.search(batch)
    }
    fn gpu_ordinal(&self) -> Option<usize> {
        Some(self.ordinal)
    }
}

#[test]
fn runners_of_several_gpus_search_on_pools_of_their_own_without_deadlock() {
    let cpu = cpu_replica();
    let threads = Arc::new(std::sync::Mutex::new(Vec::new()));
    let replicas: Vec<Arc<dyn KindIndex>> = (0..2)
        .map(|ordinal| {
            Arc::new(LockedGpu {
                inner: Arc::clone(&cpu),
                ordinal,
                device: Arc::new(std::sync::Mutex::new(())),
                threads: Arc::clone(&threads),
            }) as Arc<dyn KindIndex>
        })
        .collect();
    let policy = BatchPolicy {
        max_batch: 2,
        gpu_pipeline: 2,
        own_threads: true,
        ..BatchPolicy::default()
    };
    let service = Service::new(vec![("i".into(), replicas)], policy).expect("service");
    let want = cpu
        .search(&[Request {
            query: cpu
                .parse(&serde_json::json!("4 8"), &Options::new())
                .expect("q")
                .as_ref(),
            k: 3,
            min_count: None,
            filter: None,
        }])
        .expect("cpu");
    let (tx, rx) = std::sync::mpsc::channel();
    let svc = service.clone();
    std::thread::spawn(move || {
        for _ in 0..20 {
            let queries = (0..16)
                .map(|_| {
                    let q = svc.parse("i", &serde_json::json!("4 8"), &Options::new());
                    (q.expect("query"), 3, None)
                })
                .collect();
            for t in svc.submit("i", queries).expect("queued") {
                let _ = tx.send(t.wait().map(|a| a.hits));
            }
        }
    });
    for _ in 0..20 * 16 {
        // a deadlock would leave the tickets unanswered: bounded, so the test fails instead
        let hits = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("an answer within a minute")
            .expect("searched");
        assert_eq!(hits, want[0].hits);
    }
    let threads = threads.lock().unwrap_or_else(|e| e.into_inner()).clone();
    assert!(
        threads.iter().all(|t| t.starts_with("genie-gpu")),
        "{threads:?}"
    );
    service.shutdown();
}
