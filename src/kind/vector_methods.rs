//! The [`KindIndex`](super::KindIndex) methods that the two vector index kinds share.

/// The [`KindIndex`] methods the two vector index kinds share (`vectors` of an LSH family, of a
/// codebook), written once over the type's `index` (a [`genie_lsh::Searched`]) and its
/// `search_among(batch, allowed)`.
macro_rules! searched_vector_methods {
    () => {
        fn kind(&self) -> &str {
            "vectors"
        }

        fn num_objects(&self) -> u64 {
            genie_lsh::Searched::objects(&self.index) as u64
        }

        fn backend_name(&self) -> String {
            genie_lsh::Searched::engine(&self.index)
                .backend_name()
                .to_string()
        }

        fn search(&self, batch: &[Request<'_>]) -> Result<Vec<Answer>, DataError> {
            let rows = genie_lsh::Searched::objects(&self.index);
            super::count::by_row_mask(batch, rows, |part, allowed| {
                self.search_among(part, allowed)
            })
        }

        fn take_stage_times(&self) -> Option<genie_core::StageTimes> {
            genie_lsh::Searched::engine(&self.index).take_stage_times()
        }

        fn take_search_stages(&self) -> Vec<(&'static str, f64)> {
            genie_lsh::Searched::take_stages(&self.index).named()
        }

        fn gpu_ordinal(&self) -> Option<usize> {
            genie_lsh::Searched::engine(&self.index).gpu_ordinal()
        }
    };
}
