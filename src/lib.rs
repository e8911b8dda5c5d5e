pub use genie_core as core;
