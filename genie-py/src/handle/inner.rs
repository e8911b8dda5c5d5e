//! What the Python methods of [`Handle`] share: placement on devices, the live index behind a
//! handle, searches through the services, and the checks of their arguments.

#![allow(clippy::wildcard_imports)]

use super::*;

impl Handle {
    pub(super) fn new(loaded: Loaded, in_memory: bool) -> Self {
        Self {
            kind: Arc::clone(&loaded.kind),
            metadata: loaded.source.metadata.clone(),
            path: loaded.source.path.clone(),
            source: RwLock::new(Some(Source::Loaded(loaded))),
            in_memory,
            live: false,
            writable: false,
            placed: Mutex::new(Vec::new()),
            timings: Mutex::new(Vec::new()),
        }
    }

    /// The handle of a live index, writable or not.
    pub(super) fn of_live(live: Arc<LiveIndex>, writable: bool) -> Result<Self, DataError> {
        let kind = Arc::clone(Registry::default().get(live.kind())?);
        let manifest = Manifest::read(live.dir())?;
        Ok(Self {
            kind,
            metadata: serde_json::from_str(&manifest.metadata).unwrap_or_default(),
            path: live.dir().to_path_buf(),
            source: RwLock::new(Some(Source::Live(live))),
            in_memory: false,
            live: true,
            writable,
            placed: Mutex::new(Vec::new()),
            timings: Mutex::new(Vec::new()),
        })
    }

    /// `f` of the index, unless it is closed.
    pub(super) fn with_source<T>(
        &self,
        f: impl FnOnce(&Source) -> Result<T, DataError>,
    ) -> Result<T, DataError> {
        let source = self.source.read().unwrap_or_else(|e| e.into_inner());
        f(source.as_ref().ok_or_else(closed)?)
    }

    /// The live index to write to, or why this index takes no writes.
    pub(super) fn writer(&self) -> Result<Arc<LiveIndex>, DataError> {
        let path = self.path.display();
        self.with_source(|source| match source {
            Source::Live(live) if self.writable => Ok(Arc::clone(live)),
            Source::Live(_) => Err(DataError::Unsupported(format!(
                "{path}: the live index was opened read-only: open it with \
                 genie.load(path, writable=True) to write to it"
            ))),
            Source::Loaded(_) if self.in_memory => Err(DataError::Unsupported(format!(
                "{path}: an index built in memory takes no writes: make a live index \
                 (genie.Index.create_live), or save this one and open the file with \
                 genie.load(path, writable=True)"
            ))),
            Source::Loaded(_) => Err(DataError::Unsupported(format!(
                "{path}: an index file opened read-only takes no writes: open it with \
                 genie.load(path, writable=True) to write to its live index ({})",
                LiveIndex::folder_of(&self.path).display()
            ))),
        })
    }

    /// The live index, writable or not.
    pub(super) fn live_index(&self) -> Result<Arc<LiveIndex>, DataError> {
        self.with_source(|source| match source {
            Source::Live(live) => Ok(Arc::clone(live)),
            Source::Loaded(_) => Err(DataError::Unsupported(format!(
                "{}: not a live index",
                self.path.display()
            ))),
        })
    }

