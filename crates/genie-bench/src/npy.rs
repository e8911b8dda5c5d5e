//! NumPy `.npy` files: the reader and writer of the `genie` library ([`genie::npy`]), used here
//! to hand an index, its queries and genie's hits to a peer written with NumPy or PyTorch
//! ([`crate::dump`]) and to write the keyword objects of `--mode write-keywords`.

pub use genie::npy::*;
