#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| genie_fuzz::csv_table(data));