    /// Stops the searches' services and lets go of the index; a live index's files (its log's
    /// lock) are released when this returns, unless its background work holds them past
    /// [`RELEASE_WAIT`].
    pub(super) fn release(&self) {
        let source = self
            .source
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let live: Option<Weak<LiveIndex>> = match &source {
            Some(Source::Live(live)) => Some(Arc::downgrade(live)),
            _ => None,
        };
        drop(source);
        let services = std::mem::take(&mut *self.placed.lock().unwrap_or_else(|e| e.into_inner()));
        for (_, service) in &services {
            service.shutdown();
        }
        drop(services);
        if let Some(live) = live {
            let start = Instant::now();
            while live.strong_count() > 0 && start.elapsed() < RELEASE_WAIT {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
    }

    pub(super) fn set_timings(&self, stages: Vec<(&'static str, f64)>, append: bool) {
        if let Ok(mut t) = self.timings.lock() {
            if !append {
                t.clear();
            }
            t.extend(stages);
        }
    }

    /// The service of the index placed for `device` (placed now if it was not yet); its one
    /// index is named [`NAME`].
    pub(super) fn placed(&self, device: Option<&str>) -> Result<Service, DataError> {
        let spec = spec_of(device)?;
        let key = format!("{:?} {:?}", spec.device, spec.devices);
        let mut placed = self
            .placed
            .lock()
            .map_err(|_| DataError::Unsupported("a search panicked on this index".into()))?;
        if let Some((_, service)) = placed.iter().find(|(k, _)| *k == key) {
            return Ok(service.clone());
        }
        let replicas = self.with_source(|source| match source {
            Source::Loaded(loaded) => open::place(loaded, &spec),
            Source::Live(live) => place_live(live, &spec),
        })?;
        if replicas.is_empty() {
            return Err(DataError::Unsupported("no device to search on".into()));
        }
        let service = Service::new(vec![(NAME.into(), replicas)], BatchPolicy::default())?;
        placed.push((key, service.clone()));
        Ok(service)
    }

    /// Parses queries `0..n` with `parse` and hands them to the service `CHUNK` at a time, as
    /// requests for `k` hits of the objects `filter` lets through (applied by the search before
    /// its top-k), each chunk searched whole by `search` on a replica while the next is parsed;
    /// the chunks' results in order, with parse and search timed for `last_timings`. A chunk's
    /// output buffers are made by `buffers` (given its number of queries) here, on the caller's
    /// thread, whose allocator keeps the pages of the last search's buffers for the next: made on
    /// a runner they would be fresh pages each time.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn in_chunks<F, B, T, S>(
        &self,
        service: &Service,
        n: usize,
        parse: &F,
        k: u32,
        min_count: Option<u32>,
        filter: Option<&Arc<Filter>>,
        buffers: impl Fn(usize) -> B,
        search: S,
    ) -> Result<Vec<T>, DataError>
    where
        F: Fn(&dyn KindIndex, usize) -> Result<Prepared, DataError> + Send + Sync,
        B: Send + 'static,
        T: Send + 'static,
        S: Fn(&dyn KindIndex, &[Request<'_>], B) -> Result<T, DataError> + Send + Sync + 'static,
    {
        let index = service.index(NAME).map_err(from_service)?;
        index.take_stage_times(); // (counted from here)
        let start_all = Instant::now();
        let search = Arc::new(search);
        let mut parse_ms = 0.0;
        let mut tickets = Vec::new();
        for start in (0..n).step_by(CHUNK) {
            let end = (start + CHUNK).min(n);
            let t = Instant::now();
            // parsed on all cores; the first bad query in order is the one reported
            let queries = (start..end)
                .into_par_iter()
                .map(|i| parse(index.as_ref(), i))
                .collect::<Vec<_>>()
                .into_iter()
                .collect::<Result<Vec<_>, _>>()?;
            parse_ms += ms(t.elapsed());
            let search = Arc::clone(&search);
            let out = buffers(end - start);
            let filter = filter.cloned();
            let work = move |replica: &dyn KindIndex| {
                let batch: Vec<Request<'_>> = queries
                    .iter()
                    .map(|q| Request {
                        query: q.as_ref(),
                        k,
                        min_count,
                        filter: filter.as_deref(),
                    })
                    .collect();
                search(replica, &batch, out)
            };
            let ticket = service.run_whole(NAME, end - start, work);
            tickets.push(ticket.map_err(from_service)?);
        }
        let results = tickets
            .into_iter()
            .map(|t| t.wait().map_err(from_service)?)
            .collect::<Result<Vec<T>, DataError>>()?;
        let search_ms = ms(start_all.elapsed()) - parse_ms;
        self.set_timings(stages_of(index.as_ref(), parse_ms, search_ms), false);
        Ok(results)
    }

    /// Parses the queries with `parse` and searches them on `device`, `CHUNK` at a time, the
    /// GIL released throughout.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn answers<F>(
        &self,
        py: Python<'_>,
        n: usize,
        parse: F,
        k: u32,
        min_count: Option<u32>,
        filter: Option<&Arc<Filter>>,
        device: Option<&str>,
    ) -> PyResult<Vec<Answer>>
    where
        F: Fn(&dyn KindIndex, usize) -> Result<Prepared, DataError> + Send + Sync,
    {
        py.detach(|| {
            let service = self.placed(device)?;
            let search = |replica: &dyn KindIndex, batch: &[Request<'_>], ()| replica.search(batch);
            let chunks =
                self.in_chunks(&service, n, &parse, k, min_count, filter, |_| (), search)?;
            Ok(chunks.into_iter().flatten().collect())
        })
        .map_err(to_py)
    }

    /// The answers of `n` queries parsed by `parse`: arrays, or the JSON lines of `genie search`;
    /// arrays of count hits are written by the search itself (no answer objects between) unless
    /// a filter is given (the columns path takes none). Arrays have `min(k, number of objects)`
    /// columns.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn search_out<'py, F>(
        &self,
        py: Python<'py>,
        n: usize,
        parse: F,
        k: u64,
        min_count: Option<u32>,
        filter: Option<Arc<Filter>>,
        device: Option<&str>,
        json: bool,
    ) -> PyResult<Bound<'py, PyAny>>
    where
        F: Fn(&dyn KindIndex, usize) -> Result<Prepared, DataError> + Send + Sync,
    {
        // a k beyond the objects gives what k = the number of objects gives, and costs no more
        let k = py
            .detach(|| self.placed(device)?.index(NAME).map_err(from_service))
            .map_err(to_py)?
            .num_objects()
            .min(k)
            .min(u64::from(u32::MAX)) as u32;
        if !json && min_count.is_none() && filter.is_none() {
            if let Some((counts, ids)) = self.columns(py, n, &parse, k as usize, device)? {
                let t = Instant::now();
                let k = k as usize;
                let out = (
                    rows(n, k, counts)?.into_pyarray(py),
                    rows(n, k, ids)?.into_pyarray(py),
                    None::<Bound<'py, PyAny>>,
                    None::<Vec<bool>>,
                )
                    .into_pyobject(py)?
                    .into_any();
                self.set_timings(vec![("output", ms(t.elapsed()))], true);
                return Ok(out);
            }
        }
        let answers = self.answers(py, n, parse, k, min_count, filter.as_ref(), device)?;
        self.output(py, &answers, k, json)
    }

    /// Count hits searched straight into `(counts, ids)` columns (`n x k`, row by row; 0 and -1
    /// past a query's hits), when the index has such a path ([`KindIndex::has_columns`]).
    pub(super) fn columns<F>(
        &self,
        py: Python<'_>,
        n: usize,
        parse: &F,
        k: usize,
        device: Option<&str>,
    ) -> PyResult<Option<(Vec<u32>, Vec<i64>)>>
    where
        F: Fn(&dyn KindIndex, usize) -> Result<Prepared, DataError> + Send + Sync,
    {
        py.detach(|| {
            let service = self.placed(device)?;
            if !service.index(NAME).map_err(from_service)?.has_columns() {
                return Ok(None);
            }
            n.checked_mul(k).ok_or_else(|| DataError::BadOption {
                name: "k".into(),
                message: format!("{n} queries x k {k} hits do not fit in memory"),
            })?;
            let buffers = |rows: usize| (vec![0u32; rows * k], vec![-1i64; rows * k]);
            let search = move |replica: &dyn KindIndex, batch: &[Request<'_>], out| {
                let (mut counts, mut ids): (Vec<u32>, Vec<i64>) = out;
                let done = replica.search_columns(batch, k, &mut counts, &mut ids)?;
                Ok(done.then_some((counts, ids)))
            };
            let chunks =
                self.in_chunks(&service, n, parse, k as u32, None, None, buffers, search)?;
            // one chunk's columns are the whole answer; more are joined in order
            let mut joined: Option<(Vec<u32>, Vec<i64>)> = None;
            for chunk in chunks {
                let Some((counts, ids)) = chunk else {
                    return Ok(None);
                };
                match &mut joined {
                    None => joined = Some((counts, ids)),
                    Some((c, i)) => {
                        c.extend_from_slice(&counts);
                        i.extend_from_slice(&ids);
                    }
                }
            }
            Ok(Some(joined.unwrap_or_default()))
        })
        .map_err(to_py)
    }

    /// Searches `n` queries given in the kind's raw form by `raw` (query `i`'s JSON value),
    /// parsed under the kind's search `options` (JSON text of an object).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn search_raw<'py>(
        &self,
        py: Python<'py>,
        n: usize,
        raw: impl Fn(usize) -> Result<Value, DataError> + Send + Sync,
        k: u64,
        min_count: Option<u32>,
        filter: Option<Arc<Filter>>,
        device: Option<&str>,
        options: &str,
        json: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let options = options_of(options).map_err(to_py)?;
        let parse = |index: &dyn KindIndex, i: usize| -> Result<Prepared, DataError> {
            let raw = raw(i).map_err(|e| at_query(i, e))?;
            index.parse(&raw, &options).map_err(|e| at_query(i, e))
        };
        self.search_out(py, n, parse, k, min_count, filter, device, json)
    }

    /// The answers as arrays, or as the JSON lines of `genie search`.
    pub(super) fn output<'py>(
        &self,
        py: Python<'py>,
        answers: &[Answer],
        k: u32,
        json: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let t = Instant::now();
        let out = if json {
            answer_lines(answers, 0).into_pyobject(py)?.into_any()
        } else {
            answer_arrays(py, answers, k as usize)?.into_any()
        };
        self.set_timings(vec![("output", ms(t.elapsed()))], true);
        Ok(out)
    }
}

/// The host's stages of a search and the device's since the last call.
pub(super) fn stages_of(
    index: &dyn KindIndex,
    parse_ms: f64,
    search_ms: f64,
) -> Vec<(&'static str, f64)> {
    let mut stages = vec![("parse", parse_ms), ("search", search_ms)];
    if let Some(d) = index.take_stage_times() {
        stages.extend([
            ("device_transfer_in", d.transfer_in_ms),
            ("device_match", d.match_ms),
            ("device_select", d.select_ms),
            ("device_transfer_out", d.transfer_out_ms),
            ("host_plan", d.host_plan_ms),
            ("host_launch", d.host_launch_ms),
            ("host_finish", d.host_finish_ms),
        ]);
    }
    stages
}

/// The name of a placement's one index in its [`Service`].
pub(super) const NAME: &str = "index";

/// A service's error as the index's: what the search itself said, else why it was not searched.
pub(super) fn from_service(e: SearchError) -> DataError {
    match e {
        SearchError::BadQuery(e) => e,
        other => DataError::Unsupported(other.to_string()),
    }
}

pub(super) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The message of a bad query `i`, as the `genie` program says it for a line of a file.
pub(super) fn at_query(i: usize, e: DataError) -> DataError {
    DataError::BadQuery(format!("query {i}: {e}"))
}

/// Options of a kind from their JSON text (`{}` or empty is none).
pub fn options_of(json: &str) -> Result<Options, DataError> {
    if json.trim().is_empty() {
        return Ok(Options::new());
    }
    let value: Value = serde_json::from_str(json).map_err(|e| DataError::BadOption {
        name: "options".into(),
        message: e.to_string(),
    })?;
    Options::from_json(&value)
}

/// The filter of a search's `filter` (the ids it may return) and `exclude` (the ids it may
/// not); `None` when neither is given.
pub(super) fn filter_of(
    filter: Option<&Bound<'_, PyAny>>,
    exclude: Option<&Bound<'_, PyAny>>,
    condition: Option<String>,
) -> PyResult<Option<Arc<Filter>>> {
    let ids = |a: &Bound<'_, PyAny>, what: &str| -> PyResult<Vec<u64>> {
        Ok(Ints::of(a, what)?.as_u64(what, "id")?.into_owned())
    };
    let allow = filter.map(|f| ids(f, "filter")).transpose()?;
    let deny = exclude.map(|e| ids(e, "exclude")).transpose()?;
    if allow.is_none() && deny.is_none() && condition.is_none() {
        return Ok(None);
    }
    let f = Filter::new(allow, deny.unwrap_or_default());
    Ok(Some(Arc::new(match condition {
        Some(c) => f.with_condition(c),
        None => f,
    })))
}

