//! The service's tests: whole batches, panics, batch sizes.

use super::*;
use crate::core::DeviceChoice;
use crate::kind::keywords::build_csr;
use crate::open::in_memory;

/// A service of two CPU replicas of one small keyword index, named "i".
fn two_replicas() -> Service {
    let index = build_csr(&[0, 3, 3, 7, 9], &[1, 4, 7, 2, 4, 4, 8, 8, 1], "mem").expect("x");
    let loaded = in_memory(&Registry::default(), index, Path::new("mem")).expect("kind");
    let spec = OpenSpec {
        device: DeviceChoice::Cpu,
        ..OpenSpec::default()
    };
    let replica = place(&loaded, &spec).expect("placed").remove(0);
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
