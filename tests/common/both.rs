//! An index searched on the CPU and, where there is a GPU, on the GPU too: every batch's
//! answers must be the same on both (the CPU's are returned). Without a GPU the reason is
//! printed once and the CPU alone answers.

#![allow(dead_code)] // each test file uses its part

use genie::core::{DeviceChoice, StageTimes};
use genie::data_error::DataError;
use genie::kind::{Answer, Filter, KindIndex, Options, Prepared, Request};
use genie::live::{place_live, LiveIndex};
use genie::open::{Loaded, OpenSpec};
use serde_json::Value;
use std::any::Any;
use std::sync::{Arc, Once};

/// The CPU replica and, with a GPU, the GPU replica of one index.
pub struct Both {
    cpu: Arc<dyn KindIndex>,
    gpu: Option<Arc<dyn KindIndex>>,
}

fn spec(device: DeviceChoice) -> OpenSpec {
    OpenSpec {
        device,
        devices: (device == DeviceChoice::Gpu).then(|| vec![0]),
        ..OpenSpec::default()
    }
}

fn gpu_or_say<T>(placed: Result<Vec<T>, DataError>) -> Option<T> {
    static SAID: Once = Once::new();
    match placed {
        Ok(mut v) => Some(v.remove(0)),
        Err(e) => {
            SAID.call_once(|| eprintln!("GPU side skipped: {e}"));
            None
        }
    }
}

impl Both {
    /// A live index on both devices.
    pub fn live(live: &Arc<LiveIndex>) -> Arc<dyn KindIndex> {
        Arc::new(Self {
            cpu: place_live(live, &spec(DeviceChoice::Cpu))
                .expect("placed")
                .remove(0),
            gpu: gpu_or_say(place_live(live, &spec(DeviceChoice::Gpu))),
        })
    }

    /// An index file on both devices.
    pub fn file(loaded: &Loaded) -> Arc<dyn KindIndex> {
        Arc::new(Self {
            cpu: genie::open::place(loaded, &spec(DeviceChoice::Cpu))
                .expect("placed")
                .remove(0),
            gpu: gpu_or_say(genie::open::place(loaded, &spec(DeviceChoice::Gpu))),
        })
    }
}

impl KindIndex for Both {
    fn kind(&self) -> &str {
        self.cpu.kind()
    }

    fn num_objects(&self) -> u64 {
        self.cpu.num_objects()
    }

    fn backend_name(&self) -> String {
        self.cpu.backend_name()
    }

    fn check_filter(&self, filter: &Filter) -> Result<(), DataError> {
        self.cpu.check_filter(filter)
    }

    fn parse(&self, raw: &Value, options: &Options) -> Result<Prepared, DataError> {
        self.cpu.parse(raw, options)
    }

    fn items(&self, query: &(dyn Any + Send + Sync)) -> usize {
        self.cpu.items(query)
    }

    fn search(&self, batch: &[Request<'_>]) -> Result<Vec<Answer>, DataError> {
        let on_cpu = self.cpu.search(batch);
        if let Some(gpu) = &self.gpu {
            let on_gpu = gpu.search(batch);
            match (&on_cpu, &on_gpu) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "the GPU and the CPU answer differently"),
                (Err(_), Err(_)) => {}
                _ => panic!("one device failed: CPU {on_cpu:?}, GPU {on_gpu:?}"),
            }
        }
        on_cpu
    }

    fn take_stage_times(&self) -> Option<StageTimes> {
        None
    }
}