/// Checks that `offsets` are a CSR's offsets into `items` values (named `what` in errors):
/// ascending from 0 to `items`.
pub(super) fn check_offsets(offsets: &[u64], items: usize, what: &str) -> PyResult<()> {
    if offsets.is_empty() {
        return Err(value_error(
            "offsets: expected at least one offset (0), found none",
        ));
    }
    if offsets[0] != 0 || offsets[offsets.len() - 1] != items as u64 {
        return Err(value_error(format!(
            "offsets: expected ascending offsets from 0 to the number of {what} ({items})"
        )));
    }
    if let Some(w) = offsets.windows(2).find(|w| w[0] > w[1]) {
        return Err(value_error(format!(
            "offsets: not ascending: {} then {}",
            w[0], w[1]
        )));
    }
    Ok(())
}

/// The ids of objects to add (`ids`, a 1-D integer array), one per object of `n`: each
/// below 2^63, since answers give ids as int64.
pub(super) fn object_ids(ids: &Bound<'_, PyAny>, n: usize) -> PyResult<Vec<u64>> {
    let ids = Ints::of(ids, "ids")?.as_u64("ids", "id")?.into_owned();
    if ids.len() != n {
        return Err(value_error(format!(
            "ids: {} ids for {n} objects: expected one id per object",
            ids.len()
        )));
    }
    if let Some((i, id)) = ids.iter().enumerate().find(|(_, &id)| id > MAX_ID) {
        return Err(value_error(format!(
            "ids: id {i} is {id}: expected an id below 2^63 (answers give ids as int64)"
        )));
    }
    Ok(ids)
}
